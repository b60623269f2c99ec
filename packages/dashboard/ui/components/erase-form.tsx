import type { Erasure } from '@mailwarden/core';
import { useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { useSubmission } from '../data/submission.js';
import { formatCount } from '../format.js';
import { ConfirmDialog } from './confirm-dialog.js';
import { Failure } from './states.js';

const plural = (count: number, one: string, many: string) => `${formatCount(count)} ${count === 1 ? one : many}`;

/**
 * "Erase an address" (scope `admin`; docs/dashboard.md, "Erasure"): a recipient's request to be
 * forgotten. Asks for the address, then confirms what goes and what stays (docs/decisions.md,
 * "Erasure"), then shows what remains: the placeholder its suppressions show and the counts deleted.
 */
export function EraseForm({ api, onErased }: { api: Api; onErased(): void }) {
  const [email, setEmail] = useState('');
  const [confirming, setConfirming] = useState<string>();
  const [outcome, submit] = useSubmission<Erasure>();
  return (
    <form
      class="tool"
      aria-labelledby="erase-title"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        if (email.trim() !== '') setConfirming(email.trim());
      }}
    >
      <h2 id="erase-title">Erase an address</h2>
      <div class="field">
        <label for="erase-email">Email to erase</label>
        <input
          id="erase-email"
          type="email"
          required
          value={email}
          spellcheck={false}
          autoComplete="off"
          aria-describedby="erase-hint"
          onInput={(event) => setEmail(event.currentTarget.value)}
        />
        <span class="note" id="erase-hint">
          A recipient’s request to be forgotten: everything about the address goes, and it stays blocked by its hash.
        </span>
      </div>
      <button type="submit" class="danger" disabled={outcome.state === 'busy'}>
        Erase…
      </button>
      {outcome.state === 'done' ? (
        <div class="result" role="status">
          <ErasureResult erasure={outcome.value} />
        </div>
      ) : outcome.state === 'failed' ? (
        <Failure error={outcome.error} doing="erase the address" />
      ) : null}
      {confirming === undefined ? null : (
        <ConfirmDialog
          title="Erase this address?"
          confirmLabel="Erase"
          danger
          doing="erase the address"
          run={async () => {
            const erasure = await api.erase(confirming);
            // The dialog shows a failure itself; the form keeps only what was done.
            await submit(async () => erasure);
            setEmail('');
            // The form's own result says what was done; the page only lists again (the address is not repeated).
            onErased();
          }}
          onClose={() => setConfirming(undefined)}
        >
          Everything stored about <bdi class="literal">{confirming}</bdi> is deleted: its messages and their timelines, its allowlist entry,
          the changes about it and the address in its suppressions. What stays: its hash, a project-wide suppression of it (shown as{' '}
          <span class="literal">…@erased.invalid</span>, never expiring), so mail to it is still held back, and counts that name no one.
          This cannot be undone.
        </ConfirmDialog>
      )}
    </form>
  );
}

function ErasureResult({ erasure }: { erasure: Erasure }) {
  return (
    <p>
      Erased. The address is kept as <bdi class="literal">{erasure.email}</bdi> (hash{' '}
      <span class="literal">{erasure.hash.slice(0, 16)}…</span>), still suppressed on {plural(erasure.records.length, 'list', 'lists')}.
      Deleted {plural(erasure.messages, 'message', 'messages')} and {plural(erasure.changes, 'change', 'changes')} about it.
    </p>
  );
}
