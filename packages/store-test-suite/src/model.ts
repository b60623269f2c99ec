import { strongerReason, type Store } from '@mailwarden/core';
import {
  provenanceWins,
  compareCodePoints,
  countersOf,
  mergeMessage,
  messageStatus,
  compareTimelineEntries,
  TIMELINE_CAP,
  TIMELINE_LIMITS,
  type TimelineEntry,
  trackingIdSearchKey,
  recipientDomainOf,
  hourOf,
  statFacts,
  sumHours,
  type EventOutcome,
  type SuppressionMergeOutcome,
  type MessagePosition,
  type MessageRecord,
  type SuppressionPosition,
  type SuppressionRecord,
  type TrackingIdRecord,
} from '@mailwarden/core/store';

/** The suppression join, written plainly: strongest reason, earliest time, the provenance `provenanceWins` keeps; in the known one's list. */
function joinSuppression(known: SuppressionRecord, seen: SuppressionRecord): SuppressionRecord {
  const provenance = provenanceWins(seen, known) ? seen.provenance : known.provenance;
  return {
    hash: known.hash,
    email: known.email,
    reason: strongerReason(known.reason, seen.reason),
    createdAt: Math.min(known.createdAt, seen.createdAt),
    ...(provenance === undefined ? {} : { provenance: structuredClone(provenance) }),
    ...(known.stream === undefined ? {} : { stream: known.stream }),
  };
}

/** Joins `seen` into the list of its stream and says what that did to its address there. */
function merge(state: ProjectModel, seen: SuppressionRecord): SuppressionMergeOutcome {
  const list = listOf(state, seen.stream);
  const known = list.get(seen.hash);
  list.set(seen.hash, known === undefined ? { ...seen } : joinSuppression(known, seen));
  if (known === undefined) return 'suppressed';
  return strongerReason(known.reason, seen.reason) === known.reason ? 'applied' : `upgraded_from_${known.reason}`;
}

/** The list of `stream` (the project-wide one when absent): each independent of the others. */
function listOf(state: ProjectModel, stream: string | undefined): Map<string, SuppressionRecord> {
  if (stream === undefined) return state.suppressions;
  let list = state.streams.get(stream);
  if (list === undefined) {
    list = new Map();
    state.streams.set(stream, list);
  }
  return list;
}

/** The check rule, plainly: the project-wide entry; else, for a stream, that stream's entry. */
function check(state: ProjectModel, hash: string, stream: string | undefined): SuppressionRecord | undefined {
  const wide = state.suppressions.get(hash);
  if (wide !== undefined || stream === undefined) return wide;
  return state.streams.get(stream)?.get(hash);
}

interface ProjectModel {
  /** The project-wide list, by hash. */
  suppressions: Map<string, SuppressionRecord>;
  /** One list per stream, by hash; its records carry `stream`. */
  streams: Map<string, Map<string, SuppressionRecord>>;
  eventKeys: Set<string>;
  messages: Map<string, MessageRecord>;
  /** Every timeline entry ever applied, by message key, unordered and never capped: `timelineOf` derives the timeline. */
  entries: Map<string, TimelineEntry[]>;
  /** What every applied event said about each message, by message key: `statsOf` derives the buckets. */
  seen: Map<string, MessageRecord[]>;
  /** One-time webhook token → the digest it was first claimed with (never forgotten: the contract allows keeping). */
  webhookTokens: Map<string, string>;
}

/** Newest first: `createdAt` descending, then `hash` ascending. */
function compareSuppressions(a: SuppressionPosition, b: SuppressionPosition): number {
  return b.createdAt - a.createdAt || compareCodePoints(a.hash, b.hash);
}

/** Newest first: `firstEventAt` descending, then `key` ascending. */
function compareMessages(a: MessagePosition, b: MessagePosition): number {
  return b.firstEventAt - a.firstEventAt || compareCodePoints(a.key, b.key);
}

/**
 * A timeline by its definition: every entry applied, in order, and when over the cap only the first
 * `TIMELINE_LIMITS.first` and the latest `TIMELINE_LIMITS.latest`. Stores keep it incrementally
 * (`insertTimelineEntry`); deriving it from everything checks that dropping early is never wrong.
 */
export function timelineOf(entries: readonly TimelineEntry[]): TimelineEntry[] {
  const sorted = [...entries].sort(compareTimelineEntries).map((entry) => ({ ...entry }));
  if (sorted.length <= TIMELINE_CAP) return sorted;
  return [...sorted.slice(0, TIMELINE_LIMITS.first), ...sorted.slice(sorted.length - TIMELINE_LIMITS.latest)];
}

/**
 * Tracking-ID rows derived from the messages themselves: a counter is the number of messages of the ID
 * that have the fact. Stores keep them incrementally (`trackingIdDeltas`); deriving them here checks that
 * bookkeeping instead of repeating it.
 */
function trackingIdRows(messages: Iterable<MessageRecord>): TrackingIdRecord[] {
  const rows = new Map<string, TrackingIdRecord>();
  for (const message of messages) {
    if (message.trackingId === null) continue;
    const row = rows.get(message.trackingId) ?? {
      trackingId: message.trackingId,
      messages: 0,
      delivered: 0,
      bounced: 0,
      complained: 0,
      lastEventAt: message.lastEventAt,
      opened: 0,
      clicked: 0,
      unsubscribed: 0,
    };
    const counters = countersOf(message.facts);
    row.messages += 1;
    row.delivered += counters.delivered;
    row.bounced += counters.bounced;
    row.complained += counters.complained;
    row.opened += counters.opened;
    row.clicked += counters.clicked;
    row.unsubscribed += counters.unsubscribed;
    row.lastEventAt = Math.max(row.lastEventAt, message.lastEventAt);
    rows.set(message.trackingId, row);
  }
  return [...rows.values()];
}

/**
 * The Store contract as plain, obviously correct code: Maps, and listings that sort and filter the
 * whole collection on every call. Every store must answer every call exactly as this does.
 */
export function createStoreModel(): Store {
  const projects = new Map<string, ProjectModel>();
  const project = (projectId: string): ProjectModel => {
    const state = projects.get(projectId) ?? {
      suppressions: new Map(),
      streams: new Map(),
      eventKeys: new Set(),
      messages: new Map(),
      entries: new Map(),
      seen: new Map(),
      webhookTokens: new Map(),
    };
    projects.set(projectId, state);
    return state;
  };
  const copy = <T extends object>(record: T | undefined): T | undefined => (record === undefined ? undefined : { ...record });

  return {
    async getSuppression(projectId, hash, stream) {
      return copy(check(project(projectId), hash, stream));
    },

    async getSuppressions(projectId, hashes, stream) {
      return hashes.map((hash) => copy(check(project(projectId), hash, stream)));
    },

    async addSuppression(projectId, record) {
      const suppressions = listOf(project(projectId), record.stream);
      const existing = suppressions.get(record.hash);
      if (existing !== undefined) return { record: { ...existing }, created: false };
      suppressions.set(record.hash, { ...record });
      return { record: { ...record }, created: true };
    },

    async removeSuppression(projectId, hash, stream) {
      const suppressions = listOf(project(projectId), stream);
      const record = suppressions.get(hash);
      suppressions.delete(hash);
      return copy(record);
    },

    async mergeSuppressions(projectId, records) {
      const state = project(projectId);
      return records.map((record) => merge(state, record));
    },

    async removeSuppressions(projectId, hashes, stream) {
      const suppressions = listOf(project(projectId), stream);
      return hashes.map((hash) => {
        const record = suppressions.get(hash);
        suppressions.delete(hash);
        return copy(record);
      });
    },

    async listSuppressions(projectId, { stream, reason, emailPrefix, from, to, limit, after }) {
      return [...listOf(project(projectId), stream).values()]
        .sort(compareSuppressions)
        .filter((record) => reason === undefined || record.reason === reason)
        .filter((record) => emailPrefix === undefined || record.email.startsWith(emailPrefix))
        .filter((record) => from === undefined || record.createdAt >= from)
        .filter((record) => to === undefined || record.createdAt < to)
        .filter((record) => after === undefined || compareSuppressions(record, after) > 0)
        .slice(0, limit)
        .map((record) => ({ ...record }));
    },

    async applyEvents(projectId, events) {
      const state = project(projectId);
      return events.map((event): EventOutcome => {
        if (state.eventKeys.has(event.key)) return 'duplicate';
        state.eventKeys.add(event.key);
        if (event.message !== null) {
          const { key } = event.message;
          state.seen.set(key, [...(state.seen.get(key) ?? []), { ...event.message }]);
          state.messages.set(key, mergeMessage(state.messages.get(key), { ...event.message }));
          if (event.timelineEntry !== undefined) state.entries.set(key, [...(state.entries.get(key) ?? []), { ...event.timelineEntry }]);
        }
        return event.suppression === null ? 'applied' : merge(state, event.suppression);
      });
    },

    async listMessages(
      projectId,
      { trackingId, status, recipient, recipientPrefix, recipientDomain, provider, stream, from, to, limit, after },
    ) {
      return [...project(projectId).messages.values()]
        .sort(compareMessages)
        .filter((message) => trackingId === undefined || message.trackingId === trackingId)
        .filter((message) => status === undefined || messageStatus(message.facts) === status)
        .filter((message) => recipient === undefined || message.recipient === recipient)
        .filter((message) => recipientPrefix === undefined || message.recipient.startsWith(recipientPrefix))
        .filter((message) => recipientDomain === undefined || recipientDomainOf(message.recipient) === recipientDomain)
        .filter((message) => provider === undefined || message.provider === provider)
        .filter((message) => stream === undefined || message.stream === stream)
        .filter((message) => from === undefined || message.lastEventAt >= from)
        .filter((message) => to === undefined || message.lastEventAt < to)
        .filter((message) => after === undefined || compareMessages(message, after) > 0)
        .slice(0, limit)
        .map((message) => ({ ...message }));
    },

    async getMessage(projectId, key) {
      const { messages, entries } = project(projectId);
      const message = messages.get(key);
      return message === undefined ? undefined : { ...message, timeline: timelineOf(entries.get(key) ?? []) };
    },

    async listTrackingIds(projectId, { search, limit, after }) {
      return trackingIdRows(project(projectId).messages.values())
        .sort((a, b) => compareCodePoints(a.trackingId, b.trackingId))
        .filter((row) => search === undefined || trackingIdSearchKey(row.trackingId).includes(search))
        .filter((row) => after === undefined || compareCodePoints(row.trackingId, after) > 0)
        .slice(0, limit);
    },

    async getTrackingId(projectId, trackingId) {
      return trackingIdRows(project(projectId).messages.values()).find((row) => row.trackingId === trackingId);
    },

    async getStats(projectId, { trackingId, interval, from, to }) {
      // By definition: a message counts 1 for a fact in the hour of the earliest event with that fact,
      // under the tracking ID it has now.
      const { messages, seen } = project(projectId);
      const hours = new Map<number, number[]>();
      for (const [key, records] of seen) {
        if (trackingId !== undefined && messages.get(key)!.trackingId !== trackingId) continue;
        statFacts.forEach((bit, column) => {
          const times = records.filter((record) => (record.facts & bit) !== 0).map((record) => record.firstEventAt);
          if (times.length === 0) return;
          const hour = hourOf(Math.min(...times));
          const counts = hours.get(hour) ?? statFacts.map(() => 0);
          counts[column]! += 1;
          hours.set(hour, counts);
        });
      }
      return sumHours(hours, interval, from, to);
    },

    async claimWebhookToken(projectId, token, digest) {
      const { webhookTokens } = project(projectId);
      const known = webhookTokens.get(token);
      if (known === undefined) {
        webhookTokens.set(token, digest);
        return 'first';
      }
      return known === digest ? 'same' : 'conflict';
    },

    async close() {},
  } satisfies Store;
}
