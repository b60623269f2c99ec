import type { Message, MessageStatus } from '@mailwarden/core';
import type { Api } from '../api.js';
import { Pager, usePages } from '../components/pager.js';
import { Empty, Failure, Loading } from '../components/states.js';
import { TrackingIdCombobox } from '../components/tracking-id-combobox.js';
import { TrackingIdCounts } from '../components/tracking-id-counts.js';
import { formatTime } from '../format.js';
import { useLoad } from '../load.js';
import { followLink, navigate, pageHref } from '../location.js';

const PAGE_SIZE = 50;

/** Every status, in the API's precedence order, as people read it. */
export const statusLabels: Record<MessageStatus, string> = {
  complained: 'Complained',
  bounced: 'Bounced',
  rejected: 'Rejected',
  delivered: 'Delivered',
  soft_bounced: 'Soft bounced',
  deferred: 'Deferred',
  sent: 'Sent',
};

function isStatus(value: string): value is MessageStatus {
  return Object.hasOwn(statusLabels, value);
}

/** The spec's Messages page: the Tracking ID combobox, the chosen ID's counts, a status filter, the messages. */
export function MessagesPage({ api, url }: { api: Api; url: URL }) {
  const trackingId = url.searchParams.get('trackingId') || null;
  const statusParameter = url.searchParams.get('status') ?? '';
  const status = isStatus(statusParameter) ? statusParameter : undefined;
  const filter = (next: { trackingId?: string | null; status?: string | undefined }) =>
    navigate(
      pageHref('messages', {
        trackingId: (next.trackingId === undefined ? trackingId : next.trackingId) ?? undefined,
        status: 'status' in next ? next.status : status,
      }),
    );

  return (
    <>
      <h1>Messages</h1>
      <div class="filters">
        <TrackingIdCombobox api={api} trackingId={trackingId} onChoose={(chosen) => filter({ trackingId: chosen })} />
        <div class="field">
          <label for="status-filter">Status</label>
          <select id="status-filter" value={status ?? ''} onChange={(event) => filter({ status: event.currentTarget.value || undefined })}>
            <option value="">All statuses</option>
            {Object.entries(statusLabels).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
      </div>
      {trackingId === null ? null : <ChosenTrackingId api={api} trackingId={trackingId} />}
      <MessageList api={api} trackingId={trackingId} status={status} />
    </>
  );
}

function ChosenTrackingId({ api, trackingId }: { api: Api; trackingId: string }) {
  const summary = useLoad((signal) => api.trackingIds({ trackingId }, signal), [api, trackingId]);
  if (summary.state === 'loading') return <Loading>Loading the counts…</Loading>;
  if (summary.state === 'failed') return <Failure error={summary.error} retry={summary.reload} doing="load the counts of this tracking ID" />;
  const [found] = summary.data.items;
  if (found === undefined) {
    return (
      <Empty>
        No message carries the tracking ID <bdi class="literal">{trackingId}</bdi> yet.
      </Empty>
    );
  }
  return <TrackingIdCounts summary={found} />;
}

function MessageList({ api, trackingId, status }: { api: Api; trackingId: string | null; status: MessageStatus | undefined }) {
  const pages = usePages(JSON.stringify([trackingId, status]));
  const listing = useLoad(
    (signal) => api.messages({ trackingId: trackingId ?? undefined, status, limit: PAGE_SIZE, cursor: pages.cursor }, signal),
    [api, trackingId, status, pages.cursor],
  );
  if (listing.state === 'loading') return <Loading>Loading messages…</Loading>;
  if (listing.state === 'failed') return <Failure error={listing.error} retry={listing.reload} doing="load the messages" />;
  const { items, next_cursor } = listing.data;
  if (items.length === 0 && pages.number === 1) {
    return <Empty>{trackingId === null && status === undefined ? 'No messages yet: they appear when your provider’s webhooks report events.' : 'No messages match these filters.'}</Empty>;
  }
  return (
    <>
      <div class="table-scroll">
        <table class="messages">
          <caption>Messages, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Recipient</th>
              <th scope="col">Status</th>
              <th scope="col">Tracking ID</th>
              <th scope="col">Message ID</th>
              <th scope="col">Provider</th>
              <th scope="col">Last event</th>
            </tr>
          </thead>
          <tbody>
            {items.map((message) => (
              <MessageRow key={`${message.provider}\n${message.messageId}\n${message.recipient}`} message={message} />
            ))}
          </tbody>
        </table>
      </div>
      <Pager pages={pages} nextCursor={next_cursor} label="Pages of messages" />
    </>
  );
}

function MessageRow({ message }: { message: Message }) {
  return (
    <tr>
      <td class="literal">
        <bdi>{message.recipient}</bdi>
      </td>
      <td>
        <span class={`status status-${message.status}`}>{statusLabels[message.status]}</span>
      </td>
      <td class="literal">
        {message.trackingId === null ? (
          <span class="none">none</span>
        ) : (
          <a href={pageHref('messages', { trackingId: message.trackingId })} onClick={followLink}>
            <bdi>{message.trackingId}</bdi>
          </a>
        )}
      </td>
      <td class="literal message-id">
        <bdi>{message.messageId}</bdi>
      </td>
      <td>{message.provider}</td>
      <td>
        <time dateTime={message.lastEventAt}>{formatTime(message.lastEventAt)}</time>
      </td>
    </tr>
  );
}
