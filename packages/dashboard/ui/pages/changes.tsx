import type { ChangeView, Suppression } from '@mailwarden/core';
import type { ComponentChildren } from 'preact';
import { actorSubject } from '../actors.js';
import type { Api } from '../api.js';
import { SearchField } from '../components/search-field.js';
import { Empty, Failure, Loading } from '../components/states.js';
import { useChanges, type ChangeFilters, type ChangePosition, type ChangeStretch } from '../data/changes.js';
import { docsLinks } from '../docs.js';
import { formatCount, formatFraction, formatTime } from '../format.js';
import { eventLabels, reasonLabels, statusLabels } from '../labels.js';
import { followLink, navigate, pageHref } from '../location.js';
import { pauseCauseLabels } from './deliverability.js';

/** The kind filter's choices: the API's families (a family stands for each of its kinds). */
const families = [
  ['', 'Every change'],
  ['suppression', 'Suppressions'],
  ['message', 'Message statuses'],
  ['alert', 'Alerts'],
  ['allowlist', 'Allowlist'],
  ['stream', 'Paused streams'],
  ['endpoint', 'Outbound endpoints'],
  ['address', 'Erasures'],
  ['key', 'API keys'],
] as const;

/** A repeatable filter of the page's address: comma-separated, blanks dropped. */
function listOf(url: URL, name: string): string[] {
  return (url.searchParams.get(name) ?? '')
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');
}

function positionOf(url: URL): ChangePosition {
  const number = (name: string) => {
    const text = url.searchParams.get(name);
    return text !== null && /^[0-9]{1,15}$/.test(text) ? Number(text) : undefined;
  };
  const after = number('after');
  return after === undefined ? { before: number('before') } : { after };
}

/**
 * The change feed (docs/dashboard.md, "Changes"), newest first: what the store changed, each in a
 * sentence with a link to what it is about, and who did it. The filters (`kind`, `actor`, `hash`) and
 * the stretch shown (`before` or `after` a `seq`) are in the address, so a link shows the same changes
 * however many arrive later.
 */
export function ChangesPage({ api, url }: { api: Api; url: URL }) {
  const kind = url.searchParams.get('kind') ?? '';
  const actor = url.searchParams.get('actor') ?? '';
  const hash = url.searchParams.get('hash') || undefined;
  const filters: ChangeFilters = { kinds: listOf(url, 'kind'), actors: listOf(url, 'actor'), hash };
  const position = positionOf(url);
  const changes = useChanges(api, filters, position);
  const hrefWith = (next: Record<string, string | undefined>) => pageHref('changes', { kind, actor, hash, ...next });
  return (
    <>
      <h1>Changes</h1>
      <p class="lead">
        Every change mailwarden made, newest first, and who made it: suppressions, message statuses, alerts, the allowlist, paused streams,
        outbound endpoints, erasures and API keys. The same changes the API’s feed and the outbound webhooks give, in the same words.
      </p>
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
        }}
      >
        <div class="field">
          <label for="change-kind">Kind</label>
          <select
            id="change-kind"
            value={kind}
            onChange={(event) => navigate(pageHref('changes', { kind: event.currentTarget.value, actor, hash }))}
          >
            {families.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
            {families.some(([value]) => value === kind) ? null : <option value={kind}>{kind}</option>}
          </select>
        </div>
        <SearchField
          id="change-actor"
          label="By"
          value={actor || undefined}
          placeholder="Anyone"
          hint="key:ops, key (every key), webhook:ses, rule, import, unsubscribe, config"
          onChange={(next) => navigate(pageHref('changes', { kind, actor: next, hash }))}
        />
      </form>
      {hash === undefined ? null : (
        <p class="note">
          Only the changes about one address (hash <span class="literal">{hash.slice(0, 16)}…</span>).{' '}
          <a href={pageHref('changes', { kind, actor })} onClick={followLink}>
            Show changes about every address
          </a>
        </p>
      )}
      {changes.state === 'loading' ? (
        <Loading>Loading the changes…</Loading>
      ) : changes.state === 'failed' ? (
        changes.error.code === 'change_feed_not_configured' ? (
          <p class="note empty">
            The change feed is off for this service, so there are no changes to show.{' '}
            <a href={docsLinks.changeFeed}>How to turn on the change feed</a>
          </p>
        ) : changes.error.code === 'change_cursor_expired' ? (
          <Failure error={changes.error} retry={() => navigate(hrefWith({}))} retryLabel="Latest changes" doing="load these changes" />
        ) : (
          <Failure error={changes.error} retry={changes.reload} doing="load the changes" />
        )
      ) : (
        <ChangeList
          stretch={changes.data}
          filtered={filters.kinds.length > 0 || filters.actors.length > 0 || hash !== undefined}
          latestShown={'before' in position && position.before === undefined}
          hrefWith={hrefWith}
        />
      )}
    </>
  );
}

function ChangeList({
  stretch,
  filtered,
  latestShown,
  hrefWith,
}: {
  stretch: ChangeStretch;
  filtered: boolean;
  latestShown: boolean;
  hrefWith(next: Record<string, string | undefined>): string;
}) {
  const { items, from, through, latest, oldestKept } = stretch;
  if (latest === 0) return <Empty>No change yet: the feed starts with the next suppression, message or alert.</Empty>;
  const older = from > 0 && !oldestKept ? hrefWith({ before: String(from + 1) }) : undefined;
  const newer = through < latest ? hrefWith({ after: String(through) }) : undefined;
  const stretchText = `changes ${formatCount(from + 1)}–${formatCount(through)} of ${formatCount(latest)}`;
  return (
    <>
      {items.length === 0 ? (
        <Empty>{filtered ? `None that match among ${stretchText}.` : `No changes among ${stretchText}.`}</Empty>
      ) : (
        <div class="table-scroll">
          <table class="changes stacked">
            <caption>
              {filtered ? 'Changes that match' : 'Changes'}, newest first, among {stretchText}
            </caption>
            <thead>
              <tr>
                <th scope="col">Change</th>
                <th scope="col">By</th>
                <th scope="col">When</th>
                <th scope="col" class="number">
                  Seq
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((change) => (
                <tr key={change.seq}>
                  <th scope="row" class="change-sentence">
                    <ChangeSentence change={change} />
                  </th>
                  <td data-label="By">
                    <ActorName actor={change.actor} />
                  </td>
                  <td data-label="When">
                    <time dateTime={change.at}>{formatTime(change.at)}</time>
                  </td>
                  <td data-label="Seq" class="number">
                    {change.seq}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {oldestKept ? <p class="note">Older changes are no longer kept: the feed’s retention deleted them.</p> : null}
      <nav class="pager" aria-label="Pages of the changes">
        {latestShown ? null : (
          <a class="button-link" href={hrefWith({})} onClick={followLink}>
            Latest changes
          </a>
        )}
        <PagerLink href={newer}>Newer changes</PagerLink>
        <PagerLink href={older}>Older changes</PagerLink>
      </nav>
    </>
  );
}

/** Who made a change, in words, with the actor as the API names it (what the By filter takes) on hover. */
export function ActorName({ actor }: { actor: string | undefined }) {
  if (actor === undefined) return <span class="none">not recorded</span>;
  return (
    <span class="actor" title={actor}>
      <bdi>{actorSubject(actor)}</bdi>
    </span>
  );
}

/** A pager's link, or the same words shown as unavailable where there is nowhere to go. */
function PagerLink({ href, children }: { href: string | undefined; children: ComponentChildren }) {
  if (href === undefined)
    return (
      <span class="button-link" aria-disabled="true">
        {children}
      </span>
    );
  return (
    <a class="button-link" href={href} onClick={followLink}>
      {children}
    </a>
  );
}

/** A suppression's reason before the word "suppression": an unsubscribe says so (its reason is `manual`). */
const reasonOf = (suppression: Suppression): string =>
  suppression.source === 'unsubscribe' ? 'Unsubscribe' : reasonLabels[suppression.reason];

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

const alertNames = { 'alert.bounce_rate': 'Bounce rate', 'alert.complaint_rate': 'Complaint rate' } as const;

/** A change in a sentence, with a link to what it is about (the suppression, the message, the page that shows it). */
export function ChangeSentence({ change }: { change: ChangeView }) {
  const link = (href: string, text: ComponentChildren) => (
    <a href={href} onClick={followLink}>
      {text}
    </a>
  );
  switch (change.kind) {
    case 'suppression.added':
    case 'suppression.upgraded':
    case 'suppression.updated':
    case 'suppression.removed':
    case 'suppression.expired': {
      const { suppression, previous } = change;
      const reason = reasonOf(suppression);
      const stream = suppression.stream ?? undefined;
      const address = link(pageHref('suppressions', { email: suppression.email, stream }), <bdi class="literal">{suppression.email}</bdi>);
      const list =
        stream === undefined ? null : (
          <>
            {' '}
            in stream <bdi class="literal">{stream}</bdi>
          </>
        );
      if (change.kind === 'suppression.added')
        return (
          <>
            {reason} suppression added for {address}
            {list}
          </>
        );
      if (change.kind === 'suppression.upgraded')
        return (
          <>
            Suppression of {address}
            {list} upgraded: {previous === undefined ? '' : `${reasonOf(previous)} → `}
            {reason}
          </>
        );
      if (change.kind === 'suppression.updated')
        return (
          <>
            {reason} suppression of {address}
            {list} updated
          </>
        );
      return (
        <>
          {reason} suppression of {address}
          {list} {change.kind === 'suppression.removed' ? 'removed' : 'expired'}
        </>
      );
    }
    case 'message.status_changed': {
      const { message, from, to, event } = change;
      const recipient = link(pageHref('messages', { id: message.id }), <bdi class="literal">{message.recipient}</bdi>);
      return (
        <>
          Message to {recipient} {from === null ? 'first seen as ' : `${statusLabels[from].toLowerCase()} → `}
          {statusLabels[to].toLowerCase()}
          <span class="note"> ({eventLabels[event.type].toLowerCase()} event)</span>
        </>
      );
    }
    case 'alert.bounce_rate':
    case 'alert.complaint_rate': {
      const { alert } = change;
      const scope =
        alert.tracking_id === null ? null : (
          <>
            {' '}
            of <bdi class="literal">{alert.tracking_id}</bdi>
          </>
        );
      const rate = `${formatFraction(alert.rate)} (${formatCount(alert.count)} of ${formatCount(alert.messages)} messages)`;
      return (
        <>
          {link(pageHref('deliverability'), alertNames[change.kind])}
          {scope} {rate} {alert.firing ? 'crossed' : 'fell below'} {formatFraction(alert.threshold)}
          {alert.firing ? ': alert firing' : ': alert resolved'}
        </>
      );
    }
    case 'allowlist.added':
    case 'allowlist.removed':
      return (
        <>
          {link(pageHref('allowlist'), <bdi class="literal">{change.entry.entry}</bdi>)}{' '}
          {change.kind === 'allowlist.added' ? 'added to' : 'removed from'} the allowlist
        </>
      );
    case 'stream.paused':
    case 'stream.resumed':
      return (
        <>
          Stream {link(pageHref('deliverability'), <bdi class="literal">{change.stream}</bdi>)}{' '}
          {change.kind === 'stream.paused' ? `paused by ${lowerFirst(pauseCauseLabels[change.cause])}` : 'resumed'}
        </>
      );
    case 'endpoint.paused':
    case 'endpoint.resumed':
      return (
        <>
          Outbound endpoint {link(pageHref('deliverability'), <bdi class="literal">{change.endpoint}</bdi>)}{' '}
          {change.kind === 'endpoint.paused' ? `paused after failing${change.error === undefined ? '' : `: ${change.error}`}` : 'resumed'}
        </>
      );
    case 'address.erased': {
      // The change never carries the address: its placeholder is what the lists show now.
      const placeholder = change.records[0]?.email;
      return (
        <>
          An address erased
          {placeholder === undefined ? null : (
            <>, still blocked as {link(pageHref('suppressions', { email: placeholder }), <bdi class="literal">{placeholder}</bdi>)}</>
          )}
          <span class="note">
            {' '}
            ({formatCount(change.messages)} {change.messages === 1 ? 'message' : 'messages'} and {formatCount(change.changes)}{' '}
            {change.changes === 1 ? 'change' : 'changes'} deleted)
          </span>
        </>
      );
    }
    case 'key.added':
    case 'key.updated':
    case 'key.removed': {
      const verb = { 'key.added': 'added', 'key.updated': 'changed', 'key.removed': 'removed' }[change.kind];
      return (
        <>
          API key <bdi class="literal">{change.key.name}</bdi> {verb}
          <span class="note">
            {' '}
            (scopes: {change.previous === undefined ? '' : `${change.previous.scopes.join(', ') || 'none'} → `}
            {change.key.scopes.join(', ') || 'none'})
          </span>
        </>
      );
    }
  }
}
