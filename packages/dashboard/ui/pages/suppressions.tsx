import type { Suppression, SuppressionCheck, SuppressionReason } from '@mailwarden/core';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api, ApiError } from '../api.js';
import { Pager, usePages } from '../components/pager.js';
import { Empty, Failure, Loading } from '../components/states.js';
import { formatTime } from '../format.js';
import { asApiError, useLoad } from '../load.js';

const PAGE_SIZE = 50;

const reasonLabels: Record<SuppressionReason, string> = {
  hard_bounce: 'Hard bounce',
  complaint: 'Complaint',
  manual: 'Manual',
};

/** The suppression list, newest first: check an address, add one by hand, remove one after a confirmation. */
export function SuppressionsPage({ api }: { api: Api }) {
  // Bumped after a change, so the list shows it at once.
  const [version, setVersion] = useState(0);
  const [notice, setNotice] = useState('');
  const changed = (message: string) => {
    setNotice(message);
    setVersion((value) => value + 1);
  };
  return (
    <>
      <h1>Suppressions</h1>
      <p class="lead">Addresses on this list are held back from sending. Hard bounces and complaints are added automatically.</p>
      <div class="tools">
        <CheckForm api={api} />
        <AddForm api={api} onAdded={changed} />
      </div>
      <p class="notice" role="status">
        {notice}
      </p>
      <SuppressionList api={api} version={version} onRemoved={changed} />
    </>
  );
}

type Outcome<T> = { state: 'idle' } | { state: 'busy' } | { state: 'done'; value: T } | { state: 'failed'; error: ApiError };

/** Runs one submission at a time and keeps its outcome for the form to show. */
function useSubmission<T>(): [Outcome<T>, (run: () => Promise<T>) => Promise<void>] {
  const [outcome, setOutcome] = useState<Outcome<T>>({ state: 'idle' });
  const submit = async (run: () => Promise<T>) => {
    setOutcome({ state: 'busy' });
    try {
      setOutcome({ state: 'done', value: await run() });
    } catch (error) {
      setOutcome({ state: 'failed', error: asApiError(error) });
    }
  };
  return [outcome, submit];
}

function CheckForm({ api }: { api: Api }) {
  const [email, setEmail] = useState('');
  const [outcome, submit] = useSubmission<SuppressionCheck>();
  return (
    <form
      class="tool"
      aria-labelledby="check-title"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void submit(() => api.suppressions.check(email));
      }}
    >
      <h2 id="check-title">Check an address</h2>
      <div class="field">
        <label for="check-email">Email to check</label>
        <input id="check-email" type="email" required value={email} spellcheck={false} autoComplete="off" onInput={(event) => setEmail(event.currentTarget.value)} />
      </div>
      <button type="submit" disabled={outcome.state === 'busy'}>
        Check
      </button>
      {outcome.state === 'done' ? (
        <p class="result" role="status">
          <bdi class="literal">{outcome.value.email}</bdi>{' '}
          {outcome.value.suppressed
            ? `is suppressed: ${reasonLabels[outcome.value.reason]}, since ${formatTime(outcome.value.created_at)}.`
            : 'is not suppressed.'}
        </p>
      ) : outcome.state === 'failed' ? (
        <Failure error={outcome.error} doing="check the address" />
      ) : null}
    </form>
  );
}

function AddForm({ api, onAdded }: { api: Api; onAdded(message: string): void }) {
  const [email, setEmail] = useState('');
  const [outcome, submit] = useSubmission<void>();
  return (
    <form
      class="tool"
      aria-labelledby="add-title"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void submit(async () => {
          const { suppression, created } = await api.suppressions.add(email);
          setEmail('');
          onAdded(
            created
              ? `Added ${suppression.email} to the suppression list.`
              : `${suppression.email} was already suppressed (${reasonLabels[suppression.reason]}); nothing changed.`,
          );
        });
      }}
    >
      <h2 id="add-title">Add a suppression</h2>
      <div class="field">
        <label for="add-email">Email to suppress</label>
        <input id="add-email" type="email" required value={email} spellcheck={false} autoComplete="off" onInput={(event) => setEmail(event.currentTarget.value)} />
      </div>
      <button type="submit" disabled={outcome.state === 'busy'}>
        Add
      </button>
      {outcome.state === 'failed' ? <Failure error={outcome.error} doing="add the address" /> : null}
    </form>
  );
}

function SuppressionList({ api, version, onRemoved }: { api: Api; version: number; onRemoved(message: string): void }) {
  const pages = usePages(String(version));
  const [removing, setRemoving] = useState<Suppression>();
  const listing = useLoad((signal) => api.suppressions.list({ limit: PAGE_SIZE, cursor: pages.cursor }, signal), [api, version, pages.cursor]);
  if (listing.state === 'loading') return <Loading>Loading suppressions…</Loading>;
  if (listing.state === 'failed') return <Failure error={listing.error} retry={listing.reload} doing="load the suppressions" />;
  const { items, next_cursor } = listing.data;
  if (items.length === 0 && pages.number === 1) return <Empty>The suppression list is empty.</Empty>;
  return (
    <>
      <div class="table-scroll">
        <table class="suppressions">
          <caption>Suppressed addresses, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Reason</th>
              <th scope="col">Since</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((suppression) => (
              <tr key={suppression.hash}>
                <th scope="row" class="literal">
                  <bdi>{suppression.email}</bdi>
                </th>
                <td>
                  <span class={`reason reason-${suppression.reason}`}>{reasonLabels[suppression.reason]}</span>
                </td>
                <td>
                  <time dateTime={suppression.created_at}>{formatTime(suppression.created_at)}</time>
                </td>
                <td class="actions">
                  <button type="button" class="quiet" onClick={() => setRemoving(suppression)}>
                    Remove<span class="visually-hidden"> {suppression.email}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager pages={pages} nextCursor={next_cursor} label="Pages of suppressions" />
      {removing === undefined ? null : (
        <RemoveDialog
          api={api}
          suppression={removing}
          onClose={(removed) => {
            setRemoving(undefined);
            if (removed) onRemoved(`Removed ${removing.email} from the suppression list.`);
          }}
        />
      )}
    </>
  );
}

/** A modal confirmation (native `<dialog>`: focus stays inside, Escape cancels). */
function RemoveDialog({ api, suppression, onClose }: { api: Api; suppression: Suppression; onClose(removed: boolean): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [outcome, submit] = useSubmission<void>();
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} aria-labelledby="remove-title" aria-describedby="remove-description" onClose={() => onClose(outcome.state === 'done')}>
      <h2 id="remove-title">Remove this suppression?</h2>
      <p id="remove-description">
        <bdi class="literal">{suppression.email}</bdi> ({reasonLabels[suppression.reason]}) will no longer be held back from sending.
      </p>
      {outcome.state === 'failed' ? <Failure error={outcome.error} doing="remove the suppression" /> : null}
      <div class="dialog-buttons">
        <button
          type="button"
          class="danger"
          disabled={outcome.state === 'busy'}
          onClick={() =>
            void submit(async () => {
              await api.suppressions.remove(suppression.hash);
              onClose(true);
            })
          }
        >
          Remove
        </button>
        <button type="button" onClick={() => dialog.current?.close()}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
