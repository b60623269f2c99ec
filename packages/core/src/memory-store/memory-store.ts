import { isEmailHash } from '../email/hash.js';
import { messageStatus } from '../messages/facts.js';
import { mergeMessage, trackingIdDeltas, type MessageRecord, type TrackingIdDelta } from '../messages/message.js';
import { mergeFactTimes, statsMoves, statFacts, sumHours, type FactTimes } from '../messages/stats.js';
import { insertTimelineEntry, type TimelineEntry } from '../messages/timeline.js';
import { compareCodePoints, trackingIdSearchKey } from '../tracking-id.js';
import { recipientDomainOf } from '../store/recipient-domain.js';
import { reasonRank } from '../suppressions/reason.js';
import type {
  AddressErasure,
  AllowlistEntry,
  AllowlistQuery,
  ErasureResult,
  ApplyEventsOptions,
  EventOutcome,
  MessageQuery,
  StoredEvent,
  Store,
  SuppressionMergeOutcome,
  SuppressionQuery,
  SuppressionRecord,
  TrackingIdQuery,
  TrackingIdRecord,
} from '../store/store.js';
import {
  changeFeedRetention,
  type ChangeFeedOptions,
  type KeyChange,
  type OutboundProgress,
  type SyncedKey,
  type OutboundState,
  type PausedStream,
  type StoredAlertRule,
} from '../store/changes.js';
import { packProvenance, type SuppressionCause, type SuppressionProvenance } from '../suppressions/provenance.js';
import { ruleActors } from '../store/actor.js';
import { AlertWindows } from './alert-windows.js';
import { ChangeFeed, hashOf } from './change-feed.js';
import { EventClock } from './event-clock.js';
import { EventKeys } from './event-keys.js';
import { SoftBounceHistories } from './soft-bounce-histories.js';
import { SortedList, type SortRanks } from './sorted-list.js';
import { SuppressionTable } from './suppression-table.js';

export interface MemoryStoreOptions {
  /**
   * Message retention, as the Redis and Postgres stores have it: a message is forgotten once the
   * store's clock is `messagesMs` past its last event, and an event's dedup key once the clock is
   * `messagesMs` past the reading at which the key was applied. Suppressions and tracking-ID counters
   * never expire. The clock is read from the event times the store receives (see docs/storage.md).
   * Default: messages and dedup keys are kept for the life of the store.
   */
  retention?: MemoryRetention;
  /** Keep a change feed (docs/storage.md, "Change feed (memory store)"); absent: none, and writes cost what they did. */
  changes?: ChangeFeedOptions;
}

/** What a memory store forgets (docs/storage.md#retention-memory-store): by time, by number, or both. */
export interface MemoryRetention {
  /**
   * A message is forgotten once the store's clock is this many milliseconds past its last event, and
   * an event's dedup key once the clock is this far past the reading at which it was applied.
   */
  messagesMs?: number;
  /**
   * At most this many messages per project: past it, the message with the oldest last event is
   * forgotten first, with its timeline, and the dedup keys applied (by the store's clock) before that
   * event's time go with it. A bound by size: a project's traffic never forgets another's messages.
   */
  maxMessages?: number;
}

/** Ended rate-limit windows one `hitRateLimits` call deletes at most, besides one per bucket it counts. */
const RATE_PRUNE_BUDGET = 64;

/** A key as the audit trail names it: its name and scopes, never its version. */
function auditedKey(key: SyncedKey): { name: string; scopes: string[] } {
  return { name: key.name, scopes: [...key.scopes] };
}

/** Suppressions and soft-bounce histories one `purgeExpired` call deletes at most, per kind (docs/storage.md). */
export const PURGE_BUDGET = 1_000;

/** How many entries a memory store holds, over all of its projects. */
export interface RetainedEntries {
  messages: number;
  /** Dedup keys (one per event applied and not yet forgotten). */
  eventKeys: number;
  /** One-time webhook token claims (Mailgun's). */
  webhookTokens: number;
  /** Tracking-ID rows: never expire, one per tracking ID with messages counted. */
  trackingIds: number;
  /** Timeline entries of the messages held (at most `TIMELINE_CAP` per message): they go with their message. */
  timelineEntries: number;
  /** Hour buckets of counts over time, per project and per tracking ID: never expire (docs/storage.md#counts-over-time). */
  statsHours: number;
  /** Addresses with a soft-bounce rule history (docs/storage.md#soft-bounce-history-memory-store). */
  softBounceHistories: number;
  /** Changes kept by the change feeds (docs/storage.md, "Change feed (memory store)"); 0 without one. */
  changes: number;
}

/** What `createMemoryStore` returns: a `Store` with every optional method but invalidations, and a count of its entries. */
export type MemoryStore = Store &
  Required<Pick<Store, 'claimWebhookToken' | 'purgeExpired' | 'hitRateLimits'>> & {
    /** How many entries the store holds now: for tests, metrics and sizing (see docs/storage.md). */
    retained(): RetainedEntries;
  };

type MessageOrderKey = Pick<MessageRecord, 'firstEventAt' | 'key'>;
type MessageExpiryKey = Pick<MessageRecord, 'lastEventAt' | 'key'>;

/** Newest first, then by key. */
function compareMessages(a: MessageOrderKey, b: MessageOrderKey): number {
  if (a.firstEventAt !== b.firstEventAt) return b.firstEventAt - a.firstEventAt;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** Whether a message passes every filter of a query but `trackingId` (which picks the list walked). */
function matchesMessageQuery(message: MessageRecord, query: MessageQuery): boolean {
  return (
    (query.status === undefined || messageStatus(message.facts) === query.status) &&
    (query.recipient === undefined || message.recipient === query.recipient) &&
    (query.recipientPrefix === undefined || message.recipient.startsWith(query.recipientPrefix)) &&
    (query.recipientDomain === undefined || recipientDomainOf(message.recipient) === query.recipientDomain) &&
    (query.provider === undefined || message.provider === query.provider) &&
    (query.stream === undefined || message.stream === query.stream) &&
    (query.from === undefined || message.lastEventAt >= query.from) &&
    (query.to === undefined || message.lastEventAt < query.to)
  );
}

/** Latest last event first, then by key: the next message to expire is the list's last, whose removal moves nothing. */
function compareExpiry(a: MessageExpiryKey, b: MessageExpiryKey): number {
  if (a.lastEventAt !== b.lastEventAt) return b.lastEventAt - a.lastEventAt;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * The value of a key's first 13 hex digits (52 bits, exact in a double), or `NaN` when they are not
 * lower-case hex: message keys are (`digest128`), and between two of them it orders as `<` does.
 */
function keyRank(key: string): number {
  let value = 0;
  for (let i = 0; i < 13; i++) {
    const code = key.charCodeAt(i);
    const digit = code >= 48 && code <= 57 ? code - 48 : code >= 97 && code <= 102 ? code - 87 : -1;
    if (digit < 0) return NaN;
    value = value * 16 + digit;
  }
  return value;
}

const messageRanks: SortRanks<MessageOrderKey> = (message) => [-message.firstEventAt, keyRank(message.key)];
const expiryRanks: SortRanks<MessageExpiryKey> = (message) => [-message.lastEventAt, keyRank(message.key)];

/** Whether two entries of one list store the same fields (the feed's `suppression.updated` needs a real move). */
function sameSuppression(a: SuppressionRecord, b: SuppressionRecord): boolean {
  return (
    a.email === b.email &&
    a.reason === b.reason &&
    a.createdAt === b.createdAt &&
    a.expiresAt === b.expiresAt &&
    (a.provenance === undefined
      ? b.provenance === undefined
      : b.provenance !== undefined && packProvenance(a.provenance) === packProvenance(b.provenance))
  );
}

/** A new endpoint's progress: from `cursor`, nothing failed, due at once. */
function newOutboundProgress(cursor: number): OutboundProgress {
  return { cursor, failures: 0, failingSince: null, nextAttemptAt: 0, pausedAt: null, lastError: null, lastSuccessAt: null };
}

/** The fields of `OutboundProgress` alone (a caller's object may carry more). */
function outboundProgressOf(progress: OutboundProgress): OutboundProgress {
  const { cursor, failures, failingSince, nextAttemptAt, pausedAt, lastError, lastSuccessAt } = progress;
  return { cursor, failures, failingSince, nextAttemptAt, pausedAt, lastError, lastSuccessAt };
}

/** An outbound endpoint's state, and who holds its lease until when (`Store.leaseOutbound`). */
interface OutboundLease {
  state: OutboundState;
  owner: string;
  until: number;
}

interface TokenClaim {
  /** Project and token. */
  key: string;
  digest: string;
  expiresAt: number;
}

/** Latest expiry first, then by key: the next claim to expire is the list's last. */
function compareClaims(a: TokenClaim, b: TokenClaim): number {
  if (a.expiresAt !== b.expiresAt) return b.expiresAt - a.expiresAt;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

interface TrackingIdRow {
  record: TrackingIdRecord;
  searchKey: string;
  messages: SortedList<MessageSlot, MessageOrderKey>;
}

/**
 * A message in its project's lists: the record, and the keys the lists sort it by, copied from the
 * record when it was placed. An event that leaves them as they were (most do: only an earlier event
 * moves `firstEventAt`, only a later one `lastEventAt`) replaces the record in place and moves nothing
 * in any list; placing and finding a message were two fifths of the time a webhook batch took.
 */
interface MessageSlot {
  key: string;
  firstEventAt: number;
  lastEventAt: number;
  record: MessageRecord;
  /** When each fact was first established (`mergeFactTimes`). */
  factTimes: FactTimes;
  /** The message's timeline, in order. */
  timeline: TimelineEntry[];
}

/** A cause without what the receiving server or the complainant said (it may quote the address). */
function withoutDiagnostic<C extends SuppressionCause>(cause: C): C {
  return { ...cause, diagnostic: null };
}

/**
 * A suppression as an erasure keeps it: the placeholder email, no diagnostic in its provenance, and,
 * `forGood` (the project-wide list), no `expiresAt` (docs/decisions.md, "Erasure").
 */
function scrub(record: SuppressionRecord, email: string, forGood: boolean): SuppressionRecord {
  const { provenance, expiresAt } = record;
  const kept: SuppressionRecord = { hash: record.hash, email, reason: record.reason, createdAt: record.createdAt };
  if (provenance !== undefined) {
    const { event, rule } = provenance;
    kept.provenance = {
      ...provenance,
      ...(event !== undefined && { event: withoutDiagnostic(event) }),
      ...(rule !== undefined && { rule: { ...rule, events: rule.events.map(withoutDiagnostic) } }),
    };
  }
  if (!forGood && expiresAt !== undefined) kept.expiresAt = expiresAt;
  return kept;
}

class ProjectState {
  /** The project-wide list. */
  readonly suppressions = new SuppressionTable();
  /** One list per stream, each independent of the others and of the project-wide one (docs/storage.md, "Suppression lists"). */
  readonly streams = new Map<string, SuppressionTable>();
  readonly eventKeys: EventKeys;
  /** Each message with its fact times and timeline, by message key: one lookup per event finds all three. */
  readonly messages = new Map<string, MessageSlot>();
  /** Hour buckets by scope ('' the project, else a tracking ID), then hour: counts in `statColumns` order. Never expire. */
  readonly buckets = new Map<string, Map<number, number[]>>();
  readonly messageOrder = new SortedList<MessageSlot, MessageOrderKey>(compareMessages, messageRanks);
  /** With retention: the messages in the order they expire. */
  private readonly expiry: SortedList<MessageSlot, MessageExpiryKey> | undefined;
  readonly trackingIds = new Map<string, TrackingIdRow>();
  readonly trackingIdOrder = new SortedList<string>(compareCodePoints);
  /** The soft-bounce rule's history per address (docs/decisions.md, "The soft-bounce rule"). */
  readonly softBounces = new SoftBounceHistories();
  /** The allowlist by key (hash or `@domain`), and its entries in listing order (`entry`, code points). */
  readonly allowlist = new Map<string, AllowlistEntry>();
  readonly allowlistOrder = new SortedList<AllowlistEntry, Pick<AllowlistEntry, 'entry'>>((a, b) => compareCodePoints(a.entry, b.entry));

  /** Alert windows, made when the project's alerts first move one. */
  alertWindows: AlertWindows | undefined;
  /** Paused streams by name. */
  readonly pausedStreams = new Map<string, PausedStream>();
  /** Outbound endpoints' delivery state and lease, by endpoint. */
  readonly outbound = new Map<string, OutboundLease>();
  /** The keys that open the project, by name (`Store.syncApiKeys`). */
  readonly apiKeys = new Map<string, SyncedKey>();

  /**
   * `expires`: whether the store has a retention, so messages and keys are queued to be forgotten.
   * `feed`: the project's change feed when the store keeps one; absent, no write builds a change.
   */
  constructor(
    private readonly clock: EventClock,
    expires: boolean,
    readonly feed: ChangeFeed | undefined,
  ) {
    this.eventKeys = new EventKeys(expires);
    if (expires) this.expiry = new SortedList(compareExpiry, expiryRanks);
  }

  apply(event: StoredEvent, options: ApplyEventsOptions): EventOutcome {
    const own = event.suppression;
    const rule = options.softBounces;
    const input = rule === undefined ? undefined : event.ruleInput;
    // Checked before anything changes, so an event is applied wholly or not at all.
    if (own !== null && !isEmailHash(own.hash)) {
      throw new TypeError(`not a suppression hash: ${JSON.stringify(own.hash)}`);
    }
    if (input !== undefined && !isEmailHash(input.hash)) {
      throw new TypeError(`not a suppression hash: ${JSON.stringify(input.hash)}`);
    }
    // The feed's message change names the event by its timeline entry, which the contract says is there.
    if (this.feed !== undefined && event.message !== null && event.timelineEntry === undefined) {
      throw new TypeError('an event with a message needs its timelineEntry');
    }
    const alerts = options.alerts;
    // Feed and alerts only: what the message was before the event (`undefined`: the event creates it).
    const watched = this.feed !== undefined || alerts !== undefined;
    // An event that names neither a message nor a suppression carries no time: its key is stamped
    // with what the clock reads from the others.
    const time = event.message?.lastEventAt ?? event.suppression?.createdAt;
    if (time !== undefined) this.clock.observe(time);
    if (this.eventKeys.has(event.key)) return 'duplicate';
    this.eventKeys.add(event.key, this.clock.now);
    let before: MessageRecord | undefined;
    let merged: MessageRecord | undefined;
    if (event.message !== null) {
      const slot = this.mergeMessage(event.message, event.trackingIdSearchKey);
      if (watched) before = this.mergedFrom;
      merged = slot.record;
      // A copy, as for messages.
      if (event.timelineEntry !== undefined) insertTimelineEntry(slot.timeline, { ...event.timelineEntry });
    }
    const { now } = options;
    let outcome: EventOutcome = 'applied';
    // An allowlisted recipient's bounce or complaint is recorded, not suppressed; an unsubscribe is (docs/decisions.md, "The allowlist").
    if (own !== null && !(own.provenance?.source === 'webhook' && this.isAllowlisted(own.hash, own.email))) {
      outcome = this.mergeSuppression(own, now, event.actor);
    }
    if (input !== undefined) {
      const ruleOutcome = this.softBounces.count(input, rule!, now, this);
      if (own === null) outcome = ruleOutcome;
    }
    if (watched && merged !== undefined) this.afterMerge(event, before, merged, alerts, now ?? time!);
    return outcome;
  }

  /**
   * What follows an applied event's merge, in the feed's order (docs/decisions.md, "The change feed"):
   * its message's status change, then the alert windows it moved and their crossings, then the streams
   * those paused. `at`: the write's `now`, else the event's time.
   */
  private afterMerge(
    event: StoredEvent,
    before: MessageRecord | undefined,
    after: MessageRecord,
    alerts: StoredAlertRule | undefined,
    at: number,
  ): void {
    const feed = this.feed;
    if (feed !== undefined) {
      const from = before === undefined ? null : messageStatus(before.facts);
      const to = messageStatus(after.facts);
      if (from !== to) {
        const entry = event.timelineEntry!;
        feed.append(
          {
            kind: 'message.status_changed',
            at,
            // Shared, not copied: a stored message is replaced on each merge, never changed in place.
            message: after,
            from,
            to,
            event: { id: entry.id, type: entry.type, occurredAt: entry.occurredAt },
          },
          event.actor,
        );
      }
    }
    if (alerts === undefined) return;
    this.alertWindows ??= new AlertWindows();
    const crossings = this.alertWindows.move(after.key, before, after, alerts);
    if (crossings.length === 0) return;
    for (const crossing of crossings) feed?.append({ ...crossing, at }, ruleActors.alerts);
    // The project's window going up pauses the configured streams; going down resumes nothing.
    for (const crossing of crossings) {
      if (crossing.trackingId !== null || !crossing.firing) continue;
      for (const stream of alerts.pause) this.pause(stream, at, crossing.kind, ruleActors.alerts);
    }
  }

  /** Pauses a stream unless it is paused (`stream.paused`). Returns the paused stream, and whether this paused it. */
  pause(stream: string, at: number, cause: PausedStream['cause'], actor: string | undefined): { paused: PausedStream; created: boolean } {
    const known = this.pausedStreams.get(stream);
    if (known !== undefined) return { paused: { ...known }, created: false };
    const paused: PausedStream = { stream, pausedAt: at, cause };
    this.pausedStreams.set(stream, paused);
    this.feed?.append({ kind: 'stream.paused', at, stream, cause }, actor);
    return { paused: { ...paused }, created: true };
  }

  /** Whether the recipient's hash, or `@` and the text after the last `@` of its address, is allowlisted. */
  isAllowlisted(hash: string, email: string): boolean {
    if (this.allowlist.size === 0) return false;
    return this.allowlist.has(hash) || this.allowlist.has(`@${email.slice(email.lastIndexOf('@') + 1)}`);
  }

  /** The list of `stream` (the project-wide one when absent), made on first write. */
  list(stream: string | undefined): SuppressionTable {
    if (stream === undefined) return this.suppressions;
    let table = this.streams.get(stream);
    if (table === undefined) {
      table = new SuppressionTable(stream);
      this.streams.set(stream, table);
    }
    return table;
  }

  /** The list of `stream` when it exists: reads never make one. */
  existingList(stream: string | undefined): SuppressionTable | undefined {
    return stream === undefined ? this.suppressions : this.streams.get(stream);
  }

  /**
   * The check rule (`Store.getSuppression`): the project-wide entry, else, for a stream, that stream's.
   * `streamList` is `existingList(stream)`, looked up once per batch.
   */
  check(
    hash: string,
    stream: string | undefined,
    streamList: SuppressionTable | undefined,
    now: number | undefined,
  ): SuppressionRecord | undefined {
    const wide = this.suppressions.get(hash, now);
    if (wide !== undefined || stream === undefined) return wide;
    return streamList?.get(hash, now);
  }

  /**
   * Joins one suppression into its list (`SuppressionTable.upsert`) and says what that did to its
   * address there. One already expired at `now` is not written.
   */
  mergeSuppression(record: SuppressionRecord, now: number | undefined, actor: string | undefined): SuppressionMergeOutcome {
    if (now !== undefined && record.expiresAt !== undefined && record.expiresAt <= now) return 'applied';
    const table = this.list(record.stream);
    // With the feed: the entry as stored, expired or not, to tell a replaced expired one.
    const prior = this.feed === undefined ? undefined : table.get(record.hash);
    const before = table.upsert(record, now);
    if (this.feed !== undefined) this.appendSuppressionChanges(table, record.hash, prior, before, now ?? record.createdAt, actor);
    if (before === undefined) return 'suppressed';
    return reasonRank(record.reason) > reasonRank(before.reason) ? `upgraded_from_${before.reason}` : 'applied';
  }

  /**
   * Appends what a write did to one entry of `table` (`prior`: the entry before, expired or not;
   * `before`: the one the write joined into, `undefined` when it created the entry): an expired entry
   * replaced (the expiry rule's), then added, upgraded, or updated when a stored field really moved (`actor`'s).
   */
  appendSuppressionChanges(
    table: SuppressionTable,
    hash: string,
    prior: SuppressionRecord | undefined,
    before: SuppressionRecord | undefined,
    at: number,
    actor: string | undefined,
  ): void {
    const feed = this.feed!;
    const record = table.get(hash);
    if (record === undefined) return;
    if (before === undefined) {
      if (prior !== undefined) feed.append({ kind: 'suppression.expired', at, record: prior }, ruleActors.expiry);
      feed.append({ kind: 'suppression.added', at, record }, actor);
    } else if (reasonRank(record.reason) > reasonRank(before.reason)) {
      feed.append({ kind: 'suppression.upgraded', at, record, previous: before }, actor);
    } else if (!sameSuppression(before, record)) {
      feed.append({ kind: 'suppression.updated', at, record, previous: before }, actor);
    }
  }

  /** The soft-bounce rule's window replaces the stored one's provenance (`SoftBounceHistories`); `at` as for a merge. */
  replaceRuleProvenance(hash: string, provenance: SuppressionProvenance, expiresAt: number | undefined, at: number): void {
    const before = this.feed === undefined ? undefined : this.suppressions.get(hash);
    this.suppressions.replaceProvenance(hash, provenance, expiresAt);
    if (before !== undefined) this.appendSuppressionChanges(this.suppressions, hash, before, before, at, ruleActors.softBounces);
  }

  /** Deletes an entry of one list; with the feed, appends `suppression.removed` (`at`: `now`, else 0). */
  removeSuppression(
    table: SuppressionTable | undefined,
    hash: string,
    stream: string | undefined,
    now: number | undefined,
    actor: string | undefined,
  ) {
    const record = table?.get(hash);
    if (record !== undefined) {
      table!.remove(hash);
      this.feed?.append({ kind: 'suppression.removed', at: now ?? 0, record }, actor);
    }
    if (stream === undefined) this.softBounces.forget(hash);
    return record;
  }

  /**
   * Forgets the messages whose last event is before `before` and the dedup keys applied (by the
   * clock) before it. Tracking-ID rows keep their counters, totals of what was recorded, and
   * suppressions are untouched. Returns how many messages it forgot.
   */
  forgetBefore(before: number): number {
    if (this.expiry === undefined) return 0;
    this.eventKeys.forgetAppliedBefore(before, this.clock.startedAt);
    let forgotten = 0;
    for (let oldest = this.expiry.last(); oldest !== undefined && oldest.lastEventAt < before; oldest = this.expiry.last()) {
      this.forgetMessage(oldest);
      forgotten++;
    }
    return forgotten;
  }

  /**
   * Forgets the messages with the oldest last events until at most `max` are left, and the dedup keys
   * applied (by the clock) before the last event of the newest one forgotten: what retention by time
   * forgets, with its cutoff set by the count. Returns how many messages it forgot.
   */
  forgetBeyond(max: number): number {
    if (this.expiry === undefined) return 0;
    let forgotten = 0;
    let cutoff = -Infinity;
    for (let oldest = this.expiry.last(); oldest !== undefined && this.messages.size > max; oldest = this.expiry.last()) {
      cutoff = oldest.lastEventAt;
      this.forgetMessage(oldest);
      forgotten++;
    }
    // Never past the clock: before it starts, keys are kept (as retention by time keeps them).
    if (forgotten > 0) this.eventKeys.forgetAppliedBefore(Math.min(cutoff, this.clock.now), this.clock.startedAt);
    return forgotten;
  }

  /** Deletes up to `budget` suppressions (of every list) expired at `now`. Returns how many it deleted. */
  removeExpiredSuppressions(now: number, budget: number): number {
    const feed = this.feed;
    const expired =
      feed === undefined
        ? undefined
        : (record: SuppressionRecord) => feed.append({ kind: 'suppression.expired', at: now, record }, ruleActors.expiry);
    let removed = this.suppressions.removeExpired(now, budget, expired).length;
    for (const table of this.streams.values()) {
      if (removed >= budget) break;
      removed += table.removeExpired(now, budget - removed, expired).length;
    }
    return removed;
  }

  /**
   * `Store.eraseAddress` (docs/decisions.md, "Memory store: erasure and actors"), in one synchronous
   * step: every structure that holds the address forgets it; its suppressions stay, by hash.
   */
  erase(erasure: AddressErasure): ErasureResult {
    const { hash, email, forms, now } = erasure;
    // Checked before anything changes, so an erasure is done wholly or not at all.
    if (!isEmailHash(hash)) throw new TypeError(`not a suppression hash: ${JSON.stringify(hash)}`);
    if (forms.some((form) => form === '')) throw new TypeError('an erasure form is empty');
    // Messages of the address, with their timelines and the dedup keys of their events.
    const eventKeys = new Set<string>();
    let messages = 0;
    for (const slot of [...this.messages.values()]) {
      if (slot.record.recipient !== email) continue;
      for (const entry of slot.timeline) eventKeys.add(`${entry.provider}:${entry.eventKey}`);
      this.forgetMessage(slot);
      messages++;
    }
    this.eventKeys.erase((key) => eventKeys.has(key) || forms.some((form) => key.includes(form)));
    // The last merge's record is kept between calls: it may be one of these messages.
    this.mergedFrom = undefined;
    this.softBounces.forget(hash);
    const allowed = this.allowlist.get(hash);
    if (allowed !== undefined) {
      this.allowlist.delete(hash);
      this.allowlistOrder.remove(allowed);
    }
    // The changes about it: of its hash (earlier erasures stay), and its messages' status changes.
    const changes =
      this.feed?.erase((change) =>
        change.kind === 'message.status_changed'
          ? change.message.recipient === email
          : change.kind !== 'address.erased' && hashOf(change) === hash,
      ) ?? 0;
    // What blocks it stays, by hash: the placeholder email, no diagnostics; project-wide for good.
    const placeholder = erasure.suppression.email;
    const wide = this.suppressions.get(hash, now);
    const records = [
      this.rewrite(this.suppressions, hash, wide === undefined ? { ...erasure.suppression } : scrub(wide, placeholder, true)),
    ];
    const streams = [...this.streams.keys()].sort(compareCodePoints);
    for (const stream of streams) {
      const table = this.streams.get(stream)!;
      const held = table.get(hash);
      if (held !== undefined) records.push(this.rewrite(table, hash, scrub(held, placeholder, false)));
    }
    const result: ErasureResult = { records, messages, changes };
    this.feed?.append(
      { kind: 'address.erased', at: now, hash, records: records.map((record) => ({ ...record })), messages, changes },
      erasure.actor,
    );
    return result;
  }

  /** Replaces the entry of `hash` in `table` by `record` (made anew: an expired one goes without a change). Returns a copy. */
  private rewrite(table: SuppressionTable, hash: string, record: SuppressionRecord): SuppressionRecord {
    table.remove(hash);
    table.add({ ...record, hash });
    return table.get(hash)!;
  }

  private forgetMessage(slot: MessageSlot): void {
    this.expiry?.remove(slot);
    this.messages.delete(slot.key);
    this.messageOrder.remove(slot);
    if (slot.record.trackingId !== null) this.trackingIds.get(slot.record.trackingId)?.messages.remove(slot);
  }

  /** The record `mergeMessage` last merged into (`undefined`: it made the message), for the feed and alerts. */
  private mergedFrom: MessageRecord | undefined;

  /** Merges the message an event saw into its slot (made if new), and returns the slot. */
  private mergeMessage(seen: MessageRecord, searchKey: string | null): MessageSlot {
    const slot = this.messages.get(seen.key);
    const before = slot?.record;
    this.mergedFrom = before;
    // A copy: the store must not share objects its caller may change later.
    const after = mergeMessage(before, { ...seen });
    const beforeTimes = slot?.factTimes;
    const afterTimes = mergeFactTimes(before, beforeTimes, seen);
    for (const move of statsMoves(before?.trackingId ?? null, beforeTimes, after.trackingId, afterTimes)) {
      const scope = move.trackingId ?? '';
      let hours = this.buckets.get(scope);
      if (hours === undefined) this.buckets.set(scope, (hours = new Map()));
      let counts = hours.get(move.hour);
      if (counts === undefined) hours.set(move.hour, (counts = statFacts.map(() => 0)));
      counts[move.column]! += move.delta;
    }

    const moved = before?.trackingId !== after.trackingId;
    let placed = slot;
    if (placed === undefined) {
      placed = {
        key: after.key,
        firstEventAt: after.firstEventAt,
        lastEventAt: after.lastEventAt,
        record: after,
        factTimes: afterTimes,
        timeline: [],
      };
      this.messages.set(after.key, placed);
      this.messageOrder.insert(placed);
      this.expiry?.insert(placed);
    } else {
      // Out of a list under the keys it was sorted by, back in under the new ones.
      if (moved && before!.trackingId !== null) this.trackingIds.get(before!.trackingId)?.messages.remove(placed);
      if (after.firstEventAt !== placed.firstEventAt) {
        const row = moved || after.trackingId === null ? undefined : this.trackingIds.get(after.trackingId);
        this.messageOrder.remove(placed);
        row?.messages.remove(placed);
        placed.firstEventAt = after.firstEventAt;
        this.messageOrder.insert(placed);
        row?.messages.insert(placed);
      }
      if (after.lastEventAt !== placed.lastEventAt) {
        this.expiry?.remove(placed);
        placed.lastEventAt = after.lastEventAt;
        this.expiry?.insert(placed);
      }
      placed.record = after;
      placed.factTimes = afterTimes;
    }

    for (const delta of trackingIdDeltas(before, after)) {
      const row = this.trackingIdRow(delta.trackingId, searchKey);
      if (moved && delta.trackingId === after.trackingId) row.messages.insert(placed);
      this.applyDelta(row, delta);
    }
    return placed;
  }

  private trackingIdRow(trackingId: string, searchKey: string | null): TrackingIdRow {
    let row = this.trackingIds.get(trackingId);
    if (row === undefined) {
      row = {
        record: {
          trackingId,
          messages: 0,
          delivered: 0,
          bounced: 0,
          complained: 0,
          lastEventAt: -Infinity,
          opened: 0,
          clicked: 0,
          unsubscribed: 0,
        },
        searchKey: searchKey ?? trackingIdSearchKey(trackingId),
        messages: new SortedList<MessageSlot, MessageOrderKey>(compareMessages, messageRanks),
      };
      this.trackingIds.set(trackingId, row);
      this.trackingIdOrder.insert(trackingId);
    }
    return row;
  }

  private applyDelta(row: TrackingIdRow, delta: TrackingIdDelta): void {
    const record = row.record;
    record.messages += delta.messages;
    record.delivered += delta.delivered;
    record.bounced += delta.bounced;
    record.complained += delta.complained;
    record.opened += delta.opened;
    record.clicked += delta.clicked;
    record.unsubscribed += delta.unsubscribed;
    if (record.messages === 0) {
      this.trackingIds.delete(record.trackingId);
      this.trackingIdOrder.remove(record.trackingId);
    } else if (delta.lastEventAt === 'recompute') {
      let latest = -Infinity;
      for (const message of row.messages.after(undefined)) latest = Math.max(latest, message.lastEventAt);
      // From the messages still there; when retention forgot them all, the row keeps its time (as in
      // the Redis and Postgres stores).
      if (latest !== -Infinity) record.lastEventAt = latest;
    } else {
      record.lastEventAt = Math.max(record.lastEventAt, delta.lastEventAt.raise);
    }
  }
}

/**
 * The embedded default: every project's state in this process's memory, lost when it exits. Each
 * operation runs synchronously inside one call, so it is atomic with respect to every other call.
 *
 * With `retention`, messages and dedup keys expire as in the Redis and Postgres stores; one-time
 * webhook token claims expire at their `expiresAt` with or without it. The store reads no clock: its
 * "now" is the 100th latest event time it has received, or a later `now` given to `purgeExpired`, and
 * every write forgets what that clock has expired in its project (docs/storage.md#retention-memory-store).
 *
 * @example
 * const store = createMemoryStore({ retention: { messagesMs: 30 * 86_400_000 } });
 * const mailwarden = createMailwarden({ store });
 * // Optional: forget by the host's clock too, so an idle project's messages go without new events.
 * setInterval(() => void store.purgeExpired(Date.now()), 3_600_000).unref();
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const retentionMs = options.retention?.messagesMs;
  const maxMessages = options.retention?.maxMessages;
  if (retentionMs !== undefined && !(Number.isSafeInteger(retentionMs) && retentionMs > 0)) {
    throw new RangeError(`retention.messagesMs must be a positive integer: ${retentionMs}`);
  }
  if (maxMessages !== undefined && !(Number.isSafeInteger(maxMessages) && maxMessages > 0)) {
    throw new RangeError(`retention.maxMessages must be a positive integer: ${maxMessages}`);
  }
  if (options.retention !== undefined && retentionMs === undefined && maxMessages === undefined) {
    throw new RangeError('retention needs messagesMs, maxMessages or both');
  }
  const expires = retentionMs !== undefined || maxMessages !== undefined;
  const feedRetention = options.changes === undefined ? undefined : changeFeedRetention(options.changes);
  const clock = new EventClock();
  const projects = new Map<string, ProjectState>();
  const project = (projectId: string): ProjectState => {
    let state = projects.get(projectId);
    if (state === undefined) {
      state = new ProjectState(clock, expires, feedRetention === undefined ? undefined : new ChangeFeed(feedRetention));
      projects.set(projectId, state);
    }
    return state;
  };
  // Reads of a project that was never written do not create it.
  const existing = (projectId: string): ProjectState | undefined => projects.get(projectId);
  // One-time webhook tokens by project and token, and the same claims in the order they expire.
  const tokens = new Map<string, TokenClaim>();
  let tokenExpiry = new SortedList<TokenClaim>(compareClaims);
  // What the clock has expired: in one project, and among token claims (with or without retention).
  const forgetExpiredIn = (state: ProjectState): number =>
    (retentionMs === undefined ? 0 : state.forgetBefore(clock.now - retentionMs)) +
    (maxMessages === undefined ? 0 : state.forgetBeyond(maxMessages));
  // Rate-limit counts by bucket, window length and window (`hitRateLimits`), oldest window first (roughly).
  const rateCounts = new Map<string, { count: number; end: number }>();
  const forgetExpiredTokens = (): void => {
    for (let oldest = tokenExpiry.last(); oldest !== undefined && oldest.expiresAt < clock.now; oldest = tokenExpiry.last()) {
      tokenExpiry.remove(oldest);
      tokens.delete(oldest.key);
    }
  };

  const store: MemoryStore = {
    async getSuppression(projectId, hash, stream, now) {
      const state = existing(projectId);
      return state?.check(hash, stream, stream === undefined ? undefined : state.existingList(stream), now);
    },

    async getSuppressions(projectId, hashes, stream, now) {
      const state = existing(projectId);
      if (state === undefined) return hashes.map(() => undefined);
      const streamList = stream === undefined ? undefined : state.existingList(stream);
      return hashes.map((hash) => state.check(hash, stream, streamList, now));
    },

    async addSuppression(projectId, record, now, actor) {
      const state = project(projectId);
      const table = state.list(record.stream);
      if (state.feed === undefined) return table.add({ ...record }, now);
      // With the feed: the entry as stored, expired or not, to tell a replaced expired one.
      const prior = table.get(record.hash);
      const added = table.add({ ...record }, now);
      if (added.created) state.appendSuppressionChanges(table, record.hash, prior, undefined, now ?? record.createdAt, actor);
      return added;
    },

    async removeSuppression(projectId, hash, stream, now, actor) {
      const state = existing(projectId);
      return state?.removeSuppression(state.existingList(stream), hash, stream, now, actor);
    },

    async mergeSuppressions(projectId, records, now, actor) {
      // Checked before anything changes, so a bad record fails the whole call.
      for (const record of records) {
        if (!isEmailHash(record.hash)) throw new TypeError(`not a suppression hash: ${JSON.stringify(record.hash)}`);
      }
      const state = records.length === 0 ? undefined : project(projectId);
      return records.map((record) => state!.mergeSuppression({ ...record }, now, actor));
    },

    async removeSuppressions(projectId, hashes, stream, now, actor) {
      const state = existing(projectId);
      const table = state?.existingList(stream);
      return hashes.map((hash) => state?.removeSuppression(table, hash, stream, now, actor));
    },

    async listSuppressions(projectId, query: SuppressionQuery): Promise<SuppressionRecord[]> {
      const { reason, emailPrefix, from, to, expiring } = query;
      const filtered =
        reason !== undefined || emailPrefix !== undefined || from !== undefined || to !== undefined || expiring !== undefined;
      const filter = (record: SuppressionRecord) =>
        (reason === undefined || record.reason === reason) &&
        (emailPrefix === undefined || record.email.startsWith(emailPrefix)) &&
        (from === undefined || record.createdAt >= from) &&
        (to === undefined || record.createdAt < to) &&
        (expiring === undefined || (record.expiresAt !== undefined) === expiring);
      return (
        existing(projectId)
          ?.existingList(query.stream)
          ?.list(query.limit, query.after, filtered ? filter : undefined, query.now) ?? []
      );
    },

    async applyEvents(projectId, events, options = {}) {
      const state = project(projectId);
      const outcomes = events.map((event) => state.apply(event, options));
      // Every write forgets what has expired in its project, so memory stays bounded without a timer.
      forgetExpiredIn(state);
      forgetExpiredTokens();
      return outcomes;
    },

    async listMessages(projectId, query: MessageQuery) {
      const state = existing(projectId);
      if (state === undefined) return [];
      let order: SortedList<MessageSlot, MessageOrderKey> | undefined = state.messageOrder;
      if (query.trackingId !== undefined) order = state.trackingIds.get(query.trackingId)?.messages;
      if (order === undefined) return [];
      const page: MessageRecord[] = [];
      for (const { record: message } of order.after(query.after)) {
        if (!matchesMessageQuery(message, query)) continue;
        page.push({ ...message });
        if (page.length === query.limit) break;
      }
      return page;
    },

    async getMessage(projectId, key) {
      const state = existing(projectId);
      const slot = state?.messages.get(key);
      if (slot === undefined) return undefined;
      return { ...slot.record, timeline: slot.timeline.map((entry) => ({ ...entry })) };
    },

    async listTrackingIds(projectId, query: TrackingIdQuery) {
      const state = existing(projectId);
      if (state === undefined) return [];
      const page: TrackingIdRecord[] = [];
      for (const trackingId of state.trackingIdOrder.after(query.after)) {
        const row = state.trackingIds.get(trackingId)!;
        if (query.search !== undefined && !row.searchKey.includes(query.search)) continue;
        page.push({ ...row.record });
        if (page.length === query.limit) break;
      }
      return page;
    },

    async getTrackingId(projectId, trackingId) {
      const row = existing(projectId)?.trackingIds.get(trackingId);
      return row === undefined ? undefined : { ...row.record };
    },

    async getStats(projectId, query) {
      const hours = existing(projectId)?.buckets.get(query.trackingId ?? '');
      return hours === undefined ? [] : sumHours(hours, query.interval, query.from, query.to);
    },

    async listAllowlist(projectId, query: AllowlistQuery) {
      const state = existing(projectId);
      if (state === undefined) return [];
      const page: AllowlistEntry[] = [];
      for (const entry of state.allowlistOrder.after(query.after === undefined ? undefined : { entry: query.after })) {
        if (page.length === query.limit) break;
        page.push({ ...entry });
      }
      return page;
    },

    async addAllowlistEntry(projectId, entry, actor) {
      const state = project(projectId);
      const known = state.allowlist.get(entry.key);
      if (known !== undefined) return { entry: { ...known }, created: false };
      const stored = { ...entry };
      state.allowlist.set(stored.key, stored);
      state.allowlistOrder.insert(stored);
      state.feed?.append({ kind: 'allowlist.added', at: stored.createdAt, entry: { ...stored } }, actor);
      return { entry: { ...stored }, created: true };
    },

    async removeAllowlistEntry(projectId, key, now, actor) {
      const state = existing(projectId);
      const known = state?.allowlist.get(key);
      if (known === undefined) return undefined;
      state!.allowlist.delete(key);
      state!.allowlistOrder.remove(known);
      state!.feed?.append({ kind: 'allowlist.removed', at: now ?? 0, entry: { ...known } }, actor);
      return { ...known };
    },

    async findAllowlisted(projectId, recipients) {
      const state = existing(projectId);
      return recipients.map((recipient) => state?.isAllowlisted(recipient.hash, recipient.email) ?? false);
    },

    async claimWebhookToken(projectId, token, digest, expiresAt) {
      if (!Number.isSafeInteger(expiresAt)) throw new RangeError(`expiresAt is not an integer number of milliseconds: ${expiresAt}`);
      forgetExpiredTokens();
      const key = `${projectId}\n${token}`;
      const known = tokens.get(key);
      if (known === undefined) {
        const claim = { key, digest, expiresAt };
        tokens.set(key, claim);
        tokenExpiry.insert(claim);
        return 'first';
      }
      return known.digest === digest ? 'same' : 'conflict';
    },

    // Returns the number of messages forgotten and suppressions deleted. `now` also moves the store's
    // clock (never back), so later writes forget by it too.
    async purgeExpired(now) {
      clock.advanceTo(now);
      let forgotten = 0;
      let suppressionBudget = PURGE_BUDGET;
      let historyBudget = PURGE_BUDGET;
      let changeBudget = PURGE_BUDGET;
      for (const state of projects.values()) {
        if (state.feed !== undefined && changeBudget > 0) changeBudget -= state.feed.purge(now, changeBudget);
        forgotten += forgetExpiredIn(state);
        const removed = state.removeExpiredSuppressions(now, suppressionBudget);
        forgotten += removed;
        suppressionBudget -= removed;
        const looked = Math.min(state.softBounces.size, historyBudget);
        state.softBounces.purge(now, looked);
        historyBudget -= looked;
      }
      forgetExpiredTokens();
      return forgotten;
    },

    retained() {
      const entries: RetainedEntries = {
        messages: 0,
        eventKeys: 0,
        webhookTokens: tokens.size,
        trackingIds: 0,
        timelineEntries: 0,
        statsHours: 0,
        softBounceHistories: 0,
        changes: 0,
      };
      for (const state of projects.values()) {
        entries.messages += state.messages.size;
        entries.eventKeys += state.eventKeys.size;
        entries.trackingIds += state.trackingIds.size;
        entries.softBounceHistories += state.softBounces.size;
        entries.changes += state.feed?.size ?? 0;
        for (const slot of state.messages.values()) entries.timelineEntries += slot.timeline.length;
        for (const hours of state.buckets.values()) entries.statsHours += hours.size;
      }
      return entries;
    },

    ...(feedRetention !== undefined && { changes: feedRetention }),

    async listChanges(projectId, query) {
      const feed = existing(projectId)?.feed;
      if (feed === undefined) return { changes: [], next: query.after, last: 0 };
      return feed.list(query);
    },

    async getAlertWindows(projectId, trackingIds) {
      const windows = existing(projectId)?.alertWindows;
      return trackingIds.map((trackingId) => windows?.get(trackingId));
    },

    async listPausedStreams(projectId) {
      const paused = existing(projectId)?.pausedStreams;
      if (paused === undefined) return [];
      return [...paused.values()].sort((a, b) => compareCodePoints(a.stream, b.stream)).map((stream) => ({ ...stream }));
    },

    async pauseStream(projectId, stream, now, actor) {
      return project(projectId).pause(stream, now, 'operator', actor);
    },

    async resumeStream(projectId, stream, now, actor) {
      const state = existing(projectId);
      const paused = state?.pausedStreams.get(stream);
      if (paused === undefined) return undefined;
      state!.pausedStreams.delete(stream);
      state!.feed?.append({ kind: 'stream.resumed', at: now, stream, cause: paused.cause }, actor);
      return { ...paused };
    },

    async leaseOutbound(projectId, endpoint, owner, now, until) {
      const state = project(projectId);
      const known = state.outbound.get(endpoint);
      if (known === undefined) {
        const lease: OutboundLease = {
          // A new endpoint receives the changes made from now on.
          state: { endpoint, ...newOutboundProgress(state.feed?.last ?? 0) },
          owner,
          until,
        };
        state.outbound.set(endpoint, lease);
        return { ...lease.state };
      }
      if (known.owner !== owner && known.until > now) return undefined;
      known.owner = owner;
      known.until = until;
      return { ...known.state };
    },

    async saveOutbound(projectId, endpoint, owner, progress, until) {
      const state = existing(projectId);
      const known = state?.outbound.get(endpoint);
      if (known === undefined || known.owner !== owner) return false;
      const wasPaused = known.state.pausedAt !== null;
      known.state = { endpoint, ...outboundProgressOf(progress) };
      known.until = until;
      if (!wasPaused && progress.pausedAt !== null) {
        state!.feed?.append(
          {
            kind: 'endpoint.paused',
            at: progress.pausedAt,
            endpoint,
            ...(progress.lastError !== null && { error: progress.lastError }),
          },
          ruleActors.outbound,
        );
      }
      return true;
    },

    async getOutbound(projectId, endpoints) {
      const outbound = existing(projectId)?.outbound;
      return endpoints.map((endpoint) => {
        const known = outbound?.get(endpoint);
        return known === undefined ? undefined : { ...known.state };
      });
    },

    async resumeOutbound(projectId, endpoint, now, actor) {
      const state = existing(projectId);
      const known = state?.outbound.get(endpoint);
      if (known === undefined) return undefined;
      if (known.state.pausedAt !== null) {
        known.state = { ...known.state, pausedAt: null, failures: 0, failingSince: null, lastError: null, nextAttemptAt: 0 };
        state!.feed?.append({ kind: 'endpoint.resumed', at: now, endpoint }, actor);
      }
      return { ...known.state };
    },

    async eraseAddress(projectId, erasure) {
      return project(projectId).erase(erasure);
    },

    async syncApiKeys(projectId, keys, now, actor) {
      const state = project(projectId);
      const stored = state.apiKeys;
      const wanted = new Map(keys.map((key) => [key.name, key]));
      const names = [...new Set([...stored.keys(), ...wanted.keys()])].sort(compareCodePoints);
      const changes: KeyChange[] = [];
      for (const name of names) {
        const was = stored.get(name);
        const is = wanted.get(name);
        let change: Omit<KeyChange, 'seq'>;
        if (was === undefined) change = { kind: 'key.added', at: now, key: auditedKey(is!) };
        else if (is === undefined) change = { kind: 'key.removed', at: now, key: auditedKey(was) };
        else if (was.version !== is.version || was.scopes.join(',') !== is.scopes.join(','))
          change = { kind: 'key.updated', at: now, key: auditedKey(is), previous: auditedKey(was) };
        else continue;
        if (is === undefined) stored.delete(name);
        else stored.set(name, { name, scopes: [...is.scopes], version: is.version });
        // Without a feed the list is kept all the same, and the change is returned with `seq` 0.
        const appended = state.feed?.append(structuredClone(change), actor);
        changes.push(appended === undefined ? { ...change, seq: 0, actor } : (structuredClone(appended) as KeyChange));
      }
      return changes;
    },

    async hitRateLimits(buckets, windowMs, now, counts) {
      if (!(Number.isSafeInteger(windowMs) && windowMs > 0)) throw new RangeError(`windowMs must be a positive integer: ${windowMs}`);
      const window = Math.floor(now / windowMs);
      const end = (window + 1) * windowMs;
      // Windows that ended go on the way, oldest first: a bounded look per call keeps memory bounded.
      let budget = RATE_PRUNE_BUDGET + buckets.length;
      for (const [key, count] of rateCounts) {
        if (budget-- === 0 || count.end > now) break;
        rateCounts.delete(key);
      }
      return buckets.map((bucket, index) => {
        const hits = counts?.[index] ?? 1;
        const key = `${bucket}\u0000${windowMs}\u0000${window}`;
        const count = rateCounts.get(key);
        if (count !== undefined) return (count.count += hits);
        rateCounts.set(key, { count: hits, end });
        return hits;
      });
    },

    async close() {
      projects.clear();
      rateCounts.clear();
      tokens.clear();
      tokenExpiry = new SortedList<TokenClaim>(compareClaims);
    },
  };
  heldBy.set(store, () => ({ clock, projects, tokens, tokenExpiry, rateCounts }));
  return store;
}

/** Every structure of each memory store, for `dumpMemoryStore` (tests): never read on a request. */
const heldBy = new WeakMap<object, () => object>();

/** Everything a memory store made by `createMemoryStore` holds, its structures as they are; `undefined` for any other store. */
export function memoryStoreStructures(store: object): object | undefined {
  return heldBy.get(store)?.();
}
