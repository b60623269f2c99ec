import type { Suppression, SuppressionCheck } from '@mailwarden/core';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api, ApiError } from '../api.js';
import { Pager, usePages } from '../components/pager.js';
import { Empty, Failure, Loading } from '../components/states.js';
import { formatTime } from '../format.js';
import { providerLabels, reasonLabels, sourceLabel } from '../labels.js';
import { asApiError, useLoad } from '../load.js';
import { followLink, pageHref } from '../location.js';

const PAGE_SIZE = 50;

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

/** Runs a submission and keeps its outcome for the form to show; resolves to its value, `undefined` if it failed. */
function useSubmission<T>(): [Outcome<T>, (run: () => Promise<T>) => Promise<T | undefined>] {
  const [outcome, setOutcome] = useState<Outcome<T>>({ state: 'idle' });
  const submit = async (run: () => Promise<T>) => {
    setOutcome({ state: 'busy' });
    try {
      const value = await run();
      setOutcome({ state: 'done', value });
      return value;
    } catch (error) {
      setOutcome({ state: 'failed', error: asApiError(error) });
      return undefined;
    }
  };
  return [outcome, submit];
}

/** A tool of this page: one email field and a button. `run` returns whether to clear the field. */
function EmailForm(props: { name: string; title: string; label: string; button: string; busy: boolean; run(email: string): Promise<boolean>; children: ComponentChildren }) {
  const { name, title, label, button, busy, run, children } = props;
  const [email, setEmail] = useState('');
  return (
    <form
      class="tool"
      aria-labelledby={`${name}-title`}
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void run(email).then((clear) => clear && setEmail(''));
      }}
    >
      <h2 id={`${name}-title`}>{title}</h2>
      <div class="field">
        <label for={`${name}-email`}>{label}</label>
        <input id={`${name}-email`} type="email" required value={email} spellcheck={false} autoComplete="off" onInput={(event) => setEmail(event.currentTarget.value)} />
      </div>
      <button type="submit" disabled={busy}>
        {button}
      </button>
      {children}
    </form>
  );
}

function CheckForm({ api }: { api: Api }) {
  const [outcome, submit] = useSubmission<SuppressionCheck>();
  return (
    <EmailForm
      name="check"
      title="Check an address"
      label="Email to check"
      button="Check"
      busy={outcome.state === 'busy'}
      run={async (email) => {
        await submit(() => api.suppressions.check(email));
        return false;
      }}
    >
      {outcome.state === 'done' ? (
        <div class="result" role="status">
          <p>
            <bdi class="literal">{outcome.value.email}</bdi>{' '}
            {outcome.value.suppressed
              ? `is suppressed: ${reasonLabels[outcome.value.reason]}, since ${formatTime(outcome.value.created_at)}.`
              : 'is not suppressed.'}
          </p>
          {outcome.value.suppressed ? <Provenance suppression={outcome.value} /> : null}
        </div>
      ) : outcome.state === 'failed' ? (
        <Failure error={outcome.error} doing="check the address" />
      ) : null}
    </EmailForm>
  );
}

function AddForm({ api, onAdded }: { api: Api; onAdded(message: string): void }) {
  const [outcome, submit] = useSubmission<boolean>();
  return (
    <EmailForm
      name="add"
      title="Add a suppression"
      label="Email to suppress"
      button="Add"
      busy={outcome.state === 'busy'}
      run={async (email) => {
        const added = await submit(async () => {
          const { suppression, created } = await api.suppressions.add(email);
          onAdded(
            created
              ? `Added ${suppression.email} to the suppression list.`
              : `${suppression.email} was already suppressed (${reasonLabels[suppression.reason]}); nothing changed.`,
          );
          return true;
        });
        return added === true;
      }}
    >
      {outcome.state === 'failed' ? <Failure error={outcome.error} doing="add the address" /> : null}
    </EmailForm>
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
              <th scope="col">Source and cause</th>
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
                <td>
                  <Provenance suppression={suppression} />
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

/**
 * How a suppression came to be, and for one a provider's event caused, that event: the provider, when,
 * what the receiving server or complainant said, and a link that opens its message (the cause's
 * `message`, the API's message `id`; retention may have removed the message since, which the message
 * view says).
 */
function Provenance({ suppression }: { suppression: Pick<Suppression, 'email' | 'source' | 'cause'> }) {
  const { email, source = null, cause = null } = suppression;
  return (
    <div class="provenance">
      <span class="source">
        {sourceLabel(source)}
        {source === null ? <span class="note"> (suppressed before mailwarden kept it)</span> : null}
      </span>
      {cause === null ? null : (
        <>
          <span>
            {providerLabels[cause.provider]}, <time dateTime={cause.event_at}>{formatTime(cause.event_at)}</time>
          </span>
          {cause.diagnostic === null ? null : (
            <q class="diagnostic literal">
              <bdi>{cause.diagnostic}</bdi>
            </q>
          )}
          {cause.message_id === null || cause.message === null ? (
            <span class="note">The event named no message.</span>
          ) : (
            <span>
              Message <bdi class="literal message-id">{cause.message_id}</bdi> ·{' '}
              <a href={pageHref('messages', { id: cause.message })} onClick={followLink}>
                Open the message
                <span class="visually-hidden"> to {email}</span>
              </a>
            </span>
          )}
        </>
      )}
    </div>
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
