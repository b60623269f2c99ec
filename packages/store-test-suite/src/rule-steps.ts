import type { Store } from '@mailwarden/core';
import type { AllowlistEntry, StoredEvent, StoredSoftBounceRule, SuppressionRecord } from '@mailwarden/core/store';
import { ruleAddressPool, type RuleConfig, type RuleStep } from './arbitraries.js';
import { delivery, HOUR, softBounce, softBounceRule, suppressingEvent, T0 } from './records.js';

/** A store call a property test makes on the store under test and on the model alike. */
export interface RuleCall {
  describe: string;
  run: (store: Store, projectId: string) => Promise<unknown>;
}

const hours = (count: number) => T0 + count * HOUR;

/** The allowlist entries of `RuleStep`: each address of the pool, then the domain of the first two. */
export const ruleAllowlist: AllowlistEntry[] = [
  ...ruleAddressPool.map(({ hash, email }) => ({ key: hash, entry: email, createdAt: T0 })),
  { key: '@example.com', entry: '@example.com', createdAt: T0 },
];

export function storedRule(config: RuleConfig): StoredSoftBounceRule {
  return softBounceRule(config.bounces, config.days, config);
}

/** The event a step is, as the service prepares it (its key from its index), or `undefined` for a step that is not one. */
export function ruleEvent(step: RuleStep, index: number): StoredEvent | undefined {
  const key = `rule:event-${index}`;
  if (!('hour' in step)) return undefined;
  const address = ruleAddressPool[step.address]!;
  const time = hours(step.hour);
  switch (step.kind) {
    case 'soft_bounce':
      return softBounce(address, time, `message-${step.message}`, key, step.diagnostic);
    case 'delivery':
      return delivery(address, time, key);
    case 'webhook':
      return suppressingEvent(address, step.reason, time, { key, ...expiry(time, step.expiresAfterHours) });
    case 'unsubscribe':
      return suppressingEvent(address, 'manual', time, {
        key,
        source: 'unsubscribe',
        ...(step.stream === undefined ? {} : { stream: step.stream }),
      });
    default:
      return undefined;
  }
}

const expiry = (time: number, expiresAfterHours: number | null) =>
  expiresAfterHours === null ? {} : { expiresAt: time + expiresAfterHours * HOUR };

/** An added or imported suppression a step makes. */
function manual(step: Extract<RuleStep, { kind: 'merge' | 'add' }>): SuppressionRecord {
  const { hash, email } = ruleAddressPool[step.address]!;
  const time = hours(step.hour);
  const source = step.kind === 'merge' ? step.source : 'api';
  return { hash, email, reason: step.reason, createdAt: time, provenance: { source, at: time }, ...expiry(time, step.expiresAfterHours) };
}

/**
 * The calls that make `steps` happen at `now` under `rule`: consecutive events in batches cut at
 * `cuts` (`batches`' way), every other step a call of its own. `indices`: each step's index in the
 * whole scenario, which names its event (a share of a scenario keeps its events' keys).
 */
export function ruleCalls(
  steps: readonly RuleStep[],
  cuts: readonly number[],
  rule: StoredSoftBounceRule,
  now: number,
  indices: readonly number[] = [...steps.keys()],
): RuleCall[] {
  const options = { now, softBounces: rule };
  const calls: RuleCall[] = [];
  let batch: StoredEvent[] = [];
  const cut = new Set(cuts.map((point) => point % (steps.length + 1)));
  const flush = () => {
    if (batch.length === 0) return;
    const events = batch;
    batch = [];
    calls.push({
      describe: `applyEvents(${events.map((event) => event.key).join(', ')})`,
      run: (store, projectId) => store.applyEvents(projectId, events, options),
    });
  };
  steps.forEach((step, index) => {
    if (cut.has(index)) flush();
    const event = ruleEvent(step, indices[index]!);
    if (event !== undefined) {
      batch.push(event);
      return;
    }
    flush();
    calls.push(stepCall(step, now));
  });
  flush();
  return calls;
}

function stepCall(step: RuleStep, now: number): RuleCall {
  const describe = JSON.stringify(step);
  switch (step.kind) {
    case 'merge':
      return { describe, run: (store, projectId) => store.mergeSuppressions(projectId, [manual(step)], now) };
    case 'add':
      return { describe, run: (store, projectId) => store.addSuppression(projectId, manual(step), now) };
    case 'remove':
      // At `now`, as the service removes: the change's time (a removal without one is at 0).
      return {
        describe,
        run: (store, projectId) => store.removeSuppression(projectId, ruleAddressPool[step.address]!.hash, undefined, now),
      };
    case 'allow':
      return { describe, run: (store, projectId) => store.addAllowlistEntry(projectId, ruleAllowlist[step.entry]!) };
    case 'disallow':
      return { describe, run: (store, projectId) => store.removeAllowlistEntry(projectId, ruleAllowlist[step.entry]!.key, now) };
    default:
      throw new Error(`not a call of its own: ${describe}`);
  }
}

/** Every list a rule scenario touches, at `now` and as stored (expired records included until purged). */
export async function ruleLists(store: Store, projectId: string, now: number): Promise<SuppressionRecord[][]> {
  const hashes = ruleAddressPool.map((address) => address.hash);
  return [
    await store.listSuppressions(projectId, { limit: 100, now }),
    await store.listSuppressions(projectId, { limit: 100, now, stream: 'marketing' }),
    (await store.getSuppressions(projectId, hashes, 'marketing', now)).filter((record) => record !== undefined),
    await store.listSuppressions(projectId, { limit: 100 }),
  ];
}
