import {
  compareCodePoints,
  insertTimelineEntry,
  mergeFactTimes,
  statFacts,
  statsMoves,
  sumHours,
  type FactTimes,
  mergeMessage,
  messageStatus,
  provenanceWins,
  recipientDomainOf,
  strongerReason,
  trackingIdDeltas,
  trackingIdSearchKey,
  type EventOutcome,
  type SuppressionMergeOutcome,
  type MessagePosition,
  type MessageRecord,
  type Store,
  type StoredEvent,
  type SuppressionPosition,
  type SuppressionRecord,
  type TimelineEntry,
  type TrackingIdRecord,
} from '@mailwarden/core/store';

/** One project's tables. A real store keeps them in its database, keyed by project first. */
interface Tables {
  /** Every list's suppressions (the project-wide one and one per stream), by `slot(stream, hash)`. */
  suppressions: Map<string, SuppressionRecord>;
  eventKeys: Set<string>;
  messages: Map<string, MessageRecord>;
  timelines: Map<string, TimelineEntry[]>;
  factTimes: Map<string, FactTimes>;
  /** Hour buckets by scope ('' the project, else a tracking ID) and hour. */
  buckets: Map<string, Map<number, number[]>>;
  trackingIds: Map<string, TrackingIdRecord>;
  webhookTokens: Map<string, string>;
}

// The listing orders of the contract: a real store keeps an index in each.
const newestSuppressionFirst = (a: SuppressionPosition, b: SuppressionPosition) =>
  b.createdAt - a.createdAt || compareCodePoints(a.hash, b.hash);
const newestMessageFirst = (a: MessagePosition, b: MessagePosition) => b.firstEventAt - a.firstEventAt || compareCodePoints(a.key, b.key);

/** Where a suppression lives: its list (a stream's, or '' for the project-wide one, which no stream is named) and its hash. */
const slot = (stream: string | undefined, hash: string) => `${stream ?? ''}/${hash}`;

/** The check rule: the project-wide entry; else, for a stream, that stream's. */
const check = (t: Tables, hash: string, stream: string | undefined) =>
  t.suppressions.get(slot(undefined, hash)) ?? (stream === undefined ? undefined : t.suppressions.get(slot(stream, hash)));

/** A `Store` over Maps: core's functions decide every merge, the store only keeps and orders. */
export function createMapStore(): Store {
  const projects = new Map<string, Tables>();
  const tables = (projectId: string): Tables => {
    let found = projects.get(projectId);
    if (found === undefined) {
      found = {
        suppressions: new Map(),
        eventKeys: new Set(),
        messages: new Map(),
        timelines: new Map(),
        factTimes: new Map(),
        buckets: new Map(),
        trackingIds: new Map(),
        webhookTokens: new Map(),
      };
      projects.set(projectId, found);
    }
    return found;
  };
  const copy = <T extends object>(record: T | undefined): T | undefined => (record === undefined ? undefined : { ...record });

  // One event, wholly: a real store makes this one transaction.
  function apply(t: Tables, event: StoredEvent): EventOutcome {
    if (t.eventKeys.has(event.key)) return 'duplicate';
    t.eventKeys.add(event.key);
    if (event.message !== null) {
      const before = t.messages.get(event.message.key);
      const after = mergeMessage(before, { ...event.message });
      t.messages.set(after.key, after);
      const beforeTimes = t.factTimes.get(after.key);
      const afterTimes = mergeFactTimes(before, beforeTimes, event.message);
      t.factTimes.set(after.key, afterTimes);
      for (const move of statsMoves(before?.trackingId ?? null, beforeTimes, after.trackingId, afterTimes)) {
        const hours = t.buckets.get(move.trackingId ?? '') ?? new Map<number, number[]>();
        const counts = hours.get(move.hour) ?? statFacts.map(() => 0);
        counts[move.column]! += move.delta;
        hours.set(move.hour, counts);
        t.buckets.set(move.trackingId ?? '', hours);
      }
      if (event.timelineEntry !== undefined) {
        const timeline = t.timelines.get(after.key) ?? [];
        insertTimelineEntry(timeline, { ...event.timelineEntry });
        t.timelines.set(after.key, timeline);
      }
      for (const delta of trackingIdDeltas(before, after)) {
        const empty = {
          trackingId: delta.trackingId,
          messages: 0,
          delivered: 0,
          bounced: 0,
          complained: 0,
          lastEventAt: -Infinity,
          opened: 0,
          clicked: 0,
          unsubscribed: 0,
        };
        const current = t.trackingIds.get(delta.trackingId) ?? empty;
        const messages = current.messages + delta.messages;
        if (messages === 0) {
          t.trackingIds.delete(delta.trackingId);
          continue;
        }
        const lastEventAt =
          delta.lastEventAt === 'recompute'
            ? Math.max(...[...t.messages.values()].filter((m) => m.trackingId === delta.trackingId).map((m) => m.lastEventAt))
            : Math.max(current.lastEventAt, delta.lastEventAt.raise);
        t.trackingIds.set(delta.trackingId, {
          trackingId: delta.trackingId,
          messages,
          delivered: current.delivered + delta.delivered,
          bounced: current.bounced + delta.bounced,
          complained: current.complained + delta.complained,
          lastEventAt,
          opened: current.opened + delta.opened,
          clicked: current.clicked + delta.clicked,
          unsubscribed: current.unsubscribed + delta.unsubscribed,
        });
      }
    }
    return event.suppression === null ? 'applied' : merge(t, event.suppression);
  }

  // One suppression joined into its list, wholly: what an event's suppression and a bulk import both do.
  function merge(t: Tables, seen: SuppressionRecord): SuppressionMergeOutcome {
    const at = slot(seen.stream, seen.hash);
    const known = t.suppressions.get(at);
    if (known === undefined) {
      t.suppressions.set(at, { ...seen });
      return 'suppressed';
    }
    // The provenance is the winner's (provenanceWins: the stronger reason's, then the earlier cause's).
    const reason = strongerReason(known.reason, seen.reason);
    t.suppressions.set(at, {
      ...(provenanceWins(seen, known) ? seen : known),
      email: known.email,
      reason,
      createdAt: Math.min(known.createdAt, seen.createdAt),
    });
    // The outcome says what the event did to the address: here, raised its reason.
    return reason === known.reason ? 'applied' : `upgraded_from_${known.reason}`;
  }

  return {
    async getSuppression(projectId, hash, stream) {
      return copy(check(tables(projectId), hash, stream));
    },
    async getSuppressions(projectId, hashes, stream) {
      return hashes.map((hash) => copy(check(tables(projectId), hash, stream)));
    },
    async addSuppression(projectId, record) {
      const { suppressions } = tables(projectId);
      const existing = suppressions.get(slot(record.stream, record.hash));
      if (existing !== undefined) return { record: { ...existing }, created: false };
      suppressions.set(slot(record.stream, record.hash), { ...record });
      return { record: { ...record }, created: true };
    },
    async removeSuppression(projectId, hash, stream) {
      const { suppressions } = tables(projectId);
      const record = suppressions.get(slot(stream, hash));
      suppressions.delete(slot(stream, hash));
      return record;
    },
    async mergeSuppressions(projectId, records) {
      return records.map((record) => merge(tables(projectId), record));
    },
    async removeSuppressions(projectId, hashes, stream) {
      const { suppressions } = tables(projectId);
      return hashes.map((hash) => {
        const record = suppressions.get(slot(stream, hash));
        suppressions.delete(slot(stream, hash));
        return record;
      });
    },
    async listSuppressions(projectId, { stream, reason, emailPrefix, from, to, limit, after }) {
      return [...tables(projectId).suppressions.values()]
        .filter((record) => record.stream === stream)
        .filter((record) => reason === undefined || record.reason === reason)
        .filter((record) => emailPrefix === undefined || record.email.startsWith(emailPrefix))
        .filter((record) => (from === undefined || record.createdAt >= from) && (to === undefined || record.createdAt < to))
        .filter((record) => after === undefined || newestSuppressionFirst(record, after) > 0)
        .sort(newestSuppressionFirst)
        .slice(0, limit)
        .map((record) => ({ ...record }));
    },
    async applyEvents(projectId, events) {
      return events.map((event) => apply(tables(projectId), event));
    },
    async getStats(projectId, { trackingId, interval, from, to }) {
      return sumHours(tables(projectId).buckets.get(trackingId ?? '') ?? [], interval, from, to);
    },
    async getMessage(projectId, key) {
      const t = tables(projectId);
      const message = t.messages.get(key);
      return message === undefined ? undefined : { ...message, timeline: (t.timelines.get(key) ?? []).map((entry) => ({ ...entry })) };
    },
    async listMessages(
      projectId,
      { trackingId, status, recipient, recipientPrefix, recipientDomain, provider, stream, from, to, limit, after },
    ) {
      return [...tables(projectId).messages.values()]
        .filter((message) => trackingId === undefined || message.trackingId === trackingId)
        .filter((message) => status === undefined || messageStatus(message.facts) === status)
        .filter(
          (message) =>
            (recipient === undefined || message.recipient === recipient) && (provider === undefined || message.provider === provider),
        )
        .filter((message) => recipientPrefix === undefined || message.recipient.startsWith(recipientPrefix))
        .filter((message) => recipientDomain === undefined || recipientDomainOf(message.recipient) === recipientDomain)
        .filter((message) => stream === undefined || message.stream === stream)
        .filter((message) => (from === undefined || message.lastEventAt >= from) && (to === undefined || message.lastEventAt < to))
        .filter((message) => after === undefined || newestMessageFirst(message, after) > 0)
        .sort(newestMessageFirst)
        .slice(0, limit)
        .map((message) => ({ ...message }));
    },
    async listTrackingIds(projectId, { search, limit, after }) {
      return [...tables(projectId).trackingIds.values()]
        .filter((record) => search === undefined || trackingIdSearchKey(record.trackingId).includes(search))
        .filter((record) => after === undefined || compareCodePoints(record.trackingId, after) > 0)
        .sort((a, b) => compareCodePoints(a.trackingId, b.trackingId))
        .slice(0, limit)
        .map((record) => ({ ...record }));
    },
    async getTrackingId(projectId, trackingId) {
      return copy(tables(projectId).trackingIds.get(trackingId));
    },
    async claimWebhookToken(projectId, token, digest) {
      const { webhookTokens } = tables(projectId);
      const known = webhookTokens.get(token);
      if (known === undefined) webhookTokens.set(token, digest);
      return known === undefined ? 'first' : known === digest ? 'same' : 'conflict';
    },
    async close() {},
  };
}
