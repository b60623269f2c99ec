import type { Provider } from '../events/delivery-event.js';
import type { MessageStatus, SuppressionReason } from '../vocabulary.js';
import type { MessageRecord } from '../messages/message.js';
import type { StatsBucket, StatsInterval } from '../messages/stats.js';
import type { TimelineEntry } from '../messages/timeline.js';
import type { SuppressionCause } from '../suppressions/provenance.js';
import type { AllowlistEntry, SuppressionRecord } from './records.js';
import type {
  AlertWindow,
  ChangeFeedOptions,
  KeyChange,
  SyncedKey,
  ChangePage,
  ChangeQuery,
  OutboundProgress,
  OutboundState,
  PausedStream,
  StoredAlertRule,
} from './changes.js';

export type { AllowlistEntry, SuppressionRecord } from './records.js';

/**
 * The soft-bounce rule as a store applies it (`ApplyEventsOptions.softBounces`), made by the service
 * from the project's `SuppressionRules` (docs/decisions.md, "The soft-bounce rule"): suppress an
 * address project-wide with `hard_bounce` once `bounces` soft bounces of distinct messages fall within
 * `windowMs` of each other (the last's time minus the first's at most `windowMs`).
 */
export interface StoredSoftBounceRule {
  /** At least 1. */
  bounces: number;
  /** The window, in milliseconds (`days` × 86 400 000). */
  windowMs: number;
  /** As configured, for the provenance. */
  days: number;
  /** A delivery resets the count: soft bounces earlier than the address's latest delivery do not count. */
  resetOnDelivery: boolean;
  /** How long a suppression the rule makes lasts (its `expiresAt` = its `createdAt` + this); `null` for ever. */
  expiresAfterMs: number | null;
  /** History older than `now - keepMs` is forgotten: `windowMs` plus the lateness allowed (`SOFT_BOUNCE_LATENESS_MS`). */
  keepMs: number;
  /** `bounces,days,0|1` (the reset): the rule as the packed provenance writes it (`packProvenance`). */
  packed: string;
}

/** What `Store.applyEvents` needs beside the events. */
export interface ApplyEventsOptions {
  /**
   * The caller's clock (epoch milliseconds): records expired at `now` count as absent, suppressions
   * that would be expired at `now` are not written, and rule history older than `now - keepMs` is
   * forgotten. Absent: nothing counts as expired, and no history is forgotten.
   */
  now?: number;
  /** The project's soft-bounce rule; absent when it has none (then `ruleInput` is ignored). */
  softBounces?: StoredSoftBounceRule;
  /**
   * The project's deliverability alerts; absent when it has none (then no window is kept or moved).
   * In the same step as each event, after its message is merged: a message the event created enters its
   * project's window (and its tracking ID's, with `trackingIds`), pushing the window's oldest out; a
   * message in a window that gains `hard_bounced` or `complained` counts there; then each window the
   * event moved is compared with the thresholds, and a crossing flips the window's state and appends
   * `alert.bounce_rate` / `alert.complaint_rate` (and, for the project's window going up, pauses
   * `pause`'s streams not already paused, each a `stream.paused`). docs/decisions.md, "Deliverability alerts".
   */
  alerts?: StoredAlertRule;
}

/** A soft bounce, as the soft-bounce rule counts it (`StoredEvent.ruleInput`). */
export interface SoftBounceInput {
  kind: 'soft_bounce';
  /** The recipient's hash and normalized address. */
  hash: string;
  email: string;
  /** The event's time (epoch milliseconds). */
  at: number;
  /** Which message it bounced: its `MessageRecord.key`, or the event's key when it named no message. Bounces of one message count once. */
  message: string;
  /** The event as a cause (its `eventId` is the event's timeline entry ID). */
  cause: SuppressionCause;
  /** `packRuleBounce(cause, at)`: the bounce as a rule's packed provenance lists it. */
  packed: string;
  /** `JSON.stringify([provider, messageId, diagnostic])` of `cause`: the packed provenance's cause when this bounce completes a window. */
  causeJson: string;
}

/** A delivery, as the soft-bounce rule with `resetOnDelivery` counts it. */
export interface DeliveryInput {
  kind: 'delivery';
  hash: string;
  at: number;
}

/** A page of a project's allowlist: by `entry` in code-point order, strictly after `after`. */
export interface AllowlistQuery {
  limit: number;
  /** The `entry` of the previous page's last item. */
  after?: string;
}

/** A position in the newest-first suppression order: the last item of the previous page. */
export interface SuppressionPosition {
  createdAt: number;
  hash: string;
}

/** A position in the newest-first message order: the last item of the previous page. */
export interface MessagePosition {
  firstEventAt: number;
  key: string;
}

export interface TrackingIdRecord {
  trackingId: string;
  /** Messages that carry this tracking ID. */
  messages: number;
  /** Of those, how many reached delivered, bounced (hard or soft) and complained. */
  delivered: number;
  bounced: number;
  complained: number;
  /** Epoch milliseconds of the latest event of any of those messages. */
  lastEventAt: number;
  /**
   * Beside the spec's counters: of those messages, how many were opened, clicked and unsubscribed from
   * (each message once). Rows counted before these existed count from then on (PostgreSQL backfilled
   * them from the messages still retained; see docs/storage.md).
   */
  opened: number;
  clicked: number;
  unsubscribed: number;
}

/**
 * One normalized event, prepared by the service for a store: every rule that needs judgment (policy,
 * normalization, hashing, keys) has already been applied, so a store only stores.
 */
export interface StoredEvent {
  /** Deduplication key, unique within the project (the service prefixes it with the provider). */
  key: string;
  /** What this event alone says about its message; `null` when the event names no message. */
  message: MessageRecord | null;
  /** `trackingIdSearchKey(message.trackingId)`, for the tracking-ID row this event may create. */
  trackingIdSearchKey: string | null;
  /**
   * The suppression the policy decided on, with `createdAt` = the event time, in the list of its
   * `stream` (an unsubscribe's stream; project-wide when absent); `null` for none.
   */
  suppression: SuppressionRecord | null;
  /**
   * The event's entry in the timeline of `message`, present whenever `message` is: added with the rest
   * of the event (`insertTimelineEntry`), kept while the message is, removed with it.
   */
  timelineEntry?: TimelineEntry;
  /**
   * What the soft-bounce rule counts (`ApplyEventsOptions.softBounces`): present only when the project
   * has the rule and the event is a soft bounce, or a delivery when the rule resets on one.
   */
  ruleInput?: SoftBounceInput | DeliveryInput;
  /**
   * Who sent it, for the feed (`webhookActor(provider, type)`): the actor of the event's suppression and
   * status changes. A suppression the soft-bounce rule makes is `ruleActors.softBounces`'s, an alert
   * crossing and the streams it pauses `ruleActors.alerts`'s, an expired record it replaces
   * `ruleActors.expiry`'s.
   */
  actor?: string;
}

/**
 * What `Store.eraseAddress` needs: the address in every form the service knows, and what to keep of it
 * (docs/decisions.md, "Erasure").
 */
export interface AddressErasure {
  hash: string;
  /** The address as normalized (`normalizeEmail`): messages whose `recipient` is this go. */
  email: string;
  /** Every text of the address a dedup key may embed (as given, normalized, lower-cased, JSON-escaped), each non-empty. */
  forms: readonly string[];
  /** What the project-wide list gets when it holds no live record of `hash` at `now`: `erasedEmail(hash)`, reason `manual`, source `api`, `createdAt` = `now`, no expiry. */
  suppression: SuppressionRecord;
  now: number;
  actor?: string;
}

/** What an erasure did (`Store.eraseAddress`). */
export interface ErasureResult {
  /** The hash's suppressions after it, one per list that holds it (the project-wide one first, then by stream name). */
  records: SuppressionRecord[];
  /** Messages deleted (with their timelines and dedup keys), and feed changes deleted. */
  messages: number;
  changes: number;
}

/** A message with its timeline, oldest event first (`compareTimelineEntries`), at most `TIMELINE_CAP` entries. */
export interface MessageWithTimeline extends MessageRecord {
  timeline: TimelineEntry[];
}

/**
 * What applying one event did. `duplicate`: its key was seen, nothing changed. Otherwise it was applied,
 * and the outcome also says what it did to its recipient's suppression in the event's list (`stream`), as
 * if the batch's events were applied one by one in order: `suppressed` when that list had none (this event created it),
 * `upgraded_from_<reason>` when it had a weaker reason (this event raised it), `applied` when the event
 * carried no suppression or the one it carried changed no reason (a time or provenance may still move).
 * Exactly one event of a project ever reports `suppressed` for an address in a list until it is removed from it, however
 * many instances apply events concurrently: the hooks (`MailwardenOptions.on`) rely on it.
 */
export type EventOutcome = 'duplicate' | 'applied' | 'suppressed' | `upgraded_from_${SuppressionReason}`;

/** What merging one suppression record did (`Store.mergeSuppressions`): an event outcome that is never a duplicate. */
export type SuppressionMergeOutcome = Exclude<EventOutcome, 'duplicate'>;

/** A message listing's filters, all combinable (a message must match every one given), and its page. */
export interface MessageQuery {
  trackingId?: string;
  status?: MessageStatus;
  /** The recipient, normalized (`normalizeEmail`), as messages store it: an exact match. */
  recipient?: string;
  /**
   * Only messages whose recipient starts with this text, compared exactly (code point by code point, no
   * case folding: the service folds it as addresses are, `normalizeAddressPrefix`). Any text, `''`
   * included (every message). A store finds these in the listing order as fast as it finds `provider`
   * ones, or through an index of its own (docs/storage.md, "Partial search").
   */
  recipientPrefix?: string;
  /**
   * Only messages whose recipient's text after its first `@` (all of it, when it has none) is exactly
   * this (`normalizeAddressDomain` makes it from what a user typed). Any text: `''` matches a recipient
   * that ends at its `@`, so, among normalized ones, none.
   */
  recipientDomain?: string;
  provider?: Provider;
  /** Only messages whose `stream` is exactly this (a stream name); a store finds them as it finds `provider` ones. */
  stream?: string;
  /** Only messages whose `lastEventAt` is at or after this (epoch ms, inclusive). */
  from?: number;
  /** Only messages whose `lastEventAt` is before this (epoch ms, exclusive). */
  to?: number;
  limit: number;
  after?: MessagePosition;
}

/** A suppression listing's filters, all combinable, and its page. */
export interface SuppressionQuery {
  /** The list: this stream's; absent for the project-wide list. A listing never mixes lists. */
  stream?: string;
  reason?: SuppressionReason;
  /** Only suppressions whose `email` starts with this text, compared exactly, as `MessageQuery.recipientPrefix` is. */
  emailPrefix?: string;
  /** Only suppressions whose `createdAt` is at or after this (epoch ms, inclusive). */
  from?: number;
  /** Only suppressions whose `createdAt` is before this (epoch ms, exclusive). */
  to?: number;
  /** `true`: only suppressions with an `expiresAt`; `false`: only those without. */
  expiring?: boolean;
  /** The caller's clock: suppressions expired at `now` are not listed. Absent: every one is. */
  now?: number;
  limit: number;
  after?: SuppressionPosition;
}

/** Counts over time of a project, or of one of its tracking IDs (see `messages/stats.ts`). */
export interface StatsQuery {
  /** Exactly this tracking ID (no case folding); absent for the whole project. */
  trackingId?: string;
  interval: StatsInterval;
  /** Epoch milliseconds, inclusive, a multiple of the interval's length (a UTC hour or midnight). */
  from: number;
  /** Epoch milliseconds, exclusive, a multiple of the interval's length, after `from`. */
  to: number;
}

export interface TrackingIdQuery {
  /** Already lower-cased with `trackingIdSearchKey`; matches a substring of each row's search key. */
  search?: string;
  limit: number;
  /** The last tracking ID of the previous page. */
  after?: string;
}

/**
 * Where mailwarden keeps its state: atomic domain operations, not a key-value API, so each store uses
 * its engine's own atomicity (a transaction in Postgres, a Lua script in Redis). Every operation is
 * scoped to one project; projects never see each other's data.
 *
 * Times are epoch milliseconds supplied by the caller; stores never read a clock of their own, so many
 * app instances sharing one store agree on order. Errors that mean "the store cannot be reached" are
 * thrown as `MailwardenError('store_unavailable')`.
 *
 * Every write appends what it changed to the project's change feed, in the same atomic step, when the
 * store keeps one (`changes`; the kinds and what each carries: `store/changes.ts`). A change's `at` is
 * the write's `now`; a write given none uses the record's own time (`createdAt`), or 0 for a removal.
 * A change's `actor` is the write's `actor` (`store/actor.ts`), absent when it got none; changes a
 * store makes by a rule carry that rule's (`ruleActors`).
 *
 * The conformance suite in `@mailwarden/store-test-suite` is the executable form of this contract.
 */
export interface Store {
  /**
   * The suppression of one hash, or `undefined`. One round trip. Without `stream`, the project-wide
   * list's. With a stream, what holds the address for mail of that stream: the project-wide entry when
   * there is one, else that stream's entry (its `stream` set), else `undefined` — still one round trip.
   * With `now`, a record expired at `now` counts as absent (a stream's entry then answers if it is not).
   */
  getSuppression(projectId: string, hash: string, stream?: string, now?: number): Promise<SuppressionRecord | undefined>;

  /**
   * The suppressions of many hashes, in the order asked (duplicates included), each as `getSuppression`
   * answers it for the same `stream` and `now`. One round trip.
   */
  getSuppressions(projectId: string, hashes: readonly string[], stream?: string, now?: number): Promise<(SuppressionRecord | undefined)[]>;

  /**
   * Insert-if-absent in the list of `record.stream` (the project-wide list when absent), atomically.
   * Returns the stored record: the given one with `created: true`, or the existing one of that list,
   * unchanged, with `created: false` (an existing suppression is never downgraded). With `now`, an
   * existing record expired at `now` counts as absent: the given one replaces it (`created: true`).
   */
  addSuppression(
    projectId: string,
    record: SuppressionRecord,
    now?: number,
    actor?: string,
  ): Promise<{ record: SuppressionRecord; created: boolean }>;

  /**
   * Deletes a suppression from one list atomically: the project-wide list without `stream`, else that
   * stream's (never the other). Returns the record it deleted (expired or not), or `undefined` when that
   * list had none. Removing from the project-wide list also forgets the hash's soft-bounce history, so the
   * rule counts afresh.
   */
  removeSuppression(projectId: string, hash: string, stream?: string, now?: number, actor?: string): Promise<SuppressionRecord | undefined>;

  /**
   * Bulk import: joins each record into the list of its `stream` as an event's suppression joins (reason
   * only upgraded, `createdAt` the earliest, the email the first one stored, the provenance the one
   * `provenanceWins` keeps), in the given order, one round trip per batch (a store may cut a long list
   * into batches). Records of different lists may be mixed. Each record is merged atomically, so after a
   * failure the caller may send the records again: merging is idempotent. Returns per record what it did
   * to its list, as if merged one by one: `suppressed` (created), `upgraded_from_<reason>` (raised from
   * that reason), or `applied` (was there; its reason kept, its time or provenance may have moved).
   * Invalidates the hashes it changed, once per batch. A record's `expiresAt` goes with its provenance
   * (the join's winner keeps its own). With `now`, a stored record expired at `now` counts as absent, and
   * a given record already expired at `now` is not written (`applied`).
   */
  mergeSuppressions(
    projectId: string,
    records: readonly SuppressionRecord[],
    now?: number,
    actor?: string,
  ): Promise<SuppressionMergeOutcome[]>;

  /**
   * Bulk removal from one list (the project-wide one without `stream`, else that stream's): deletes
   * each hash, one round trip per batch. Returns per hash the record it deleted, or `undefined` when
   * there was none (a hash given twice: the second `undefined`). From the project-wide list, it also
   * forgets each hash's soft-bounce history, as `removeSuppression` does.
   */
  removeSuppressions(
    projectId: string,
    hashes: readonly string[],
    stream?: string,
    now?: number,
    actor?: string,
  ): Promise<(SuppressionRecord | undefined)[]>;

  /**
   * A page of one list (`query.stream`'s, else the project-wide one) in newest-first order (`createdAt`
   * descending, then `hash` ascending), starting strictly after `after`, of the suppressions that match
   * every filter given. Keyset pagination: an item present for the whole walk is returned exactly once,
   * whatever is added or removed meanwhile. Returns at most `limit` items. A stream's listing is as fast
   * as the project-wide one's of the same size.
   */
  listSuppressions(projectId: string, query: SuppressionQuery): Promise<SuppressionRecord[]>;

  /**
   * Applies events, each atomically and in the given order: if `key` was seen, nothing changes
   * (`duplicate`); otherwise, as one step, the key is recorded, the message merged (`mergeMessage`),
   * tracking-ID rows moved (`trackingIdDeltas`) and the suppression upserted in its list (`stream`; reason only upgraded,
   * `createdAt` the earliest, the provenance the one `provenanceWins` keeps, the `expiresAt` the
   * provenance's). A failure part-way leaves every event either wholly applied or not at
   * all, so the caller may retry the whole batch. Returns one outcome per event (`EventOutcome`).
   *
   * In the same step, for an event applied (not a duplicate):
   * - Allowlist: when the recipient (`suppression.hash`, or its `@domain`) is on the project's allowlist,
   *   a suppression of source `webhook` is not written and `ruleInput` is not counted. An unsubscribe
   *   (source `unsubscribe`) is written all the same: the recipient asked.
   * - The soft-bounce rule (`options.softBounces` with `ruleInput`), exactly as docs/decisions.md, "The
   *   soft-bounce rule", states it: the history kept per address, what it forgets, and when a window
   *   makes a `hard_bounce` suppression (its provenance `rule` lists the bounces). When it makes or
   *   raises one, the event's outcome says so as if the event had carried that suppression.
   * - Alerts (`options.alerts`): the windows move and may cross (`ApplyEventsOptions.alerts`).
   * - The feed: in the order they happen, each suppression change of the event (an expired record it
   *   replaces, then added / upgraded / updated), its message's `message.status_changed` when the merge
   *   changed the status or created the message, then any alert crossing and the streams it paused.
   */
  applyEvents(projectId: string, events: readonly StoredEvent[], options?: ApplyEventsOptions): Promise<EventOutcome[]>;

  /**
   * Messages newest first (`firstEventAt` descending, then `key` ascending) that match every filter
   * given, keyset-paged: a page starts strictly after `after` and holds at most `limit` items, fewer
   * only when no further message matches.
   */
  listMessages(projectId: string, query: MessageQuery): Promise<MessageRecord[]>;

  /**
   * One message by its key (`MessageRecord.key`) with its timeline, or `undefined` when the project has
   * no such message (never stored, or removed by retention, timeline and all). One round trip.
   */
  getMessage(projectId: string, key: string): Promise<MessageWithTimeline | undefined>;

  /** Tracking IDs with at least one message, in code-point order of the ID, filtered by `search`. */
  listTrackingIds(projectId: string, query: TrackingIdQuery): Promise<TrackingIdRecord[]>;

  /**
   * The row of exactly this tracking ID (no case folding), as `listTrackingIds` lists it; `undefined`
   * when the project has no message with that tracking ID. One round trip.
   */
  getTrackingId(projectId: string, trackingId: string): Promise<TrackingIdRecord | undefined>;

  /**
   * The buckets of `[from, to)` whose counts are not all 0, oldest first: per message and counted fact
   * (`statColumns`), 1 in the UTC hour of the earliest event that established it, a day being the sum
   * of its hours. `applyEvents` keeps them with the event, atomically; they never expire (retention
   * forgets messages, not counts). One round trip.
   */
  getStats(projectId: string, query: StatsQuery): Promise<StatsBucket[]>;

  /** A page of the project's allowlist (`AllowlistQuery`). */
  listAllowlist(projectId: string, query: AllowlistQuery): Promise<AllowlistEntry[]>;

  /** Adds an entry if its `key` is absent. Returns the stored entry: the given one (`created`) or the existing one. */
  addAllowlistEntry(projectId: string, entry: AllowlistEntry, actor?: string): Promise<{ entry: AllowlistEntry; created: boolean }>;

  /** Removes the entry of `key`. Returns it, or `undefined` when there was none. */
  removeAllowlistEntry(projectId: string, key: string, now?: number, actor?: string): Promise<AllowlistEntry | undefined>;

  /**
   * Whether each recipient is allowlisted: its hash, or `@` and the text after the last `@` of its
   * `email`, is a key of the project's allowlist. In the order given; one round trip.
   */
  findAllowlisted(projectId: string, recipients: readonly { hash: string; email: string }[]): Promise<boolean[]>;

  /**
   * The change feed's retention when the store keeps one (made with its `changes` option), else absent:
   * then it appends nothing and `listChanges` answers `{ changes: [], next: after, last: 0 }`.
   */
  readonly changes?: Required<ChangeFeedOptions>;

  /**
   * A page of the project's change feed (`ChangeQuery`, `ChangePage`). Throws
   * `MailwardenError('change_cursor_expired')` when retention deleted a change with `seq > after`: the
   * reader missed changes, and must start again from a listing. One round trip.
   */
  listChanges(projectId: string, query: ChangeQuery): Promise<ChangePage>;

  /** The project's alert windows of these scopes (`null`: the project's), in the order asked; `undefined` for a window never moved. */
  getAlertWindows(projectId: string, trackingIds: readonly (string | null)[]): Promise<(AlertWindow | undefined)[]>;

  /** The project's paused streams, by name. */
  listPausedStreams(projectId: string): Promise<PausedStream[]>;

  /** Pauses a stream's sending (`stream.paused`, cause `operator`) unless already paused. Returns the paused stream, and whether this call paused it. */
  pauseStream(projectId: string, stream: string, now: number, actor?: string): Promise<{ paused: PausedStream; created: boolean }>;

  /** Resumes a paused stream (`stream.resumed` with its cause). Returns what was paused, or `undefined` when it was not. */
  resumeStream(projectId: string, stream: string, now: number, actor?: string): Promise<PausedStream | undefined>;

  /**
   * Takes (or renews) the lease on delivering one endpoint's changes: granted when no one holds it, its
   * holder's lease ended (`until <= now`), or `owner` holds it; then it runs to `until`. Returns the
   * endpoint's state, or `undefined` when another owner holds a lease that has not ended. An endpoint
   * seen for the first time starts with `cursor` = the project's latest `seq` (it receives changes made
   * from then on), `failures` 0, `nextAttemptAt` 0. Atomic: two callers never both hold a lease.
   */
  leaseOutbound(projectId: string, endpoint: string, owner: string, now: number, until: number): Promise<OutboundState | undefined>;

  /**
   * Writes an endpoint's progress if `owner` still holds its lease (whether or not it has ended, as long
   * as no one else took it), and keeps the lease to `until`; `until <= now` gives it up. Returns whether
   * it was written. When `pausedAt` goes from `null` to a time, appends `endpoint.paused`.
   */
  saveOutbound(projectId: string, endpoint: string, owner: string, progress: OutboundProgress, until: number): Promise<boolean>;

  /** The states of these endpoints, in the order asked; `undefined` for one never leased. */
  getOutbound(projectId: string, endpoints: readonly string[]): Promise<(OutboundState | undefined)[]>;

  /**
   * Resumes a paused endpoint: `pausedAt`, `failures`, `failingSince` and `lastError` cleared,
   * `nextAttemptAt` 0, its cursor kept (nothing is lost), `endpoint.resumed` appended. Returns the state,
   * or `undefined` when it was never leased. A running endpoint is returned unchanged (nothing appended).
   */
  resumeOutbound(projectId: string, endpoint: string, now: number, actor?: string): Promise<OutboundState | undefined>;

  /**
   * Erases an address from the project, atomically (docs/decisions.md, "Erasure"), keeping what blocks it:
   * - Its suppressions (`hash`, every list) stay, with `email` = `erasure.suppression.email`, no
   *   `diagnostic` in their provenance (`event`, each of `rule.events`); the project-wide one also loses
   *   its `expiresAt`. When the project-wide list holds none live at `now`, `erasure.suppression` is
   *   written there (an expired one replaced without a change of its own).
   * - Its allowlist entry (key `hash`) is removed.
   * - Messages whose `recipient` is `email` are deleted with their timelines, recipient indexes and the
   *   dedup keys of their events (`<provider>:<eventKey>` of each timeline entry); so are dedup keys that
   *   contain any of `forms`, and the hash's soft-bounce history. Tracking-ID rows, stats and alert
   *   windows stay: counts, not addresses.
   * - The feed's changes about it are deleted (suppression changes of `hash`, allowlist changes of key
   *   `hash`, `message.status_changed` whose message's `recipient` is `email`; earlier erasures stay), and
   *   `address.erased` is appended (when the store keeps a feed) with `actor` at `now`.
   * - Check caches drop `hash`. Calling it again erases nothing more and appends another `address.erased`.
   */
  eraseAddress(projectId: string, erasure: AddressErasure): Promise<ErasureResult>;

  /**
   * Makes the project's stored list of keys (by `name`) equal to `keys`, atomically, and appends for each
   * difference, in name order: `key.added`, `key.updated` (its scopes or `version` differ) or
   * `key.removed`, with `actor` at `now`. Returns the changes it appended (their `seq` 0 when the store
   * keeps no feed; it keeps the list all the same): none when the list was already equal (another
   * instance synced first).
   */
  syncApiKeys(projectId: string, keys: readonly SyncedKey[], now: number, actor: string): Promise<KeyChange[]>;

  /**
   * Optional, for rate limits shared by every instance (docs/http.md, "Rate limits"): adds `counts[i]`
   * requests (a whole number ≥ 1; 1 when `counts` is absent) to bucket i's current window
   * (`Math.floor(now / windowMs)`), atomically per bucket, and returns each bucket's count in that window
   * after it, in the order given. One round trip. A window's count may be forgotten once the window has
   * ended. Buckets are the limiter's names, not a project's data.
   */
  hitRateLimits?(buckets: readonly string[], windowMs: number, now: number, counts?: readonly number[]): Promise<number[]>;

  /**
   * Optional, for check caches across instances: calls `listener` whenever any instance sharing this
   * store adds, removes or changes suppressions of a project (at most once per write, after it is
   * committed; delivery is best effort). Resolves once listening; the returned function stops.
   */
  subscribeInvalidations?(listener: (invalidation: SuppressionInvalidation) => void): Promise<() => Promise<void>>;

  /**
   * Optional, for webhook replay protection shared by every instance (Mailgun signs a one-time token,
   * not the body). Atomically records that `token` was used by a request whose body has the digest
   * `digest`, until `expiresAt` (epoch milliseconds), and answers how this use relates to earlier ones:
   * `'first'` when the token was not recorded (it is now), `'same'` when it was recorded with this same
   * digest (a retry of the same request, harmless since events are deduplicated), `'conflict'` when it
   * was recorded with another digest (the token replayed with another body: refuse it). A record may be
   * forgotten once `expiresAt` has passed. Stores without it fall back to a per-process memory.
   */
  claimWebhookToken?(projectId: string, token: string, digest: string, expiresAt: number): Promise<WebhookTokenClaim>;

  /**
   * Optional, for stores whose retention needs a sweep (see docs/storage.md): deletes messages whose
   * last event is older than the store's configured message retention, with their dedup keys,
   * webhook token claims whose `expiresAt` is before `now`, suppressions (of every list) expired at
   * `now` (invalidating their hashes; each appends `suppression.expired`), soft-bounce history older
   * than its rule keeps it, and changes outside the feed's retention (`changes`). `now` is
   * epoch milliseconds. Bounded: one call does a bounded amount of work per kind, so a sweep that
   * runs again later finishes the rest. Returns how many messages and suppressions it deleted.
   */
  purgeExpired?(now: number): Promise<number>;

  /** Releases what the store holds (connections belong to the caller and stay open). */
  close(): Promise<void>;
}

/** How a use of a one-time webhook token relates to earlier uses; see `Store.claimWebhookToken`. */
export type WebhookTokenClaim = 'first' | 'same' | 'conflict';

/**
 * Which suppressions changed: some hashes of a project, in any of its lists (the project-wide one or a
 * stream's). A check cache drops every answer about those hashes, whatever stream it was for.
 */
export interface SuppressionInvalidation {
  projectId: string;
  hashes: readonly string[];
}
