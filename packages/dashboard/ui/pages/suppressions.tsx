import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Suppression, SuppressionCheck, SuppressionRuleView } from '@mailwarden/core';
import { CannotRead, useCan } from '../access.js';
import type { Api, CauseView } from '../api.js';
import { AddressHistoryDialog } from '../components/address-history.js';
import { EraseForm } from '../components/erase-form.js';
import { Expiry } from '../components/expiry.js';
import { ListingFailure, Pager, usePages } from '../components/pager.js';
import { listPhrase, listText } from '../components/list-name.js';
import { RemoveSuppressionDialog } from '../components/remove-suppression-dialog.js';
import { SearchField } from '../components/search-field.js';
import { Empty, Failure, Loading } from '../components/states.js';
import { useSuppressionPage } from '../data/suppressions.js';
import { useSubmission } from '../data/submission.js';
import { formatTime } from '../format.js';
import { PROJECT_WIDE, providerLabels, reasonLabels, reasonText, sourceLabel, UNSUBSCRIBED } from '../labels.js';
import { followLink, navigate, pageHref } from '../location.js';

const PAGE_SIZE = 50;

/** The Expiry filter's choices: the API's `expiring`, kept in the page's address as it is. */
const expiryChoices = { '': 'Any', true: 'Expires', false: 'Never expires' } as const;

/** `expiring=true|false` of the page's address; anything else is no filter. */
function expiringOf(url: URL): boolean | undefined {
  const value = url.searchParams.get('expiring');
  return value === 'true' ? true : value === 'false' ? false : undefined;
}

/**
 * One suppression list at a time, newest first by the time each address was suppressed: the project-wide
 * list, or a stream's (docs/dashboard.md, "Suppressions"). Check an address (for mail of a stream, too),
 * add one by hand to a list, search by the start of an address, show only entries that expire (or never
 * do), remove one after a confirmation. Its address keeps the list, the filters and the page:
 * `suppressions?stream=…&email=…&expiring=…&page=…&cursor=…`.
 */
export function SuppressionsPage({ api, url }: { api: Api; url: URL }) {
  const emailPrefix = url.searchParams.get('email') || undefined;
  const stream = url.searchParams.get('stream') || undefined;
  const expiring = expiringOf(url);
  const filter = (next: { stream?: string | undefined; email?: string | undefined; expiring?: boolean | undefined }) => {
    const chosen = { stream, email: emailPrefix, expiring, ...next };
    navigate(pageHref('suppressions', { ...chosen, expiring: chosen.expiring?.toString() }));
  };
  // Bumped after a change, so the list and the check show it at once.
  const [version, setVersion] = useState(0);
  const [notice, setNotice] = useState('');
  const changed = (message: string) => {
    setNotice(message);
    setVersion((value) => value + 1);
  };
  // Only what the key may do is shown (docs/dashboard.md, "What a key may do").
  const [canCheck, canRead, canWrite, canErase] = [useCan('check'), useCan('read'), useCan('write'), useCan('admin')];
  return (
    <>
      <h1>Suppressions</h1>
      <p class="lead">
        Addresses on the project-wide list are held back from all sending; hard bounces and complaints are added to it automatically. Each
        stream (a kind of mail, such as a newsletter) has a list of its own, which holds back that stream’s mail only.
      </p>
      {canCheck || canWrite || canErase ? (
        <div class="tools">
          {canCheck ? <CheckForm api={api} version={version} stream={stream} /> : null}
          {canWrite ? <AddForm api={api} stream={stream} onAdded={changed} /> : null}
          {canErase ? <EraseForm api={api} onErased={() => changed('')} /> : null}
        </div>
      ) : null}
      <p class="notice" role="status">
        {notice}
      </p>
      {canRead ? (
        <>
          <SuppressionFilters stream={stream} emailPrefix={emailPrefix} expiring={expiring} filter={filter} />
          <SuppressionList
            api={api}
            url={url}
            stream={stream}
            emailPrefix={emailPrefix}
            expiring={expiring}
            version={version}
            onRemoved={changed}
          />
        </>
      ) : (
        <CannotRead what="the suppression lists" />
      )}
    </>
  );
}

/** The list shown, and its search and expiry filters. */
function SuppressionFilters(props: {
  stream: string | undefined;
  emailPrefix: string | undefined;
  expiring: boolean | undefined;
  filter(next: { stream?: string | undefined; email?: string | undefined; expiring?: boolean | undefined }): void;
}) {
  const { stream, emailPrefix, expiring, filter } = props;
  return (
    <div class="filters">
      <SearchField
        id="suppression-stream"
        label="Stream"
        value={stream}
        placeholder="The project-wide list"
        hint="A stream’s whole name shows its list"
        onChange={(next) => filter({ stream: next })}
      />
      <SearchField
        id="suppression-search"
        label="Search addresses"
        value={emailPrefix}
        placeholder="The start of an address"
        onChange={(email) => filter({ email })}
      />
      <div class="field">
        <label for="suppression-expiry">Expiry</label>
        <select
          id="suppression-expiry"
          value={String(expiring ?? '')}
          onChange={(event) => {
            const value = event.currentTarget.value;
            filter({ expiring: value === 'true' ? true : value === 'false' ? false : undefined });
          }}
        >
          {Object.entries(expiryChoices).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </div>
    </div>
  );
}

/** Text of a field as the API takes it: trimmed, and `undefined` when empty (no stream: the project-wide list). */
const given = (text: string): string | undefined => text.trim() || undefined;

/**
 * A tool of this page: an email field, an optional stream field and a button. The stream field starts
 * at the list shown (`stream`) and follows it when another is chosen. `run` returns whether to clear
 * the email field.
 */
function EmailForm(props: {
  name: string;
  title: string;
  label: string;
  streamHint: string;
  stream: string | undefined;
  button: string;
  busy: boolean;
  run(email: string, stream: string | undefined): Promise<boolean>;
  children: ComponentChildren;
}) {
  const { name, title, label, streamHint, stream, button, busy, run, children } = props;
  const [email, setEmail] = useState('');
  const [streamText, setStreamText] = useState(stream ?? '');
  useEffect(() => setStreamText(stream ?? ''), [stream]);
  return (
    <form
      class="tool"
      aria-labelledby={`${name}-title`}
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void run(email, given(streamText)).then((clear) => clear && setEmail(''));
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
      <div class="field">
        <label for={`${name}-stream`}>
          Stream <span class="note">(optional)</span>
        </label>
        <input
          id={`${name}-stream`}
          type="text"
          value={streamText}
          placeholder={PROJECT_WIDE}
          spellcheck={false}
          autoComplete="off"
          aria-describedby={`${name}-stream-hint`}
          onInput={(event) => setStreamText(event.currentTarget.value)}
        />
        <span class="note" id={`${name}-stream-hint`}>
          {streamHint}
        </span>
      </div>
      <button type="submit" disabled={busy}>
        {button}
      </button>
      {children}
    </form>
  );
}

/** What was asked and answered: the stream asked for stays with the answer, which does not echo it when not suppressed. */
interface Checked {
  asked: string | undefined;
  answer: SuppressionCheck;
}

function CheckForm({ api, version, stream }: { api: Api; version: number; stream: string | undefined }) {
  const [outcome, submit] = useSubmission<Checked>();
  const check = (email: string, asked: string | undefined) =>
    submit(async () => ({ asked, answer: await api.suppressions.check({ email, stream: asked }) }));
  // After an add or a removal the shown answer may be stale: ask again, so it never contradicts the notice.
  const checked = outcome.state === 'done' ? outcome.value : undefined;
  const seenVersion = useRef(version);
  useEffect(() => {
    if (seenVersion.current === version) return;
    seenVersion.current = version;
    if (checked !== undefined) void check(checked.answer.email, checked.asked);
  }, [version]);
  return (
    <EmailForm
      name="check"
      title="Check an address"
      label="Email to check"
      streamHint="For mail of a stream: its list or the project-wide one. Empty: the project-wide list."
      stream={stream}
      button="Check"
      busy={outcome.state === 'busy'}
      run={async (email, asked) => {
        await check(email, asked);
        return false;
      }}
    >
      {outcome.state === 'done' ? (
        <div class="result" role="status">
          <CheckResult {...outcome.value} />
          {outcome.value.answer.suppressed ? <Provenance suppression={outcome.value.answer} /> : null}
        </div>
      ) : outcome.state === 'failed' ? (
        <Failure error={outcome.error} doing="check the address" />
      ) : null}
    </EmailForm>
  );
}

/**
 * A check's answer in words. Asked without a stream, exactly as before streams. Asked with one, which
 * list holds the address: the project-wide one (`stream: null`, which answers when both do) or the stream's.
 */
function CheckResult({ asked, answer }: Checked) {
  const address = <bdi class="literal">{answer.email}</bdi>;
  const forStream =
    asked === undefined ? null : (
      <>
        {' '}
        for stream <bdi class="literal">{asked}</bdi>
      </>
    );
  if (!answer.suppressed) {
    return (
      <p>
        {address} is not suppressed{forStream}.
      </p>
    );
  }
  const why = `${reasonText(answer.reason, answer.source)}, since ${formatTime(answer.created_at)}`;
  return (
    <p>
      {address} is suppressed{forStream}: {why}
      {answer.expires_at === undefined ? null : (
        <>
          , <Expiry expiresAt={answer.expires_at} />
        </>
      )}
      {asked === undefined ? '.' : <>, on {listPhrase(answer.stream ?? undefined)}.</>}
    </p>
  );
}

function AddForm({ api, stream, onAdded }: { api: Api; stream: string | undefined; onAdded(message: string): void }) {
  const [outcome, submit] = useSubmission<boolean>();
  return (
    <EmailForm
      name="add"
      title="Add a suppression"
      label="Email to suppress"
      streamHint="Holds back that stream’s mail only. Empty: the project-wide list, which holds back all of it."
      stream={stream}
      button="Add"
      busy={outcome.state === 'busy'}
      run={async (email, list) => {
        const added = await submit(async () => {
          const { suppression, created } = await api.suppressions.add(email, { stream: list });
          const where = listText(suppression.stream);
          onAdded(
            created
              ? `Added ${suppression.email} to ${where}.`
              : `${suppression.email} was already on ${where} (${reasonText(suppression.reason, suppression.source)}); nothing changed.`,
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
  stream: string | undefined;
  emailPrefix: string | undefined;
  expiring: boolean | undefined;
  version: number;
  onRemoved(message: string): void;
}) {
  const { api, url, stream, emailPrefix, expiring, version, onRemoved } = props;
  const pages = usePages(url, PAGE_SIZE);
  const [removing, setRemoving] = useState<Suppression>();
  const [showing, setShowing] = useState<Suppression>();
  const canWrite = useCan('write');
  const listing = useSuppressionPage(api, { stream, emailPrefix, expiring }, PAGE_SIZE, pages.cursor, version);
  if (listing.state === 'loading') return <Loading>Loading suppressions…</Loading>;
  if (listing.state === 'failed')
    return <ListingFailure error={listing.error} pages={pages} reload={listing.reload} doing="load the suppressions" />;
  const { items, next_cursor } = listing.data;
  const list = listPhrase(stream);
  if (items.length === 0 && pages.number === 1) {
    const ofExpiry = expiring === undefined ? '' : expiring ? ' and expires' : ' and never expires';
    return (
      <Empty>
        {emailPrefix !== undefined ? (
          <>
            No address on {list} starts with {literal(emailPrefix)}
            {ofExpiry}.
          </>
        ) : expiring !== undefined ? (
          <>
            No address on {list}
            {expiring ? ' expires' : ' is without an expiry'}.
          </>
        ) : stream === undefined ? (
          'The project-wide list is empty.'
        ) : (
          <>The list of stream {literal(stream)} is empty.</>
        )}
      </Empty>
    );
  }
  return (
    <>
      <div class="table-scroll">
        <table class="suppressions">
          <caption>Suppressed addresses on {list}, newest first by when each was suppressed</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Reason</th>
              <th scope="col">Stream</th>
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
                  <Reason suppression={suppression} />
                </td>
                <td class="literal stream" data-label="Stream">
                  <StreamName stream={suppression.stream} />
                </td>
                <td data-label="Suppressed since">
                  {/* One element, so a phone's card keeps both beside the column's name. */}
                  <span>
                    <time dateTime={suppression.created_at}>{formatTime(suppression.created_at)}</time>
                    {suppression.expires_at === undefined ? null : (
                      <span class="expires">
                        <Expiry expiresAt={suppression.expires_at} capitalized />
                      </span>
                    )}
                  </span>
                </td>
                <td data-label="Source and cause">
                  <Provenance suppression={suppression} />
                </td>
                <td class="actions">
                  <button type="button" class="quiet" onClick={() => setShowing(suppression)}>
                    History<span class="visually-hidden"> of {suppression.email}</span>
                  </button>
                  {canWrite ? (
                    <button type="button" class="quiet" onClick={() => setRemoving(suppression)}>
                      Remove<span class="visually-hidden"> {suppression.email}</span>
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager pages={pages} nextCursor={next_cursor} shown={items.length} label="Pages of suppressions" />
      {showing === undefined ? null : (
        <AddressHistoryDialog api={api} email={showing.email} about={{ hash: showing.hash }} onClose={() => setShowing(undefined)} />
      )}
      {removing === undefined ? null : (
        <RemoveSuppressionDialog
          email={removing.email}
          reason={reasonText(removing.reason, removing.source)}
          stream={removing.stream}
          remove={() => api.suppressions.remove(removing.hash, { stream: removing.stream })}
          onClose={(removed) => {
            setRemoving(undefined);
            if (removed) onRemoved(`Removed ${removing.email} from ${listText(removing.stream)}.`);
          }}
        />
      )}
    </>
  );
}

const literal = (text: string) => <bdi class="literal">{text}</bdi>;

/** The reason, and beside it "Unsubscribed" when the recipient asked for it (reason `manual`, source `unsubscribe`). */
function Reason({ suppression }: { suppression: Pick<Suppression, 'reason' | 'source'> }) {
  // One element, so a phone's card keeps both beside the column's name.
  return (
    <span class="reasons">
      <span class={`reason reason-${suppression.reason}`}>{reasonLabels[suppression.reason]}</span>
      {suppression.source === 'unsubscribe' ? (
        <>
          {' '}
          <span class="reason reason-unsubscribe">{UNSUBSCRIBED}</span>
        </>
      ) : null}
    </span>
  );
}

/** The list holding an entry: its stream's name, or the project-wide list when it has none. */
function StreamName({ stream }: { stream: string | undefined }) {
  return stream === undefined ? <span class="none">{PROJECT_WIDE.toLowerCase()}</span> : <bdi>{stream}</bdi>;
}

/**
 * How a suppression came to be, and for one a provider's event caused, that event: the provider, when,
 * what the receiving server or complainant said, and a link that opens its message (the cause's
 * `message`, the API's message `id`; retention may have removed the message since, which the message
 * view says). For one the soft-bounce rule made: the rule, and each bounce that met it, so the cause
 * (the last of them) is not shown twice. One added while the address was allowlisted says so.
 */
function Provenance({ suppression }: { suppression: Pick<Suppression, 'email' | 'source' | 'cause' | 'rule' | 'allowlisted'> }) {
  const { email, source = null, cause = null, rule, allowlisted } = suppression;
  return (
    <div class="provenance">
      {rule === undefined ? (
        <>
          <span class="source">
            {sourceLabel(source)}
            {source === null ? <span class="note"> (suppressed before mailwarden kept it)</span> : null}
          </span>
          {cause === null ? null : <Cause cause={cause} opens={<> to {email}</>} />}
        </>
      ) : (
        <RuleBounces rule={rule} email={email} />
      )}
      {allowlisted === true ? <span class="note">Added while the address was on the allowlist, which events never suppress.</span> : null}
    </div>
  );
}

/** "3 soft bounces in 7 days", and each of them oldest first, as a cause is shown. */
function RuleBounces({ rule, email }: { rule: SuppressionRuleView; email: string }) {
  const bounces = `${rule.bounces} soft ${rule.bounces === 1 ? 'bounce' : 'bounces'}`;
  const days = `${rule.days} ${rule.days === 1 ? 'day' : 'days'}`;
  return (
    <>
      <span class="source">
        Soft-bounce rule: {bounces} in {days}
        {rule.reset_on_delivery ? ', none delivered between them' : ''}
      </span>
      <ol class="rule-bounces">
        {rule.events.map((bounce, index) => (
          <li key={bounce.event_id}>
            <div class="rule-bounce">
              <Cause
                cause={bounce}
                opens={
                  <>
                    {' '}
                    to {email}, bounce {index + 1} of {rule.events.length}
                  </>
                }
              />
            </div>
          </li>
        ))}
      </ol>
    </>
  );
}

/** One provider event: its provider and time, what was said, and a link to its message; `opens` ends the link's name for screen readers. */
function Cause({ cause, opens }: { cause: CauseView; opens: ComponentChildren }) {
  return (
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
            <span class="visually-hidden">{opens}</span>
          </a>
        </span>
      )}
    </>
  );
}
