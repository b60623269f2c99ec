import type { Suppression, SuppressionCheck } from '@mailwarden/core';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { ListingFailure, Pager, usePages } from '../components/pager.js';
import { RemoveSuppressionDialog } from '../components/remove-suppression-dialog.js';
import { SearchField } from '../components/search-field.js';
import { Empty, Failure, Loading } from '../components/states.js';
import { useSuppressionPage } from '../data/suppressions.js';
import { useSubmission } from '../data/submission.js';
import { formatTime } from '../format.js';
import { providerLabels, reasonLabels, sourceLabel } from '../labels.js';
import { followLink, navigate, pageHref } from '../location.js';

const PAGE_SIZE = 50;

/**
 * The suppression list, newest first by the time each address was suppressed: check an address, add one
 * by hand, search by the start of an address, remove one after a confirmation. Its address keeps the
 * search and the page: `suppressions?email=…&page=…&cursor=…`.
 */
export function SuppressionsPage({ api, url }: { api: Api; url: URL }) {
  const emailPrefix = url.searchParams.get('email') || undefined;
  // Bumped after a change, so the list and the check show it at once.
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
        <CheckForm api={api} version={version} />
        <AddForm api={api} onAdded={changed} />
      </div>
      <p class="notice" role="status">
        {notice}
      </p>
      <div class="filters">
        <SearchField
          id="suppression-search"
          label="Search addresses"
          value={emailPrefix}
          placeholder="The start of an address"
          onChange={(email) => navigate(pageHref('suppressions', { email }))}
        />
      </div>
      <SuppressionList api={api} url={url} emailPrefix={emailPrefix} version={version} onRemoved={changed} />
    </>
  );
}

/** A tool of this page: one email field and a button. `run` returns whether to clear the field. */
function EmailForm(props: {
  name: string;
  title: string;
  label: string;
  button: string;
  busy: boolean;
  run(email: string): Promise<boolean>;
  children: ComponentChildren;
}) {
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
        <input
          id={`${name}-email`}
          type="email"
          required
          value={email}
          spellcheck={false}
          autoComplete="off"
          onInput={(event) => setEmail(event.currentTarget.value)}
        />
      </div>
      <button type="submit" disabled={busy}>
        {button}
      </button>
      {children}
    </form>
  );
}

function CheckForm({ api, version }: { api: Api; version: number }) {
  const [outcome, submit] = useSubmission<SuppressionCheck>();
  // After an add or a removal the shown answer may be stale: ask again, so it never contradicts the notice.
  const checked = outcome.state === 'done' ? outcome.value.email : undefined;
  const seenVersion = useRef(version);
  useEffect(() => {
    if (seenVersion.current === version) return;
    seenVersion.current = version;
    if (checked !== undefined) void submit(() => api.suppressions.check(checked));
  }, [version]);
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

function SuppressionList(props: {
  api: Api;
  url: URL;
  emailPrefix: string | undefined;
  version: number;
  onRemoved(message: string): void;
}) {
  const { api, url, emailPrefix, version, onRemoved } = props;
  const pages = usePages(url, PAGE_SIZE);
  const [removing, setRemoving] = useState<Suppression>();
  const listing = useSuppressionPage(api, emailPrefix, PAGE_SIZE, pages.cursor, version);
  if (listing.state === 'loading') return <Loading>Loading suppressions…</Loading>;
  if (listing.state === 'failed')
    return <ListingFailure error={listing.error} pages={pages} reload={listing.reload} doing="load the suppressions" />;
  const { items, next_cursor } = listing.data;
  if (items.length === 0 && pages.number === 1) {
    return (
      <Empty>
        {emailPrefix === undefined ? (
          'The suppression list is empty.'
        ) : (
          <>
            No suppressed address starts with <bdi class="literal">{emailPrefix}</bdi>.
          </>
        )}
      </Empty>
    );
  }
  return (
    <>
      <div class="table-scroll">
        <table class="suppressions">
          <caption>Suppressed addresses, newest first by when each was suppressed</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Reason</th>
              <th scope="col">Suppressed since</th>
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
                <td data-label="Reason">
                  <span class={`reason reason-${suppression.reason}`}>{reasonLabels[suppression.reason]}</span>
                </td>
                <td data-label="Suppressed since">
                  <time dateTime={suppression.created_at}>{formatTime(suppression.created_at)}</time>
                </td>
                <td data-label="Source and cause">
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
      <Pager pages={pages} nextCursor={next_cursor} shown={items.length} label="Pages of suppressions" />
      {removing === undefined ? null : (
        <RemoveSuppressionDialog
          email={removing.email}
          reason={removing.reason}
          remove={() => api.suppressions.remove(removing.hash)}
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
