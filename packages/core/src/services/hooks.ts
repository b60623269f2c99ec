import type { DeliveryEvent } from '../events/delivery-event.js';
import type { MailwardenMetrics } from '../metrics.js';
import { timelineEntryId } from '../messages/timeline.js';
import type { EventOutcome, StoredEvent, SuppressionRecord } from '../store/store.js';
import type { SuppressionCause, SuppressionProvenance, SuppressionSource } from '../suppressions/provenance.js';
import type { SuppressionReason } from '../vocabulary.js';

/** Where mailwarden reports what no caller can be told, such as a hook that threw. Pino-shaped. */
export interface MailwardenLogger {
  error(context: Record<string, unknown>, message: string): void;
}

/**
 * Functions mailwarden calls after a change is committed to the store, so the app learns of it as it
 * happens. Each is called at most once per change, by the instance that made it, never for a
 * duplicate; its result is not awaited by anything mailwarden answers (see `createMailwarden`'s `on`).
 */
export interface MailwardenHooks {
  /** A new event was recorded. */
  event?: (notice: EventNotice) => void | PromiseLike<unknown>;
  /**
   * An address became suppressed in a list (by an event, `suppressions.add`, an import or an
   * unsubscribe), or an event raised its reason there; `stream` says which list.
   */
  suppressed?: (notice: SuppressedNotice) => void | PromiseLike<unknown>;
  /** A suppression was removed from a list (`suppressions.remove`, the API's DELETE); `stream` says which. */
  unsuppressed?: (notice: UnsuppressedNotice) => void | PromiseLike<unknown>;
}

export interface EventNotice {
  projectId: string;
  /** The event as recorded: the recipient normalized, the tracking ID (and a given stream) `null` when it was dropped. */
  event: DeliveryEvent;
  /** The message's ID in `messages.get` and `GET /projects/{projectId}/messages/{id}`; `null` when the event names no message. */
  messageKey: string | null;
  /** The event's ID in its message's timeline, and in the `cause` of a suppression it caused. */
  eventId: string;
}

export interface SuppressedNotice {
  projectId: string;
  /** The normalized address, and its hash as the API names it. */
  email: string;
  hash: string;
  /** The reason it has now. */
  reason: SuppressionReason;
  /** The weaker reason it had when an event raised it; `null` when it was not suppressed. */
  previousReason: SuppressionReason | null;
  /** `unsubscribe` (reason `manual`) when the recipient asked: tells an unsubscribe from a manual add and a bounce. */
  source: SuppressionSource;
  /** When the cause happened: the event's time when an event caused it, the add's time otherwise. */
  at: Date;
  /** The event that caused a `webhook` suppression, or an `unsubscribe` one from a provider's event; `null` otherwise. */
  cause: SuppressionCause | null;
  /** The list it is in: a stream's name, `null` for the project-wide list (which blocks every stream). */
  stream: string | null;
  /** When it stops suppressing; only when it does (docs/core.md, "Expiry"). */
  expiresAt?: Date;
  /** Only when the soft-bounce rule made it: the rule and the bounces that met it, oldest first (`cause` is the last). */
  rule?: SoftBounceRuleNotice;
  /** Only when it was added or imported while the address was allowlisted. */
  allowlisted?: true;
}

/** The soft-bounce rule as it made a suppression, as the `suppressed` hook tells it. */
export interface SoftBounceRuleNotice {
  bounces: number;
  days: number;
  resetOnDelivery: boolean;
  /** Each bounce of the window: the event, as `cause` is told, and its time. */
  events: (SuppressionCause & { at: Date })[];
}

export interface UnsuppressedNotice {
  projectId: string;
  email: string;
  hash: string;
  /** What the removed suppression said. */
  reason: SuppressionReason;
  suppressedAt: Date;
  /** When it was removed (the instance's clock). */
  at: Date;
  /** The list it was removed from: a stream's name, `null` for the project-wide list. */
  stream: string | null;
}

/** One call to make: a hook's name and its notice. */
export type HookCall =
  | { hook: 'event'; notice: EventNotice }
  | { hook: 'suppressed'; notice: SuppressedNotice }
  | { hook: 'unsuppressed'; notice: UnsuppressedNotice };

export interface HookDispatcher {
  /** Which hooks the app gave: callers skip building notices nobody receives. */
  readonly wants: Readonly<Record<HookCall['hook'], boolean>>;
  /** Calls the hooks, in this order, after the current turn of the event loop; never throws. */
  notify(calls: readonly HookCall[]): void;
  /** `notify` once `calls` resolves (pending until then, for `settled`); a rejection is logged. Never throws. */
  notifyLater(calls: Promise<readonly HookCall[]>): void;
  /** Resolves once every call notified so far has returned, resolved or rejected. */
  settled(): Promise<void>;
}

export const DEFAULT_MAX_PENDING_HOOK_CALLS = 1000;

/**
 * Calls the app's hooks without ever making a caller wait: `notify` only queues, and the calls start on
 * the next turn of the event loop, after whatever answer the caller was about to send. A call that
 * throws or rejects is logged. A call whose promise has not settled counts as pending; past
 * `maxPending` pending calls, new ones are dropped and logged (a hook that hangs cannot grow memory
 * without bound), the first drop at once and the total when the pending calls have drained.
 */
export function createHookDispatcher(
  hooks: MailwardenHooks,
  logger: MailwardenLogger,
  maxPending = DEFAULT_MAX_PENDING_HOOK_CALLS,
  metrics?: MailwardenMetrics,
): HookDispatcher {
  if (!Number.isSafeInteger(maxPending) || maxPending < 1)
    throw new RangeError(`maxPendingHookCalls must be a positive integer; got ${maxPending}`);
  let pending = 0;
  let dropped = 0;
  let waiters: (() => void)[] = [];

  const finish = () => {
    pending--;
    if (pending > 0) return;
    if (dropped > 0) {
      logger.error(
        { dropped },
        `mailwarden: ${dropped} hook calls were dropped while ${maxPending} were pending; catch up from the listings (docs/core.md#hooks)`,
      );
      dropped = 0;
    }
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  };

  const call = (next: HookCall) => {
    const { hook, notice } = next;
    const failed = (error: unknown) => {
      logger.error({ err: error, hook, ...identify(next) }, `mailwarden: the ${hook} hook failed`);
      finish();
    };
    let result: unknown;
    try {
      result = (hooks[hook] as (notice: unknown) => unknown)(notice);
    } catch (error) {
      return failed(error);
    }
    // Through Promise.resolve: a thenable whose `then` throws becomes a rejection, not a lost call.
    if (isThenable(result)) Promise.resolve(result).then(finish, failed);
    else finish();
  };

  const dispatcher: HookDispatcher = {
    wants: { event: hooks.event !== undefined, suppressed: hooks.suppressed !== undefined, unsuppressed: hooks.unsuppressed !== undefined },
    notifyLater(calls) {
      pending++;
      calls.then(
        (ready) => {
          dispatcher.notify(ready);
          finish();
        },
        (error: unknown) => {
          logger.error(
            { err: error },
            'mailwarden: the hook calls of a change could not be prepared; catch up from the listings (docs/core.md#hooks)',
          );
          finish();
        },
      );
    },
    notify(calls) {
      const accepted: HookCall[] = [];
      for (const next of calls) {
        if (hooks[next.hook] === undefined) continue;
        if (pending >= maxPending) {
          metrics?.hookCallsDropped(1);
          if (dropped++ === 0) {
            logger.error(
              { hook: next.hook, ...identify(next) },
              `mailwarden: ${maxPending} hook calls are pending, so this one and any more until they drain are dropped`,
            );
          }
          continue;
        }
        pending++;
        accepted.push(next);
      }
      if (accepted.length > 0) setImmediate(() => accepted.forEach(call));
    },
    settled() {
      return pending === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
    },
  };
  return dispatcher;
}

/**
 * What the calls of one `applyEvents` are: per applied event, `event`, then `suppressed` when it changed
 * the suppression. An event whose outcome the soft-bounce rule made tells the rule's record, read back
 * (`ruleRecords`, by the event's index; none when it was gone by then).
 */
export function eventHookCalls(
  wants: HookDispatcher['wants'],
  projectId: string,
  events: readonly DeliveryEvent[],
  stored: readonly StoredEvent[],
  outcomes: readonly EventOutcome[],
  ruleRecords?: ReadonlyMap<number, SuppressionRecord | undefined>,
): HookCall[] {
  const calls: HookCall[] = [];
  outcomes.forEach((outcome, index) => {
    if (outcome === 'duplicate') return;
    const { key, message, suppression } = stored[index]!;
    if (wants.event)
      calls.push({
        hook: 'event',
        notice: { projectId, event: events[index]!, messageKey: message?.key ?? null, eventId: timelineEntryId(key) },
      });
    if (outcome === 'applied' || !wants.suppressed) return;
    const previousReason = outcome === 'suppressed' ? null : (outcome.slice('upgraded_from_'.length) as SuppressionReason);
    const record = suppression ?? ruleRecords?.get(index);
    if (record !== undefined) calls.push({ hook: 'suppressed', notice: suppressedNotice(projectId, record, previousReason) });
  });
  return calls;
}

/** A suppression as the `suppressed` hook tells it: the record this change wrote. */
export function suppressedNotice(projectId: string, record: SuppressionRecord, previousReason: SuppressionReason | null): SuppressedNotice {
  const provenance = record.provenance;
  const notice: SuppressedNotice = {
    projectId,
    email: record.email,
    hash: record.hash,
    reason: record.reason,
    previousReason,
    source: provenance?.source ?? 'api',
    at: new Date(provenance?.at ?? record.createdAt),
    cause: provenance?.event === undefined ? null : { ...provenance.event },
    stream: record.stream ?? null,
  };
  // Only when set, so notices of records without them are as they were.
  if (record.expiresAt !== undefined) notice.expiresAt = new Date(record.expiresAt);
  if (provenance?.rule !== undefined) notice.rule = ruleNotice(provenance.rule);
  if (provenance?.allowlisted === true) notice.allowlisted = true;
  return notice;
}

function ruleNotice(rule: NonNullable<SuppressionProvenance['rule']>): SoftBounceRuleNotice {
  return {
    bounces: rule.bounces,
    days: rule.days,
    resetOnDelivery: rule.resetOnDelivery,
    events: rule.events.map(({ at, ...cause }) => ({ ...cause, at: new Date(at) })),
  };
}

export function unsuppressedNotice(projectId: string, record: SuppressionRecord, at: number): UnsuppressedNotice {
  return {
    projectId,
    email: record.email,
    hash: record.hash,
    reason: record.reason,
    suppressedAt: new Date(record.createdAt),
    at: new Date(at),
    stream: record.stream ?? null,
  };
}

/** Enough of a call to find its change again in the listings: never the address itself (logs are not for personal data). */
function identify(call: HookCall): Record<string, unknown> {
  const { projectId } = call.notice;
  if (call.hook === 'event')
    return { projectId, provider: call.notice.event.provider, eventId: call.notice.eventId, messageKey: call.notice.messageKey };
  return { projectId, hash: call.notice.hash, reason: call.notice.reason, stream: call.notice.stream };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}
