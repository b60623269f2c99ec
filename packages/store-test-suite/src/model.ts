import { isDeepStrictEqual } from 'node:util';
import { MailwardenError, strongerReason, type Store } from '@mailwarden/core';
import {
  changeFeedRetention,
  actorMatches,
  ruleActors,
  type AddressErasure,
  type ErasureResult,
  type KeyChange,
  type SyncedKey,
  Fact,
  type AlertChange,
  type Change,
  type ChangeFeedOptions,
  type OutboundState,
  type PausedStream,
  type StoredAlertRule,
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
  type AllowlistEntry,
  type SoftBounceInput,
  type StoredEvent,
  type StoredSoftBounceRule,
} from '@mailwarden/core/store';

/** Whether `record` is expired at `now`: it has an `expiresAt` at or before `now` (no `now`: never). */
function expired(record: SuppressionRecord, now: number | undefined): boolean {
  return now !== undefined && record.expiresAt !== undefined && record.expiresAt <= now;
}

/** The record of `hash` in `list`, unless it is expired at `now` (then it counts as absent). */
function live(list: Map<string, SuppressionRecord> | undefined, hash: string, now: number | undefined): SuppressionRecord | undefined {
  const record = list?.get(hash);
  return record === undefined || expired(record, now) ? undefined : record;
}

/** The suppression join, written plainly: strongest reason, earliest time, the provenance `provenanceWins` keeps; in the known one's list. */
function joinSuppression(known: SuppressionRecord, seen: SuppressionRecord): SuppressionRecord {
  // The expiry goes with the provenance: the winner brings its own (docs/decisions.md, "Suppressions that expire").
  const winner = provenanceWins(seen, known) ? seen : known;
  return {
    hash: known.hash,
    email: known.email,
    reason: strongerReason(known.reason, seen.reason),
    createdAt: Math.min(known.createdAt, seen.createdAt),
    ...(winner.provenance === undefined ? {} : { provenance: structuredClone(winner.provenance) }),
    ...(known.stream === undefined ? {} : { stream: known.stream }),
    ...(winner.expiresAt === undefined ? {} : { expiresAt: winner.expiresAt }),
  };
}

/**
 * Joins `seen` into the list of its stream and says what that did to its address there. At `now`, a
 * `seen` already expired is not written, and a stored record expired counts as absent (`seen` replaces it).
 */
function merge(state: ProjectModel, seen: SuppressionRecord, now: number | undefined, actor: string | undefined): SuppressionMergeOutcome {
  if (expired(seen, now)) return 'applied';
  const list = listOf(state, seen.stream);
  const known = live(list, seen.hash, now);
  const at = now ?? seen.createdAt;
  if (known === undefined) {
    replaceExpired(state, list, seen.hash, at);
    list.set(seen.hash, structuredClone(seen));
    append(state, { kind: 'suppression.added', at, record: structuredClone(seen) }, actor);
    return 'suppressed';
  }
  const joined = joinSuppression(known, seen);
  list.set(seen.hash, joined);
  const upgraded = strongerReason(known.reason, seen.reason) !== known.reason;
  if (upgraded || !isDeepStrictEqual(known, joined))
    append(
      state,
      {
        kind: upgraded ? 'suppression.upgraded' : 'suppression.updated',
        at,
        record: structuredClone(joined),
        previous: structuredClone(known),
      },
      actor,
    );
  return upgraded ? `upgraded_from_${known.reason}` : 'applied';
}

/** A change as a write makes it: the feed numbers it. */
type NewChange = Change extends infer C ? (C extends Change ? Omit<C, 'seq'> : never) : never;

/** Appends to the project's feed when the store keeps one (docs/decisions.md, "The change feed"), with its actor when it has one. */
function append(state: ProjectModel, change: NewChange, actor: string | undefined): void {
  if (!state.feed.on) return;
  state.feed.last += 1;
  state.feed.changes.push({ seq: state.feed.last, ...change, ...(actor === undefined ? {} : { actor }) } as Change);
}

/** A write about to replace the stored record of `hash`, expired at its `now`: that record's `suppression.expired` comes first. */
function replaceExpired(state: ProjectModel, list: Map<string, SuppressionRecord>, hash: string, at: number): void {
  const stored = list.get(hash);
  if (stored !== undefined) append(state, { kind: 'suppression.expired', at, record: structuredClone(stored) }, ruleActors.expiry);
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

/** The check rule, plainly: the project-wide entry; else, for a stream, that stream's entry; expired ones absent. */
function check(state: ProjectModel, hash: string, stream: string | undefined, now: number | undefined): SuppressionRecord | undefined {
  const wide = live(state.suppressions, hash, now);
  if (wide !== undefined || stream === undefined) return wide;
  return live(state.streams.get(stream), hash, now);
}

/** Whether the recipient's hash, or `@` and its domain (after the last `@`), is on the allowlist. */
function allowlisted(state: ProjectModel, recipient: { hash: string; email: string }): boolean {
  return state.allowlist.has(recipient.hash) || state.allowlist.has(`@${recipient.email.slice(recipient.email.lastIndexOf('@') + 1)}`);
}

/** The (at, eventId) order of a soft-bounce history. */
function compareBounces(a: SoftBounceInput, b: SoftBounceInput): number {
  return a.at - b.at || compareCodePoints(a.cause.eventId, b.cause.eventId);
}

/**
 * The soft-bounce rule for one applied event, exactly as docs/decisions.md, "The soft-bounce rule",
 * states it (the numbered steps of the design): the history kept, and the window that suppresses.
 * Returns what it did to the project-wide list.
 */
function applyRule(
  state: ProjectModel,
  input: NonNullable<StoredEvent['ruleInput']>,
  rule: StoredSoftBounceRule,
  now: number | undefined,
): SuppressionMergeOutcome {
  const horizon = now === undefined ? -Infinity : now - rule.keepMs;
  // 1. The history, without what is older than the keep time.
  const history = state.history.get(input.hash) ?? { bounces: [] };
  let bounces = history.bounces.filter((bounce) => bounce.at >= horizon);
  let lastDelivery = history.lastDelivery !== undefined && history.lastDelivery >= horizon ? history.lastDelivery : undefined;
  const save = () => {
    if (bounces.length === 0 && lastDelivery === undefined) state.history.delete(input.hash);
    else state.history.set(input.hash, { bounces, ...(lastDelivery === undefined ? {} : { lastDelivery }) });
  };
  // 2. A delivery: bounces before the latest delivery stop counting.
  if (input.kind === 'delivery') {
    if (input.at >= horizon) {
      lastDelivery = Math.max(lastDelivery ?? -Infinity, input.at);
      const reset = lastDelivery;
      bounces = bounces.filter((bounce) => bounce.at >= reset);
    }
    save();
    return 'applied';
  }
  // 3. A soft bounce that is not kept.
  const wide = live(state.suppressions, input.hash, now);
  const sameMessage = bounces.find((bounce) => bounce.message === input.message);
  if (
    allowlisted(state, input) ||
    input.at < horizon ||
    (rule.resetOnDelivery && lastDelivery !== undefined && input.at < lastDelivery) ||
    (wide !== undefined &&
      (wide.reason === 'hard_bounce' || wide.reason === 'complaint') &&
      wide.provenance !== undefined &&
      wide.provenance.at < input.at) ||
    (sameMessage !== undefined && compareBounces(sameMessage, input) <= 0)
  ) {
    save();
    return 'applied';
  }
  // 4. Kept, in order (one per message, its earliest); the earliest-ending window of `bounces` that holds it.
  bounces = [...bounces.filter((bounce) => bounce !== sameMessage), input].sort(compareBounces);
  const i = bounces.indexOf(input);
  const n = rule.bounces;
  // A window whose suppression would already be expired at `now` does not count: a later one may (found by the order law).
  const expiredAt = (last: SoftBounceInput) => rule.expiresAfterMs !== null && now !== undefined && last.at + rule.expiresAfterMs <= now;
  let window: SoftBounceInput[] | undefined;
  for (let j = Math.max(0, i - n + 1); j <= i && window === undefined; j++) {
    const first = bounces[j]!;
    const last = bounces[j + n - 1];
    if (last !== undefined && last.at - first.at <= rule.windowMs && !expiredAt(last)) window = bounces.slice(j, j + n);
  }
  if (window === undefined) {
    save();
    return 'applied';
  }
  // 5. The window suppresses project-wide, as of its last bounce.
  const end = window[window.length - 1]!;
  const candidate: SuppressionRecord = {
    hash: input.hash,
    email: input.email,
    reason: 'hard_bounce',
    createdAt: end.at,
    provenance: {
      source: 'webhook',
      at: end.at,
      event: { ...end.cause },
      rule: {
        bounces: rule.bounces,
        days: rule.days,
        resetOnDelivery: rule.resetOnDelivery,
        events: window.map((bounce) => ({ ...bounce.cause, at: bounce.at })),
      },
    },
    ...(rule.expiresAfterMs === null ? {} : { expiresAt: end.at + rule.expiresAfterMs }),
  };
  // The stored window ends at the same bounce: a bounce arrived between its members, and this window, of the
  // kept bounces now, replaces it (a join would keep either by arrival: found by the order law).
  const stored = live(state.suppressions, input.hash, now);
  const sameEnd =
    stored?.provenance?.rule !== undefined && stored.provenance.at === end.at && stored.provenance.event?.eventId === end.cause.eventId;
  if (sameEnd) {
    const replaced: SuppressionRecord = {
      ...stored,
      provenance: candidate.provenance!,
      ...(candidate.expiresAt === undefined ? {} : { expiresAt: candidate.expiresAt }),
    };
    state.suppressions.set(input.hash, replaced);
    if (!isDeepStrictEqual(stored, replaced))
      append(
        state,
        {
          kind: 'suppression.updated',
          at: now ?? candidate.createdAt,
          record: structuredClone(replaced),
          previous: structuredClone(stored),
        },
        ruleActors.softBounces,
      );
  }
  const outcome = sameEnd ? 'applied' : merge(state, candidate, now, ruleActors.softBounces);
  // Bounces after a suppression cannot move it (step 3d would skip them): forget them.
  bounces = bounces.filter((bounce) => bounce.at <= end.at);
  save();
  return outcome;
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
  /** The allowlist, by key (a hash, or `@` and a domain). */
  allowlist: Map<string, AllowlistEntry>;
  /** The soft-bounce rule's history, by hash: the kept bounces in (at, eventId) order, and the latest delivery. */
  history: Map<string, { bounces: SoftBounceInput[]; lastDelivery?: number }>;
  /** The change feed: kept only when the store was made with `changes`; `trimmed` = the highest seq retention deleted. */
  feed: { on: boolean; changes: Change[]; last: number; trimmed: number };
  /** Alert windows by scope (`null`: the project's): the window's messages oldest first, and whether each alert is up. */
  windows: Map<string | null, WindowModel>;
  paused: Map<string, PausedStream>;
  /** Outbound delivery state by endpoint, with its lease. */
  outbound: Map<string, OutboundState & { owner: string; until: number }>;
  /** The keys `syncApiKeys` last made the project's, by name. */
  keys: Map<string, SyncedKey>;
  /** Erased messages as counts alone (no key, no recipient): tracking-ID rows and stats keep them (docs/decisions.md, "Erasure"). */
  erased: { message: MessageRecord; seen: MessageRecord[] }[];
}

interface WindowModel {
  slots: { key: string; bounced: boolean; complained: boolean }[];
  bounceFiring: boolean;
  complaintFiring: boolean;
}

/**
 * The alert windows for one applied event whose message is `message` after the merge (`created`: the event
 * made it), as `ApplyEventsOptions.alerts` says: entry, counts, then the thresholds of each window it moved.
 */
function moveAlertWindows(
  state: ProjectModel,
  rule: StoredAlertRule,
  message: MessageRecord,
  before: MessageRecord | undefined,
  at: number,
): void {
  const created = before === undefined;
  // A new message enters its tracking ID's window; a gained fact counts where the key is, under the ID before or after.
  const ids = new Set([before?.trackingId ?? null, message.trackingId].filter((id) => id !== null));
  const scopes = rule.trackingIds ? [null, ...ids] : [null];
  const bounced = (message.facts & Fact.hard_bounced) !== 0;
  const complained = (message.facts & Fact.complained) !== 0;
  let pausedBy: PausedStream['cause'] | undefined;
  for (const scope of scopes) {
    let window = state.windows.get(scope);
    let moved = false;
    if (created) {
      window ??= { slots: [], bounceFiring: false, complaintFiring: false };
      state.windows.set(scope, window);
      window.slots.push({ key: message.key, bounced, complained });
      while (window.slots.length > rule.window) window.slots.shift();
      moved = true;
    } else {
      const slot = window?.slots.find((candidate) => candidate.key === message.key);
      if (slot !== undefined && ((bounced && !slot.bounced) || (complained && !slot.complained))) {
        slot.bounced ||= bounced;
        slot.complained ||= complained;
        moved = true;
      }
    }
    if (!moved || window === undefined) continue;
    const messages = window.slots.length;
    for (const kind of ['alert.bounce_rate', 'alert.complaint_rate'] as const) {
      const bounce = kind === 'alert.bounce_rate';
      const { firePpm, resolvePpm } = bounce ? rule.bounce : rule.complaint;
      const count = window.slots.filter((slot) => (bounce ? slot.bounced : slot.complained)).length;
      const firing = bounce ? window.bounceFiring : window.complaintFiring;
      const up = !firing && messages >= rule.minMessages && count * 1e6 >= firePpm * messages;
      const down = firing && count * 1e6 < resolvePpm * messages;
      if (!up && !down) continue;
      if (bounce) window.bounceFiring = up;
      else window.complaintFiring = up;
      append(
        state,
        { kind, at, trackingId: scope, firing: up, messages, count, thresholdPpm: up ? firePpm : resolvePpm } satisfies Omit<
          AlertChange,
          'seq'
        >,
        ruleActors.alerts,
      );
      if (up && scope === null) pausedBy ??= kind;
    }
  }
  if (pausedBy === undefined) return;
  for (const stream of rule.pause) {
    if (state.paused.has(stream)) continue;
    const paused: PausedStream = { stream, pausedAt: at, cause: pausedBy };
    state.paused.set(stream, paused);
    append(state, { kind: 'stream.paused', at, stream, cause: pausedBy }, ruleActors.alerts);
  }
}

/** The address hash a change is about (`ChangeQuery.hash`): a suppression's, an allowlist entry's key, an erasure's. */
function hashOf(change: Change): string | undefined {
  if ('record' in change) return change.record.hash;
  if ('entry' in change) return change.entry.key;
  if (change.kind === 'address.erased') return change.hash;
  return undefined;
}

/** Every message tracking-ID rows count: the stored ones and the erased ones' counts. */
function countedMessages(state: ProjectModel): MessageRecord[] {
  return [...state.messages.values(), ...state.erased.map((ghost) => ghost.message)];
}

/** A record as erasure keeps it: the placeholder email, no diagnostic in its provenance. */
function erasedRecord(record: SuppressionRecord, email: string): SuppressionRecord {
  const { provenance } = record;
  const kept = structuredClone({ ...record, email });
  if (provenance === undefined) return kept;
  const { event, rule } = kept.provenance!;
  if (event !== undefined) event.diagnostic = null;
  if (rule !== undefined) for (const bounce of rule.events) bounce.diagnostic = null;
  return kept;
}

/** `Store.eraseAddress`, as its contract lists it, step by step. */
function erase(state: ProjectModel, erasure: AddressErasure): ErasureResult {
  const { hash, email, forms, now } = erasure;
  const placeholder = erasure.suppression.email;
  // 1. Suppressions stay, by hash only; the project-wide one without expiry, or the erasure's when none is live.
  const wide = live(state.suppressions, hash, now);
  if (wide === undefined) state.suppressions.set(hash, structuredClone(erasure.suppression));
  else {
    const { expiresAt: _expiresAt, ...lasting } = erasedRecord(wide, placeholder);
    state.suppressions.set(hash, lasting);
  }
  const records = [structuredClone(state.suppressions.get(hash)!)];
  for (const stream of [...state.streams.keys()].sort(compareCodePoints)) {
    const list = state.streams.get(stream)!;
    const record = list.get(hash);
    if (record === undefined) continue;
    list.set(hash, erasedRecord(record, placeholder));
    records.push(structuredClone(list.get(hash)!));
  }
  // 2. The allowlist entry and the rule's history.
  state.allowlist.delete(hash);
  state.history.delete(hash);
  // 3. Messages to it, their timelines and their events' dedup keys; counts stay, without key or recipient.
  const gone = [...state.messages.values()].filter((message) => message.recipient === email);
  for (const message of gone) {
    for (const entry of state.entries.get(message.key) ?? []) state.eventKeys.delete(`${entry.provider}:${entry.eventKey}`);
    const blank = (record: MessageRecord) => ({ ...record, key: '', recipient: '', messageId: '' });
    state.erased.push({ message: blank(message), seen: (state.seen.get(message.key) ?? []).map(blank) });
    state.messages.delete(message.key);
    state.entries.delete(message.key);
    state.seen.delete(message.key);
  }
  for (const key of state.eventKeys) if (forms.some((form) => key.includes(form))) state.eventKeys.delete(key);
  // 4. The feed's changes about it; earlier erasures stay.
  const about = (change: Change) =>
    change.kind === 'message.status_changed'
      ? change.message.recipient === email
      : change.kind !== 'address.erased' && hashOf(change) === hash;
  const before = state.feed.changes.length;
  state.feed.changes = state.feed.changes.filter((change) => !about(change));
  const result = { records, messages: gone.length, changes: before - state.feed.changes.length };
  append(state, { kind: 'address.erased', at: now, hash, ...structuredClone(result) }, erasure.actor);
  return result;
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
export function createStoreModel(options: { changes?: ChangeFeedOptions } = {}): Store {
  const retention = options.changes === undefined ? undefined : changeFeedRetention(options.changes);
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
      allowlist: new Map(),
      history: new Map(),
      feed: { on: retention !== undefined, changes: [], last: 0, trimmed: 0 },
      windows: new Map(),
      paused: new Map(),
      outbound: new Map(),
      keys: new Map(),
      erased: [],
    };
    projects.set(projectId, state);
    return state;
  };
  const copy = <T extends object>(record: T | undefined): T | undefined => (record === undefined ? undefined : structuredClone(record));
  /** Removing from the project-wide list forgets the hash's soft-bounce history: the rule counts afresh. */
  const remove = (state: ProjectModel, hash: string, stream: string | undefined, now: number | undefined, actor: string | undefined) => {
    const suppressions = listOf(state, stream);
    const record = suppressions.get(hash);
    suppressions.delete(hash);
    if (stream === undefined) state.history.delete(hash);
    if (record !== undefined) append(state, { kind: 'suppression.removed', at: now ?? 0, record: structuredClone(record) }, actor);
    return copy(record);
  };
  /** Rate-limit counters of every instance sharing the store, by bucket: the window counted and its count. */
  const rateCounters = new Map<string, { window: number; count: number }>();
  const outboundState = ({ owner: _owner, until: _until, ...state }: OutboundState & { owner: string; until: number }): OutboundState => ({
    ...state,
  });

  return {
    async getSuppression(projectId, hash, stream, now) {
      return copy(check(project(projectId), hash, stream, now));
    },

    async getSuppressions(projectId, hashes, stream, now) {
      return hashes.map((hash) => copy(check(project(projectId), hash, stream, now)));
    },

    async addSuppression(projectId, record, now, actor) {
      const state = project(projectId);
      const suppressions = listOf(state, record.stream);
      const existing = live(suppressions, record.hash, now);
      if (existing !== undefined) return { record: structuredClone(existing), created: false };
      const at = now ?? record.createdAt;
      replaceExpired(state, suppressions, record.hash, at);
      suppressions.set(record.hash, structuredClone(record));
      append(state, { kind: 'suppression.added', at, record: structuredClone(record) }, actor);
      return { record: structuredClone(record), created: true };
    },

    async removeSuppression(projectId, hash, stream, now, actor) {
      return remove(project(projectId), hash, stream, now, actor);
    },

    async mergeSuppressions(projectId, records, now, actor) {
      const state = project(projectId);
      return records.map((record) => merge(state, record, now, actor));
    },

    async removeSuppressions(projectId, hashes, stream, now, actor) {
      const state = project(projectId);
      return hashes.map((hash) => remove(state, hash, stream, now, actor));
    },

    async listSuppressions(projectId, { stream, reason, emailPrefix, from, to, expiring, now, limit, after }) {
      return [...listOf(project(projectId), stream).values()]
        .sort(compareSuppressions)
        .filter((record) => !expired(record, now))
        .filter((record) => expiring === undefined || (record.expiresAt !== undefined) === expiring)
        .filter((record) => reason === undefined || record.reason === reason)
        .filter((record) => emailPrefix === undefined || record.email.startsWith(emailPrefix))
        .filter((record) => from === undefined || record.createdAt >= from)
        .filter((record) => to === undefined || record.createdAt < to)
        .filter((record) => after === undefined || compareSuppressions(record, after) > 0)
        .slice(0, limit)
        .map((record) => structuredClone(record));
    },

    async applyEvents(projectId, events, options = {}) {
      const state = project(projectId);
      const { now, softBounces, alerts } = options;
      return events.map((event): EventOutcome => {
        if (state.eventKeys.has(event.key)) return 'duplicate';
        state.eventKeys.add(event.key);
        let before: MessageRecord | undefined;
        if (event.message !== null) {
          const { key } = event.message;
          before = state.messages.get(key);
          state.seen.set(key, [...(state.seen.get(key) ?? []), { ...event.message }]);
          state.messages.set(key, mergeMessage(before, { ...event.message }));
          if (event.timelineEntry !== undefined) state.entries.set(key, [...(state.entries.get(key) ?? []), { ...event.timelineEntry }]);
        }
        // An allowlisted recipient gets no suppression from the provider's report; an unsubscribe still is one.
        const own = event.suppression;
        const ownOutcome =
          own === null
            ? undefined
            : own.provenance?.source === 'webhook' && allowlisted(state, own)
              ? 'applied'
              : merge(state, own, now, event.actor);
        const ruleOutcome =
          softBounces === undefined || event.ruleInput === undefined ? 'applied' : applyRule(state, event.ruleInput, softBounces, now);
        if (event.message !== null) {
          const after = state.messages.get(event.message.key)!;
          // Without `now`, the event's own time (docs/decisions.md, "Conformance of the feed").
          const at = now ?? event.message.lastEventAt;
          const from = before === undefined ? null : messageStatus(before.facts);
          const to = messageStatus(after.facts);
          const entry = event.timelineEntry;
          if (entry !== undefined && (from === null || from !== to))
            append(
              state,
              {
                kind: 'message.status_changed',
                at,
                message: { ...after },
                from,
                to,
                event: { id: entry.id, type: entry.type, occurredAt: entry.occurredAt },
              },
              event.actor,
            );
          if (alerts !== undefined) moveAlertWindows(state, alerts, after, before, at);
        }
        return ownOutcome ?? ruleOutcome;
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
      return trackingIdRows(countedMessages(project(projectId)))
        .sort((a, b) => compareCodePoints(a.trackingId, b.trackingId))
        .filter((row) => search === undefined || trackingIdSearchKey(row.trackingId).includes(search))
        .filter((row) => after === undefined || compareCodePoints(row.trackingId, after) > 0)
        .slice(0, limit);
    },

    async getTrackingId(projectId, trackingId) {
      return trackingIdRows(countedMessages(project(projectId))).find((row) => row.trackingId === trackingId);
    },

    async getStats(projectId, { trackingId, interval, from, to }) {
      // By definition: a message counts 1 for a fact in the hour of the earliest event with that fact,
      // under the tracking ID it has now.
      const state = project(projectId);
      const counted = [...[...state.seen].map(([key, records]) => ({ message: state.messages.get(key)!, seen: records })), ...state.erased];
      const hours = new Map<number, number[]>();
      for (const { message, seen: records } of counted) {
        if (trackingId !== undefined && message.trackingId !== trackingId) continue;
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

    async listAllowlist(projectId, { limit, after }) {
      return [...project(projectId).allowlist.values()]
        .sort((a, b) => compareCodePoints(a.entry, b.entry))
        .filter((entry) => after === undefined || compareCodePoints(entry.entry, after) > 0)
        .slice(0, limit)
        .map((entry) => ({ ...entry }));
    },

    async addAllowlistEntry(projectId, entry, actor) {
      const state = project(projectId);
      const existing = state.allowlist.get(entry.key);
      if (existing !== undefined) return { entry: { ...existing }, created: false };
      state.allowlist.set(entry.key, { ...entry });
      append(state, { kind: 'allowlist.added', at: entry.createdAt, entry: { ...entry } }, actor);
      return { entry: { ...entry }, created: true };
    },

    async removeAllowlistEntry(projectId, key, now, actor) {
      const state = project(projectId);
      const entry = state.allowlist.get(key);
      state.allowlist.delete(key);
      if (entry !== undefined) append(state, { kind: 'allowlist.removed', at: now ?? 0, entry: { ...entry } }, actor);
      return copy(entry);
    },

    async findAllowlisted(projectId, recipients) {
      const state = project(projectId);
      return recipients.map((recipient) => allowlisted(state, recipient));
    },

    // Only what is observable: expired suppressions go, then changes outside the retention. History needs no
    // sweep here (the rule prunes by `now`).
    async purgeExpired(now) {
      let deleted = 0;
      for (const state of projects.values()) {
        for (const list of [state.suppressions, ...state.streams.values()]) {
          for (const [hash, record] of list) {
            if (!expired(record, now)) continue;
            list.delete(hash);
            append(state, { kind: 'suppression.expired', at: now, record: structuredClone(record) }, ruleActors.expiry);
            deleted += 1;
          }
        }
        if (retention === undefined) continue;
        const { feed } = state;
        // Retention deletes from the oldest end only: an old change behind a newer one waits for it (no hole).
        let gone = Math.max(0, feed.changes.length - retention.maxLength);
        while (gone < feed.changes.length && feed.changes[gone]!.at < now - retention.maxAgeMs) gone += 1;
        if (gone > 0) feed.trimmed = feed.changes[gone - 1]!.seq;
        feed.changes = feed.changes.slice(gone);
      }
      return deleted;
    },

    ...(retention === undefined ? {} : { changes: retention }),

    async listChanges(projectId, { after, limit, kinds, actors, hash }) {
      const { feed } = project(projectId);
      if (!feed.on) return { changes: [], next: after, last: 0 };
      if (after < feed.trimmed)
        throw new MailwardenError(
          'change_cursor_expired',
          `Changes after ${after} are no longer kept; the oldest kept follows ${feed.trimmed}.`,
        );
      const pending = feed.changes.filter((change) => change.seq > after);
      const filtered = (kinds !== undefined && kinds.length > 0) || (actors !== undefined && actors.length > 0) || hash !== undefined;
      if (!filtered) {
        const changes = pending.slice(0, limit);
        return { changes: structuredClone(changes), next: changes.at(-1)?.seq ?? after, last: feed.last };
      }
      const matches = (change: Change) =>
        (kinds === undefined || kinds.length === 0 || kinds.includes(change.kind)) &&
        (actors === undefined || actors.length === 0 || actors.some((actor) => actorMatches(change.actor, actor))) &&
        (hash === undefined || hashOf(change) === hash);
      // A bounded look: at most this many changes, so a filter matching little costs no more than a page of everything.
      const looked = pending.slice(0, Math.max(10 * limit, 1000));
      const changes = looked.filter(matches).slice(0, limit);
      const next = changes.length === limit ? changes.at(-1)!.seq : (looked.at(-1)?.seq ?? after);
      return { changes: structuredClone(changes), next, last: feed.last };
    },

    async getAlertWindows(projectId, trackingIds) {
      const { windows } = project(projectId);
      return trackingIds.map((trackingId) => {
        const window = windows.get(trackingId);
        if (window === undefined) return undefined;
        return {
          trackingId,
          messages: window.slots.length,
          bounced: window.slots.filter((slot) => slot.bounced).length,
          complained: window.slots.filter((slot) => slot.complained).length,
          bounceFiring: window.bounceFiring,
          complaintFiring: window.complaintFiring,
        };
      });
    },

    async listPausedStreams(projectId) {
      return [...project(projectId).paused.values()].sort((a, b) => compareCodePoints(a.stream, b.stream)).map((paused) => ({ ...paused }));
    },

    async pauseStream(projectId, stream, now, actor) {
      const state = project(projectId);
      const existing = state.paused.get(stream);
      if (existing !== undefined) return { paused: { ...existing }, created: false };
      const paused: PausedStream = { stream, pausedAt: now, cause: 'operator' };
      state.paused.set(stream, paused);
      append(state, { kind: 'stream.paused', at: now, stream, cause: 'operator' }, actor);
      return { paused: { ...paused }, created: true };
    },

    async resumeStream(projectId, stream, now, actor) {
      const state = project(projectId);
      const paused = state.paused.get(stream);
      if (paused === undefined) return undefined;
      state.paused.delete(stream);
      append(state, { kind: 'stream.resumed', at: now, stream, cause: paused.cause }, actor);
      return { ...paused };
    },

    async leaseOutbound(projectId, endpoint, owner, now, until) {
      const state = project(projectId);
      const known = state.outbound.get(endpoint);
      if (known !== undefined && known.owner !== owner && known.until > now) return undefined;
      const leased = known ?? {
        endpoint,
        cursor: state.feed.last,
        failures: 0,
        failingSince: null,
        nextAttemptAt: 0,
        pausedAt: null,
        lastError: null,
        lastSuccessAt: null,
        owner,
        until,
      };
      state.outbound.set(endpoint, { ...leased, owner, until });
      return outboundState(leased);
    },

    async saveOutbound(projectId, endpoint, owner, progress, until) {
      const state = project(projectId);
      const known = state.outbound.get(endpoint);
      if (known === undefined || known.owner !== owner) return false;
      state.outbound.set(endpoint, { ...progress, endpoint, owner, until });
      if (known.pausedAt === null && progress.pausedAt !== null)
        append(
          state,
          {
            kind: 'endpoint.paused',
            at: progress.pausedAt,
            endpoint,
            ...(progress.lastError === null ? {} : { error: progress.lastError }),
          },
          ruleActors.outbound,
        );
      return true;
    },

    async getOutbound(projectId, endpoints) {
      const { outbound } = project(projectId);
      return endpoints.map((endpoint) => {
        const known = outbound.get(endpoint);
        return known === undefined ? undefined : outboundState(known);
      });
    },

    async resumeOutbound(projectId, endpoint, now, actor) {
      const state = project(projectId);
      const known = state.outbound.get(endpoint);
      if (known === undefined) return undefined;
      if (known.pausedAt === null) return outboundState(known);
      const resumed = { ...known, pausedAt: null, failures: 0, failingSince: null, lastError: null, nextAttemptAt: 0 };
      state.outbound.set(endpoint, resumed);
      append(state, { kind: 'endpoint.resumed', at: now, endpoint }, actor);
      return outboundState(resumed);
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

    async eraseAddress(projectId, erasure) {
      return erase(project(projectId), erasure);
    },

    async syncApiKeys(projectId, keys, now, actor) {
      const state = project(projectId);
      const given = new Map(keys.map((key) => [key.name, key]));
      const names = [...new Set([...state.keys.keys(), ...given.keys()])].sort(compareCodePoints);
      const changes: KeyChange[] = [];
      const audited = ({ name, scopes }: SyncedKey) => ({ name, scopes: [...scopes] });
      for (const name of names) {
        const before = state.keys.get(name);
        const after = given.get(name);
        let change: Omit<KeyChange, 'seq'> | undefined;
        if (before === undefined) change = { kind: 'key.added', at: now, key: audited(after!) };
        else if (after === undefined) change = { kind: 'key.removed', at: now, key: audited(before) };
        else if (before.version !== after.version || !isDeepStrictEqual(before.scopes, after.scopes))
          change = { kind: 'key.updated', at: now, key: audited(after), previous: audited(before) };
        if (change === undefined) continue;
        append(state, change, actor);
        changes.push({ seq: state.feed.on ? state.feed.last : 0, ...change, actor } as KeyChange);
      }
      state.keys = new Map([...given].map(([name, key]) => [name, { ...key, scopes: [...key.scopes] }]));
      return changes;
    },

    async hitRateLimits(buckets, windowMs, now, counts) {
      const window = Math.floor(now / windowMs);
      return buckets.map((bucket, i) => {
        const known = rateCounters.get(bucket);
        const counter = known !== undefined && known.window === window ? known : { window, count: 0 };
        counter.count += counts?.[i] ?? 1;
        rateCounters.set(bucket, counter);
        return counter.count;
      });
    },

    async close() {},
  } satisfies Store;
}
