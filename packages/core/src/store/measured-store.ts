import { isMailwardenError } from '../errors.js';
import type { MailwardenMetrics } from '../metrics.js';
import type { SuppressionSource } from '../suppressions/provenance.js';
import type { SuppressionReason } from '../vocabulary.js';
import type { EventOutcome, Store, SuppressionRecord } from './store.js';

type StoreMethod = { [K in keyof Store]-?: NonNullable<Store[K]> extends (...args: never[]) => unknown ? K : never }[keyof Store];

/** Every `Store` method: the `operation` label of the store metrics (docs/metrics.md). */
export const storeOperations = [
  'getSuppression',
  'getSuppressions',
  'addSuppression',
  'removeSuppression',
  'mergeSuppressions',
  'removeSuppressions',
  'listSuppressions',
  'applyEvents',
  'listMessages',
  'getMessage',
  'listTrackingIds',
  'getTrackingId',
  'getStats',
  'listAllowlist',
  'addAllowlistEntry',
  'removeAllowlistEntry',
  'findAllowlisted',
  'listChanges',
  'getAlertWindows',
  'listPausedStreams',
  'pauseStream',
  'resumeStream',
  'leaseOutbound',
  'saveOutbound',
  'getOutbound',
  'resumeOutbound',
  'eraseAddress',
  'syncApiKeys',
  'hitRateLimits',
  'subscribeInvalidations',
  'claimWebhookToken',
  'purgeExpired',
  'close',
] as const satisfies readonly StoreMethod[];

// A Store method missing from the list above fails to compile here, so no operation goes unmeasured.
const everyOperation: Record<Exclude<StoreMethod, (typeof storeOperations)[number]>, never> = {};
void everyOperation;

/** How often, at most, a project's alert rates are read back after events moved its window. */
export const ALERT_RATES_REFRESH_MS = 10_000;

export interface MeasuredStoreOptions {
  /** The clock that spaces the alert-rate reads, in epoch milliseconds. Default: `Date.now`. */
  now?: () => number;
}

/**
 * The store with every operation timed into `metrics` (`storeOperation`), and what its writes did to
 * suppressions counted (`suppressionsAdded` / `suppressionsRemoved`) from their results, so every path
 * that writes (events, API, imports, unsubscribes) is counted once, in one place. Each call reaches the
 * store as it was made and answers what the store answered. Members that are not `Store` methods are
 * reached through the prototype, unchanged. Only `createMailwarden({ metrics })` wraps a store.
 */
export function measureStore(store: Store, metrics: MailwardenMetrics, options: MeasuredStoreOptions = {}): Store {
  const now = options.now ?? Date.now;
  const measured = Object.create(store) as Store;
  const alertRatesReadAt = new Map<string, number>();

  const timed =
    <A extends unknown[], R>(operation: string, call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const started = performance.now();
      try {
        const result = await call(...args);
        metrics.storeOperation(operation, (performance.now() - started) / 1000, false);
        return result;
      } catch (error) {
        // An answer of the contract (a 4xx such as an expired cursor) is not a failure of the store.
        const failed = !isMailwardenError(error) || error.status >= 500;
        metrics.storeOperation(operation, (performance.now() - started) / 1000, failed);
        throw error;
      }
    };

  for (const operation of storeOperations) {
    const method = store[operation];
    if (typeof method !== 'function') continue;
    Object.defineProperty(measured, operation, {
      value: timed(operation, (method as (...args: unknown[]) => Promise<unknown>).bind(store)),
      writable: true,
      configurable: true,
      enumerable: true,
    });
  }

  const { addSuppression, mergeSuppressions, applyEvents, removeSuppression, removeSuppressions, getAlertWindows } = measured;
  // Each wrapper passes its arguments on as given (`...rest`): the store sees the call that was made.
  measured.addSuppression = async (projectId, record, ...rest) => {
    const result = await addSuppression(projectId, record, ...rest);
    if (result.created) metrics.suppressionsAdded(result.record.reason, sourceOf(result.record), 1);
    return result;
  };
  measured.mergeSuppressions = async (projectId, records, ...rest) => {
    const outcomes = await mergeSuppressions(projectId, records, ...rest);
    countAdded(
      metrics,
      outcomes.map((outcome, i) => (outcome === 'applied' ? undefined : records[i])),
    );
    return outcomes;
  };
  measured.applyEvents = async (projectId, events, applyOptions) => {
    const outcomes = await applyEvents(projectId, events, applyOptions);
    countAdded(
      metrics,
      outcomes.map((outcome, i) => (changedSuppression(outcome) ? (events[i]?.suppression ?? softBounceRuleRecord) : undefined)),
    );
    if (applyOptions?.alerts !== undefined) refreshAlertRates(projectId);
    return outcomes;
  };
  measured.removeSuppression = async (projectId, hash, ...rest) => {
    const removed = await removeSuppression(projectId, hash, ...rest);
    if (removed !== undefined) metrics.suppressionsRemoved(removed.reason, 1);
    return removed;
  };
  measured.removeSuppressions = async (projectId, hashes, ...rest) => {
    const removed = await removeSuppressions(projectId, hashes, ...rest);
    const byReason = new Map<SuppressionReason, number>();
    for (const record of removed) if (record !== undefined) byReason.set(record.reason, (byReason.get(record.reason) ?? 0) + 1);
    for (const [reason, count] of byReason) metrics.suppressionsRemoved(reason, count);
    return removed;
  };
  measured.getAlertWindows = async (projectId, trackingIds) => {
    const windows = await getAlertWindows(projectId, trackingIds);
    const project = trackingIds.indexOf(null);
    if (project >= 0) {
      const window = windows[project];
      const messages = window?.messages ?? 0;
      metrics.alertRates(projectId, messages === 0 ? 0 : window!.bounced / messages, messages === 0 ? 0 : window!.complained / messages);
    }
    return windows;
  };

  /** Reads the project's window back, at most every `ALERT_RATES_REFRESH_MS`, off the caller's path, so the gauge follows intake. */
  function refreshAlertRates(projectId: string): void {
    const time = now();
    const last = alertRatesReadAt.get(projectId);
    if (last !== undefined && time - last < ALERT_RATES_REFRESH_MS) return;
    alertRatesReadAt.set(projectId, time);
    // A failed read is already counted as a store error; the gauge keeps its last value.
    measured.getAlertWindows(projectId, [null]).catch(() => {});
  }

  return measured;
}

/** What the soft-bounce rule writes when it suppresses (an event that carried no suppression of its own). */
const softBounceRuleRecord = { reason: 'hard_bounce', provenance: { source: 'webhook' } } as const;

function changedSuppression(outcome: EventOutcome): boolean {
  return outcome === 'suppressed' || outcome.startsWith('upgraded_from_');
}

function sourceOf(record: Pick<SuppressionRecord, 'provenance'> | typeof softBounceRuleRecord): SuppressionSource {
  return record.provenance?.source ?? 'api';
}

/** Counts the records a write created or raised (the others `undefined`), one call per reason and source. */
function countAdded(
  metrics: MailwardenMetrics,
  records: readonly (Pick<SuppressionRecord, 'reason' | 'provenance'> | typeof softBounceRuleRecord | undefined)[],
): void {
  let counts: Map<string, { reason: SuppressionReason; source: SuppressionSource; count: number }> | undefined;
  for (const record of records) {
    if (record === undefined) continue;
    const source = sourceOf(record);
    const label = `${record.reason}\n${source}`;
    counts ??= new Map();
    const seen = counts.get(label);
    if (seen === undefined) counts.set(label, { reason: record.reason, source, count: 1 });
    else seen.count++;
  }
  if (counts !== undefined) for (const { reason, source, count } of counts.values()) metrics.suppressionsAdded(reason, source, count);
}
