import { z } from 'zod';
import type { MailwardenContext } from './context.js';
import { formatTimestamp } from '../timestamp.js';
import { MailwardenError } from '../errors.js';
import { normalizeEmail } from '../email/normalize.js';
import { normalizeAddressDomain, normalizeAddressPrefix } from '../email/search.js';
import { assertProjectId, parseInput, parseTimeRange } from '../input.js';
import { definedFilters, paginate } from '../pagination.js';
import {
  listMessagesQuerySchema,
  listTrackingIdsQuerySchema,
  type ListMessagesQuery,
  type ListTrackingIdsQuery,
  type Message,
  type MessagePage,
  type MessageDetail,
  type TimelineEntryView,
  messageIdentifierSchema,
  type TrackingIdPage,
  type TrackingIdSummary,
  type Stats,
  type StatsRangeQuery,
} from '../api-schemas.js';
import type { TrackingIdRecord } from '../store/store.js';
import { assertTrackingId, checkTrackingId, trackingIdSearchKey } from '../tracking-id.js';
import { factNamesOf, messageStatus } from '../messages/facts.js';
import type { MessageRecord } from '../messages/message.js';
import { readStats } from './stats-service.js';
import { assertStreamName } from '../stream.js';
import type { TimelineEntry } from '../messages/timeline.js';

const messagePosition = z.object({ t: z.int(), k: z.string().regex(/^[0-9a-f]{32}$/) });
const trackingIdPosition = z.object({ i: z.string().min(1) });

export interface MessageService {
  /**
   * Messages newest first (by first event), optionally filtered, every filter given applying: one
   * tracking ID, one status, one recipient (normalized; `invalid_email` otherwise), the start of the
   * recipient (`recipientPrefix`) or its domain (`recipientDomain`; any text is a search, compared
   * lower-cased as addresses are stored: see `normalizeAddressPrefix`), one provider, one stream
   * (`invalid_stream` for a name that cannot be one), and the time of the last event (`from`
   * inclusive, `to` exclusive, ISO 8601).
   *
   * @example
   * const bounced = await mailwarden.messages.list('acme', { recipient: 'Bob@Example.com', status: 'bounced', from: '2026-11-01' });
   * const bobs = await mailwarden.messages.list('acme', { recipientPrefix: 'bob', recipientDomain: 'example.com' });
   * const digests = await mailwarden.messages.list('acme', { stream: 'weekly-digest' });
   */
  list(projectId: string, query?: ListMessagesQuery): Promise<MessagePage>;

  /**
   * One message with its timeline, by its `id` (as listed: `messageKey(provider, messageId, recipient)`,
   * 32 lower-case hex characters), or `undefined` when the project has none with it (never seen, or
   * removed by retention). An id of any other form throws `invalid_request`.
   *
   * @example
   * const { items } = await mailwarden.messages.list('acme', { trackingId: 'newsletter-2026-11' });
   * const message = items[0] && (await mailwarden.messages.get('acme', items[0].id));
   * for (const entry of message?.timeline ?? []) console.log(entry.occurredAt, entry.type, entry.smtpStatus ?? '', entry.diagnostic ?? '');
   */
  get(projectId: string, id: string): Promise<MessageDetail | undefined>;
}

export interface TrackingIdService {
  /**
   * Tracking IDs with their counters, in code-point order, optionally matching a case-insensitive
   * substring. With a non-empty `trackingId`, only that exact ID (also filtered by `search`): a page of
   * 0 or 1 item with `next_cursor: null`, and a `cursor` beside it throws `invalid_cursor`.
   */
  list(projectId: string, query?: ListTrackingIdsQuery): Promise<TrackingIdPage>;

  /**
   * The counters of exactly this tracking ID (no case folding), or `undefined` when the project has no
   * message with it. An empty ID or one over 128 code points throws `invalid_tracking_id`.
   *
   * @example
   * const campaign = await mailwarden.trackingIds.get('acme', 'Newsletter-2026-01');
   * if (campaign !== undefined) console.log(`${campaign.bounced} of ${campaign.messages} bounced`);
   */
  get(projectId: string, trackingId: string): Promise<TrackingIdSummary | undefined>;

  /**
   * Counts over time of exactly this tracking ID: per UTC hour or day of `[from, to)`, the messages
   * delivered, hard- and soft-bounced, complained about, opened, clicked and unsubscribed from, each
   * message once per fact, in the bucket of its earliest event establishing it. Every bucket of the
   * range, zeros included. `from` and `to` lie on the interval's boundaries; at most 31 days of hours
   * or 731 days (`invalid_request` otherwise).
   *
   * @example
   * const { buckets } = await mailwarden.trackingIds.stats('acme', 'newsletter-2026-11', { from: '2026-11-01', to: '2026-11-08' });
   */
  stats(projectId: string, trackingId: string, query: StatsRangeQuery): Promise<Stats>;
}

export function toMessage(record: MessageRecord): Message {
  return {
    id: record.key,
    messageId: record.messageId,
    recipient: record.recipient,
    status: messageStatus(record.facts),
    trackingId: record.trackingId,
    // Only when it has one, so answers about messages without a stream stay as they were.
    ...(record.stream === null ? {} : { stream: record.stream }),
    provider: record.provider,
    facts: factNamesOf(record.facts),
    firstEventAt: formatTimestamp(record.firstEventAt),
    lastEventAt: formatTimestamp(record.lastEventAt),
  };
}

export function toTimelineEntry(entry: TimelineEntry): TimelineEntryView {
  return { ...entry, occurredAt: formatTimestamp(entry.occurredAt) };
}

export function toTrackingIdSummary(record: TrackingIdRecord): TrackingIdSummary {
  return { ...record, lastEventAt: formatTimestamp(record.lastEventAt) };
}

export function createMessageService({ store, cursors }: MailwardenContext): MessageService {
  return {
    async list(projectId, query = {}) {
      assertProjectId(projectId);
      const parsed = parseInput(listMessagesQuerySchema, query, 'message list query');
      const { status, provider, limit, cursor } = parsed;
      // An empty filter (`?trackingId=`) means no filter, as an empty tracking ID means none (docs/decisions.md#what-a-tracking-id-is).
      const trackingId = parsed.trackingId === '' || parsed.trackingId === undefined ? undefined : assertTrackingId(parsed.trackingId);
      // Stored recipients are normalized, so the filter is too (`invalid_email` for an unusable address).
      const recipient = parsed.recipient === '' || parsed.recipient === undefined ? undefined : normalizeEmail(parsed.recipient);
      // Partial searches: any text is a search (docs/http.md, "Partial search"); empty means no filter.
      const recipientPrefix = normalizeAddressPrefix(parsed.recipientPrefix, 'recipientPrefix');
      const recipientDomain = normalizeAddressDomain(parsed.recipientDomain, 'recipientDomain');
      // Empty means no filter, as for the other exact filters; any other name must be a stream's.
      const stream = parsed.stream === '' || parsed.stream === undefined ? undefined : assertStreamName(parsed.stream);
      const { from, to } = parseTimeRange(parsed);
      const filters = { recipient, recipientPrefix, recipientDomain, provider, stream, from, to };
      const page = await paginate(cursors, {
        // The filters added later join the scope only when set, so cursors issued before them stay valid.
        scope: { listing: 'messages', projectId, filters: { trackingId, status, ...definedFilters(filters) } },
        limit,
        cursor,
        position: messagePosition,
        fetch: (size, after) =>
          store.listMessages(projectId, {
            limit: size,
            ...(trackingId === undefined ? {} : { trackingId }),
            ...(status === undefined ? {} : { status }),
            ...(recipient === undefined ? {} : { recipient }),
            ...(recipientPrefix === undefined ? {} : { recipientPrefix }),
            ...(recipientDomain === undefined ? {} : { recipientDomain }),
            ...(provider === undefined ? {} : { provider }),
            ...(stream === undefined ? {} : { stream }),
            ...(from === undefined ? {} : { from }),
            ...(to === undefined ? {} : { to }),
            ...(after === undefined ? {} : { after: { firstEventAt: after.t, key: after.k } }),
          }),
        positionOf: (record) => ({ t: record.firstEventAt, k: record.key }),
      });
      const items = page.rows.map(toMessage);
      return { items, next_cursor: page.next_cursor, count: items.length };
    },

    async get(projectId, id) {
      assertProjectId(projectId);
      const key = parseInput(messageIdentifierSchema, id, 'message id');
      const found = await store.getMessage(projectId, key);
      if (found === undefined) return undefined;
      const { timeline, ...record } = found;
      return { ...toMessage(record), timeline: timeline.map(toTimelineEntry) };
    },
  };
}

export function createTrackingIdService(context: MailwardenContext): TrackingIdService {
  const { store, cursors } = context;
  const summaryOf = async (projectId: string, trackingId: string): Promise<TrackingIdSummary | undefined> => {
    const record = await store.getTrackingId(projectId, trackingId);
    return record === undefined ? undefined : toTrackingIdSummary(record);
  };

  return {
    async list(projectId, query = {}) {
      assertProjectId(projectId);
      const parsed = parseInput(listTrackingIdsQuerySchema, query, 'tracking ID list query');
      const { search, limit, cursor } = parsed;
      const searchCheck = checkTrackingId(search);
      if (!searchCheck.ok) throw new MailwardenError('invalid_request', `Invalid search: ${searchCheck.reason}.`);
      const searchKey = searchCheck.trackingId === null ? undefined : trackingIdSearchKey(searchCheck.trackingId);

      // An empty filter (`?trackingId=`) means no filter, as in the message listing.
      if (parsed.trackingId !== undefined && parsed.trackingId !== '') {
        const trackingId = assertTrackingId(parsed.trackingId);
        // This page is the whole answer and never has a next_cursor, so no cursor can continue it.
        if (cursor !== undefined) {
          throw new MailwardenError('invalid_cursor', 'Invalid cursor: a trackingId page is the whole answer; no cursor continues it.');
        }
        const summary = await summaryOf(projectId, trackingId);
        const found = summary !== undefined && (searchKey === undefined || trackingIdSearchKey(trackingId).includes(searchKey));
        const items = found ? [summary] : [];
        return { items, next_cursor: null, count: items.length };
      }

      const page = await paginate(cursors, {
        scope: { listing: 'tracking-ids', projectId, filters: { search: searchKey } },
        limit,
        cursor,
        position: trackingIdPosition,
        fetch: (size, after) =>
          store.listTrackingIds(projectId, {
            limit: size,
            ...(searchKey === undefined ? {} : { search: searchKey }),
            ...(after === undefined ? {} : { after: after.i }),
          }),
        positionOf: (record) => ({ i: record.trackingId }),
      });
      const items = page.rows.map(toTrackingIdSummary);
      return { items, next_cursor: page.next_cursor, count: items.length };
    },

    async get(projectId, trackingId) {
      assertProjectId(projectId);
      return summaryOf(projectId, assertTrackingId(trackingId));
    },

    async stats(projectId, trackingId, query) {
      assertProjectId(projectId);
      return readStats(context, projectId, assertTrackingId(trackingId), query);
    },
  };
}
