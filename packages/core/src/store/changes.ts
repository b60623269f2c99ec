import type { DeliveryEventType } from '../events/delivery-event.js';
import type { MessageRecord } from '../messages/message.js';
import type { MessageStatus } from '../vocabulary.js';
import type { AllowlistEntry, SuppressionRecord } from './records.js';

/**
 * The change feed as a store keeps it (docs/decisions.md, "The change feed"): every change a store
 * makes, appended per project in the same atomic step that makes it, in the order the changes were
 * made. A store keeps a feed only when made with its `changes` option; without it, it appends nothing
 * and `listChanges` answers an empty page.
 */
export interface ChangeFeedOptions {
  /** Changes older than this (their `at`, against `purgeExpired`'s `now`) may be deleted by the sweep. Default 7 days. */
  maxAgeMs?: number;
  /** At most this many changes per project are kept: older ones may be deleted (on append or by the sweep). Default 100 000. */
  maxLength?: number;
}

export const DEFAULT_CHANGE_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
export const DEFAULT_CHANGE_MAX_LENGTH = 100_000;

/** The retention a store's feed applies: its `changes` option with the defaults filled in. */
export function changeFeedRetention(options: ChangeFeedOptions): Required<ChangeFeedOptions> {
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_CHANGE_MAX_AGE_MS;
  const maxLength = options.maxLength ?? DEFAULT_CHANGE_MAX_LENGTH;
  if (!Number.isSafeInteger(maxAgeMs) || maxAgeMs < 1) throw new RangeError(`changes.maxAgeMs must be a positive integer; got ${maxAgeMs}`);
  if (!Number.isSafeInteger(maxLength) || maxLength < 1)
    throw new RangeError(`changes.maxLength must be a positive integer; got ${maxLength}`);
  return { maxAgeMs, maxLength };
}

export const changeKinds = [
  'suppression.added',
  'suppression.upgraded',
  'suppression.updated',
  'suppression.removed',
  'suppression.expired',
  'message.status_changed',
  'alert.bounce_rate',
  'alert.complaint_rate',
  'allowlist.added',
  'allowlist.removed',
  'stream.paused',
  'stream.resumed',
  'endpoint.paused',
  'endpoint.resumed',
  'address.erased',
  'key.added',
  'key.updated',
  'key.removed',
] as const;
export type ChangeKind = (typeof changeKinds)[number];

interface ChangeBase {
  /** Per project, strictly increasing in the order the changes were made, from 1: the feed's order and cursor. */
  seq: number;
  /** The caller's clock (`now`) when the change was made, epoch milliseconds. */
  at: number;
  /**
   * Who made it (`store/actor.ts`: `key:<name>`, `webhook:<provider>:<event>`, `rule:<rule>`,
   * `import:<run>`, `unsubscribe[:<stream>]`, `config`): the audit trail. Absent when the writer named
   * none (an in-process call without `actor`, or a change stored before actors existed).
   */
  actor?: string;
}

/**
 * A suppression changed in one list (`record.stream`; project-wide when absent):
 * - `suppression.added`: the list had none (or only one expired at the writer's `now`: that one's
 *   `suppression.expired` comes first, in the same step).
 * - `suppression.upgraded`: its reason was raised (`previous` holds the record before).
 * - `suppression.updated`: its reason stayed, but something else stored moved (an earlier `createdAt`,
 *   another provenance, its `expiresAt`); `previous` holds the record before. A write that stores the
 *   same bytes appends nothing.
 * - `suppression.removed`: deleted by a removal (`record` as it was).
 * - `suppression.expired`: deleted because it expired (`record` as it was; `record.expiresAt` says when
 *   it stopped suppressing): by the sweep (`purgeExpired`), or replaced by a write after it expired.
 * Replaying a project's suppression changes in order onto empty lists gives exactly its stored lists.
 */
export interface SuppressionChange extends ChangeBase {
  kind: 'suppression.added' | 'suppression.upgraded' | 'suppression.updated' | 'suppression.removed' | 'suppression.expired';
  record: SuppressionRecord;
  /** `suppression.upgraded` and `suppression.updated` only: the record as it was. */
  previous?: SuppressionRecord;
}

/** An event changed its message's status (`messageStatus(facts)`), or created the message (`from: null`). */
export interface MessageStatusChange extends ChangeBase {
  kind: 'message.status_changed';
  /** The message as the event left it (its facts merged; identity fields as stored). */
  message: MessageRecord;
  from: MessageStatus | null;
  to: MessageStatus;
  /** The event that did it: its timeline entry (`StoredEvent.timelineEntry`): ID, type and time. */
  event: { id: string; type: DeliveryEventType; occurredAt: number };
}

/**
 * A rate of an alert window crossed its threshold: up (`firing: true`) when it reached `firePpm` with at
 * least `minMessages` in the window, down (`firing: false`) when it fell below `resolvePpm`.
 */
export interface AlertChange extends ChangeBase {
  kind: 'alert.bounce_rate' | 'alert.complaint_rate';
  /** The window: `null` for the project's, else this tracking ID's. */
  trackingId: string | null;
  firing: boolean;
  /** The window when it crossed: its messages, and of them how many hard-bounced or complained (the rate's count). */
  messages: number;
  count: number;
  /** The threshold crossed, in parts per million (`firePpm` going up, `resolvePpm` going down). */
  thresholdPpm: number;
}

export interface AllowlistChange extends ChangeBase {
  kind: 'allowlist.added' | 'allowlist.removed';
  entry: AllowlistEntry;
}

/** A stream's sending was paused (by an alert crossing, or an operator) or resumed (`Store.resumeStream`). */
export interface StreamChange extends ChangeBase {
  kind: 'stream.paused' | 'stream.resumed';
  stream: string;
  /** What paused it: an alert's kind, or `operator`. */
  cause: PausedStream['cause'];
}

/** An outbound endpoint was paused after failing too long, or resumed by an operator. */
export interface EndpointChange extends ChangeBase {
  kind: 'endpoint.paused' | 'endpoint.resumed';
  endpoint: string;
  /** `endpoint.paused`: the last failure, as `OutboundState.lastError`. */
  error?: string;
}

/**
 * An address was erased (`Store.eraseAddress`): every trace of it went, the feed's earlier changes
 * about it included, and what still blocks it is listed here by hash, its email replaced by
 * `erasedEmail(hash)`. Never carries the address. Replay: set each of `records` in its list, and
 * remove the allowlist entry of `hash`.
 */
export interface ErasureChange extends ChangeBase {
  kind: 'address.erased';
  hash: string;
  /** The hash's suppressions after the erasure, one per list that holds it (the project-wide one always). */
  records: SuppressionRecord[];
  /** How many messages (with their timelines and dedup keys) and feed changes went. */
  messages: number;
  changes: number;
}

/** An API key as the audit trail names it: never the key, nor its hash. */
export interface AuditedKey {
  name: string;
  /** Its scopes, sorted (`apiScopes` order). */
  scopes: string[];
}

/**
 * The keys that open a project changed (`Store.syncApiKeys`): a name appeared (`key.added`), its
 * scopes or its secret changed (`key.updated`), or it went (`key.removed`).
 */
export interface KeyChange extends ChangeBase {
  kind: 'key.added' | 'key.updated' | 'key.removed';
  key: AuditedKey;
  /** `key.updated` only: the key as it was. */
  previous?: AuditedKey;
}

export type Change =
  | SuppressionChange
  | MessageStatusChange
  | AlertChange
  | AllowlistChange
  | StreamChange
  | EndpointChange
  | ErasureChange
  | KeyChange;

export interface ChangeQuery {
  /** The `seq` of the last change already read; 0 for the start of the feed. */
  after: number;
  /** At most this many changes. */
  limit: number;
  /** Only changes of these kinds; absent or empty: every kind. */
  kinds?: readonly ChangeKind[];
  /**
   * Only changes whose `actor` matches one of these (`actorMatches`): equal to it, or starting with it
   * and a `:` (`key` matches every key, `webhook:ses` every SES event). Absent or empty: any actor.
   */
  actors?: readonly string[];
  /**
   * Only changes about this address hash: suppression changes of it (`record.hash`), allowlist changes
   * of it (`entry.key`), its erasures (`hash`). Combines with `kinds` and `actors` (all must match).
   */
  hash?: string;
}

export interface ChangePage {
  /** In `seq` order, each with `seq > after`, at most `limit`. */
  changes: Change[];
  /**
   * Where the next call starts (`after`): the last change's `seq`, or further when the store looked at
   * changes the filters skipped (a store looks at a bounded number per call). Never past a change
   * not yet read that matches.
   */
  next: number;
  /** The project's latest `seq` (0 when it has none): `next === last` means caught up. */
  last: number;
}

/** A key as `Store.syncApiKeys` compares it. */
export interface SyncedKey extends AuditedKey {
  /**
   * Changes when the key's secret changes (the service gives the first 16 hex of the SHA-256 of its
   * stored hash): stored to tell a rotation apart, never shown.
   */
  version: string;
}

/** An alert window's rule, as a store applies it (`ApplyEventsOptions.alerts`), made by the service from the project's `AlertRules`. */
export interface StoredAlertRule {
  /** How many messages a window holds: the last this many messages of its scope, by arrival at the store. */
  window: number;
  /** No crossing up while a window holds fewer messages than this. */
  minMessages: number;
  /** Hard bounces: up at `count × 10⁶ ≥ firePpm × messages`, down at `count × 10⁶ < resolvePpm × messages`. */
  bounce: { firePpm: number; resolvePpm: number };
  /** Complaints, likewise. */
  complaint: { firePpm: number; resolvePpm: number };
  /** Whether each tracking ID has a window of its own besides the project's. */
  trackingIds: boolean;
  /** Streams paused (in the same step, `stream.paused`) when a project window's rate crosses up. */
  pause: readonly string[];
}

/** An alert window now (`Store.getAlertWindows`). */
export interface AlertWindow {
  trackingId: string | null;
  /** Messages in the window (at most the rule's `window`). */
  messages: number;
  /** Of those, how many have hard-bounced, and how many complained. */
  bounced: number;
  complained: number;
  /** Whether each alert is up. */
  bounceFiring: boolean;
  complaintFiring: boolean;
}

export interface PausedStream {
  stream: string;
  /** Epoch milliseconds. */
  pausedAt: number;
  cause: 'alert.bounce_rate' | 'alert.complaint_rate' | 'operator';
}

/** Where one outbound endpoint of a project stands (`Store.leaseOutbound`). */
export interface OutboundState {
  endpoint: string;
  /** The `seq` of the last change acknowledged (or skipped by the endpoint's kinds): delivery resumes after it. */
  cursor: number;
  /** Failed attempts in a row at delivering the change after `cursor`; 0 after a success. */
  failures: number;
  /** Epoch milliseconds of the first of those failures; `null` when `failures` is 0. */
  failingSince: number | null;
  /** No attempt before this (epoch milliseconds; 0: at once). */
  nextAttemptAt: number;
  /** Epoch milliseconds it was paused after failing too long; `null` while it delivers. */
  pausedAt: number | null;
  /** The last failure, e.g. `HTTP 503` or `timeout`; `null` when none. */
  lastError: string | null;
  /** Epoch milliseconds of the last 2xx. */
  lastSuccessAt: number | null;
}

/** What a lease holder writes back (`Store.saveOutbound`): the state without its endpoint. */
export type OutboundProgress = Omit<OutboundState, 'endpoint'>;
