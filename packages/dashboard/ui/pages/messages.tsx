import type { Message } from '@mailwarden/core';
import { useEffect, useRef } from 'preact/hooks';
import type { Api } from '../api.js';
import { CountsPerDay, DEFAULT_DAYS, parseDays, type DayChoice } from '../components/counts-per-day.js';
import { ListingFailure, Pager, usePages } from '../components/pager.js';
import { SearchField } from '../components/search-field.js';
import { Empty, Failure, Loading } from '../components/states.js';
import { TrackingIdCombobox } from '../components/tracking-id-combobox.js';
import { TrackingIdCounts } from '../components/tracking-id-counts.js';
import { useMessagePage, type MessageFilters } from '../data/messages.js';
import { useTrackingIdSummary } from '../data/tracking-ids.js';
import { formatDay, formatTime } from '../format.js';
import { isProvider, isStatus, providerLabels, statusLabels } from '../labels.js';
import { followLink, navigate, pageHref } from '../location.js';
import { MessageView } from './message.js';

const PAGE_SIZE = 50;

/**
 * The Messages page's view of the list, all in its address: `messages?trackingId=…&status=…&recipient=…&provider=…&stream=…&days=…`,
 * and the list's page (`page`, `cursor`, see `usePages`), which a change of filter drops.
 */
interface Filters extends MessageFilters {
  days: DayChoice;
}

function filtersOf(url: URL): Filters {
  const status = url.searchParams.get('status') ?? '';
  const provider = url.searchParams.get('provider') ?? '';
  return {
    trackingId: url.searchParams.get('trackingId') || null,
    status: isStatus(status) ? status : undefined,
    recipient: url.searchParams.get('recipient') || undefined,
    provider: isProvider(provider) ? provider : undefined,
    stream: url.searchParams.get('stream') || undefined,
    days: parseDays(url.searchParams.get('days')),
  };
}

/** The address of the list with these filters, on its first page. */
function messagesHref(filters: Filters): string {
  return pageHref('messages', {
    trackingId: filters.trackingId ?? undefined,
    status: filters.status,
    recipient: filters.recipient,
    provider: filters.provider,
    stream: filters.stream,
    days: filters.days === DEFAULT_DAYS ? undefined : String(filters.days),
  });
}

/** The address `url` with the message `id` opened over the list (or closed, `null`), the list's page kept. */
function withMessage(url: URL, id: string | null): string {
  const next = new URL(url);
  if (id === null) next.searchParams.delete('id');
  else next.searchParams.set('id', id);
  return next.pathname + next.search;
}

/**
 * The spec's Messages page: the Tracking ID combobox, the chosen ID's counts and counts per day, filters,
 * the messages. `messages?…&id=…` opens one message over the list, which stays as it was (its page too)
 * for when the message is closed.
 */
export function MessagesPage({ api, url }: { api: Api; url: URL }) {
  const filters = filtersOf(url);
  const id = url.searchParams.get('id');
  const filter = (next: Partial<Filters>) => navigate(messagesHref({ ...filters, ...next }));

  // The list is made the first time it is shown, and kept (hidden) while a message is open.
  const listMade = useRef(false);
  // Made by this render: no link of it opened the closed message, whatever rows a cached answer shows.
  const listNew = id === null && !listMade.current;
  if (id === null) listMade.current = true;

  // Opening a message moves the focus to it; closing it returns the focus to the link that opened it, or
  // to the list's heading when the list is new (the message was opened from another page or a reload).
  const messageHeading = useRef<HTMLHeadingElement>(null);
  const listHeading = useRef<HTMLHeadingElement>(null);
  const shownId = useRef(id);
  useEffect(() => {
    const closed = shownId.current;
    shownId.current = id;
    if (closed === id) return;
    if (id !== null) {
      messageHeading.current?.focus();
      return;
    }
    const opener = listNew
      ? undefined
      : [...document.querySelectorAll<HTMLAnchorElement>('a[data-message]')].find((link) => link.dataset.message === closed);
    (opener ?? listHeading.current)?.focus();
  }, [id]);

  return (
    <>
      {id === null ? null : <MessageView api={api} id={id} back={withMessage(url, null)} heading={messageHeading} />}
      {listMade.current ? (
        <div hidden={id !== null}>
          <h1 id="messages-title" ref={listHeading} tabIndex={-1}>
            Messages
          </h1>
          <div class="filters">
            <TrackingIdCombobox api={api} trackingId={filters.trackingId} onChoose={(chosen) => filter({ trackingId: chosen })} />
            <div class="field">
              <label for="status-filter">Status</label>
              <select
                id="status-filter"
                value={filters.status ?? ''}
                onChange={(event) => filter({ status: isStatus(event.currentTarget.value) ? event.currentTarget.value : undefined })}
              >
                <option value="">All statuses</option>
                {Object.entries(statusLabels).map(([value, label]) => (
                  <option key={value} value={value}>
                    {label}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="provider-filter">Provider</label>
              <select
                id="provider-filter"
                value={filters.provider ?? ''}
                onChange={(event) => filter({ provider: isProvider(event.currentTarget.value) ? event.currentTarget.value : undefined })}
              >
                <option value="">All providers</option>
                {Object.entries(providerLabels).map(([value, label]) => (
                  <option key={value} value={value}>
                    {label}
                  </option>
                ))}
              </select>
            </div>
            <SearchField
              id="recipient-filter"
              label="Recipient"
              value={filters.recipient}
              placeholder="Any address"
              hint="The start of an address, or @domain"
              onChange={(recipient) => filter({ recipient })}
            />
            <SearchField
              id="stream-filter"
              label="Stream"
              value={filters.stream}
              placeholder="Any stream"
              hint="A stream’s whole name, as sent"
              onChange={(stream) => filter({ stream })}
            />
          </div>
          {filters.trackingId !== null ? (
            <ChosenTrackingId api={api} trackingId={filters.trackingId} days={filters.days} onDays={(days) => filter({ days })} />
          ) : filters.recipient === undefined && filters.stream === undefined ? (
            <CountsPerDay
              api={api}
              trackingId={null}
              lastDay={formatDay(new Date().toISOString())}
              lastDayIs="today"
              days={filters.days}
              onDays={(days) => filter({ days })}
              title="Counts per day in the project"
            />
          ) : null}
          <MessageList api={api} url={url} filters={filters} openHref={(message) => withMessage(url, message)} />
        </div>
      ) : null}
    </>
  );
}

function ChosenTrackingId({
  api,
  trackingId,
  days,
  onDays,
}: {
  api: Api;
  trackingId: string;
  days: DayChoice;
  onDays(days: DayChoice): void;
}) {
  const summary = useTrackingIdSummary(api, trackingId);
  if (summary.state === 'loading') return <Loading>Loading the counts…</Loading>;
  if (summary.state === 'failed')
    return <Failure error={summary.error} retry={summary.reload} doing="load the counts of this tracking ID" />;
  const [found] = summary.data.items;
  if (found === undefined) {
    return (
      <Empty>
        No message carries the tracking ID <bdi class="literal">{trackingId}</bdi> yet.
      </Empty>
    );
  }
  // Side by side on a wide screen, so the first messages stay above the fold.
  return (
    <div class="summary">
      <TrackingIdCounts summary={found} />
      <CountsPerDay
        api={api}
        trackingId={trackingId}
        lastDay={formatDay(found.lastEventAt)}
        lastDayIs="its last event"
        days={days}
        onDays={onDays}
        title="Counts per day"
      />
    </div>
  );
}

function MessageList({ api, url, filters, openHref }: { api: Api; url: URL; filters: Filters; openHref(id: string): string }) {
  const { trackingId, status, recipient, provider, stream } = filters;
  const listUrl = new URL(url);
  listUrl.searchParams.delete('id');
  const pages = usePages(listUrl, PAGE_SIZE);
  const listing = useMessagePage(api, filters, PAGE_SIZE, pages.cursor);
  if (listing.state === 'loading') return <Loading>Loading messages…</Loading>;
  if (listing.state === 'failed')
    return <ListingFailure error={listing.error} pages={pages} reload={listing.reload} doing="load the messages" />;
  const { items, next_cursor } = listing.data;
  if (items.length === 0 && pages.number === 1) {
    const unfiltered =
      trackingId === null && status === undefined && recipient === undefined && provider === undefined && stream === undefined;
    return (
      <Empty>
        {unfiltered
          ? 'No messages yet: they appear when your provider’s webhooks report events.'
          : 'No messages match these filters. Messages are kept for a limited time, so older ones may be gone.'}
      </Empty>
    );
  }
  return (
    <>
      <div class="table-scroll">
        <table class="messages">
          <caption>Messages, newest first by their first event; each recipient opens the message and its timeline</caption>
          <thead>
            <tr>
              <th scope="col">Recipient</th>
              <th scope="col">Status</th>
              <th scope="col">Tracking ID</th>
              <th scope="col">Message ID</th>
              <th scope="col">Provider</th>
              <th scope="col">Stream</th>
              <th scope="col">First event</th>
            </tr>
          </thead>
          <tbody>
            {items.map((message) => (
              <MessageRow key={message.id} message={message} href={openHref(message.id)} />
            ))}
          </tbody>
        </table>
      </div>
      <Pager pages={pages} nextCursor={next_cursor} shown={items.length} label="Pages of messages" />
    </>
  );
}

function MessageRow({ message, href }: { message: Message; href: string }) {
  return (
    <tr>
      <th scope="row" class="literal">
        <a href={href} onClick={followLink} data-message={message.id}>
          <bdi>{message.recipient}</bdi>
        </a>
      </th>
      <td data-label="Status">
        <span class={`status status-${message.status}`}>{statusLabels[message.status]}</span>
      </td>
      <td class="literal" data-label="Tracking ID">
        {message.trackingId === null ? (
          <span class="none">none</span>
        ) : (
          <a href={pageHref('messages', { trackingId: message.trackingId })} onClick={followLink}>
            <bdi>{message.trackingId}</bdi>
          </a>
        )}
      </td>
      <td class="literal message-id" data-label="Message ID">
        <bdi>{message.messageId}</bdi>
      </td>
      <td data-label="Provider">{providerLabels[message.provider]}</td>
      <td class="literal" data-label="Stream">
        {message.stream === undefined ? (
          <span class="none">none</span>
        ) : (
          <a href={pageHref('messages', { stream: message.stream })} onClick={followLink}>
            <bdi>{message.stream}</bdi>
          </a>
        )}
      </td>
      <td data-label="First event">
        <time dateTime={message.firstEventAt}>{formatTime(message.firstEventAt)}</time>
      </td>
    </tr>
  );
}
