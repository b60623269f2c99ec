import { DAY_MS, timelineEntryId, type StoredEvent, type StoredSoftBounceRule, type SuppressionRecord } from '@mailwarden/core/store';
import fc from 'fast-check';
import { commutingRuleStep, RULE_HOURS, ruleConfig, ruleStep, type RuleStep } from './arbitraries.js';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';
import { createStoreModel } from './model.js';
import { addresses, delivery, HOUR, softBounce, softBounceRule, suppression, suppressingEvent, T0 } from './records.js';
import { ruleAllowlist, ruleCalls, ruleLists, storedRule } from './rule-steps.js';

const h = (count: number) => T0 + count * HOUR;

/** The suppression the rule makes of a window of soft bounces (design §3, step 5). */
export function ruleSuppression(rule: StoredSoftBounceRule, window: readonly StoredEvent[]): SuppressionRecord {
  const bounces = window.map((event) => {
    if (event.ruleInput?.kind !== 'soft_bounce') throw new Error('a window holds soft bounces');
    return event.ruleInput;
  });
  const end = bounces[bounces.length - 1]!;
  return {
    hash: end.hash,
    email: end.email,
    reason: 'hard_bounce',
    createdAt: end.at,
    provenance: {
      source: 'webhook',
      at: end.at,
      event: end.cause,
      rule: {
        bounces: rule.bounces,
        days: rule.days,
        resetOnDelivery: rule.resetOnDelivery,
        events: bounces.map((bounce) => ({ ...bounce.cause, at: bounce.at })),
      },
    },
    ...(rule.expiresAfterMs === null ? {} : { expiresAt: end.at + rule.expiresAfterMs }),
  };
}

/** Runs of a rule property: a quarter of the suite's, since each run makes a dozen calls or more. */
const ruleRuns = (options: StoreConformanceOptions) => Math.ceil((options.numRuns ?? 50) / 4);

export function describeSoftBounceRuleTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options);

  describe('the soft-bounce rule', () => {
    test('bounces of distinct messages within the window suppress the address project-wide, as hard_bounce, as of the last', async ({
      store,
      projectId,
    }) => {
      const [a] = addresses(1);
      const rule = softBounceRule(3, 1);
      const options = { now: h(12), softBounces: rule };
      const bounces = [softBounce(a, h(0), 'm1'), softBounce(a, h(5), 'm2'), softBounce(a, h(10), 'm3')] as const;
      expect(await store.applyEvents(projectId, bounces.slice(0, 2), options)).toStrictEqual(['applied', 'applied']);
      expect(await store.getSuppression(projectId, a.hash, undefined, h(12))).toBeUndefined();
      expect(await store.applyEvents(projectId, [bounces[2], bounces[2]], options)).toStrictEqual(['suppressed', 'duplicate']);
      const made = ruleSuppression(rule, bounces);
      expect(made.expiresAt).toBe(h(10) + 30 * DAY_MS);
      expect(await store.getSuppression(projectId, a.hash, undefined, h(12))).toStrictEqual(made);
      expect(await store.listSuppressions(projectId, { limit: 10, now: h(12) })).toStrictEqual([made]);
      expect(await store.listSuppressions(projectId, { limit: 10, stream: 'marketing', now: h(12) })).toStrictEqual([]);
    });

    test('a message counts once, at its earliest bounce; bounces further apart than the window do not suppress', async ({
      store,
      projectId,
    }) => {
      const [a] = addresses(1);
      const options = { now: h(48), softBounces: softBounceRule(2, 1) };
      const outcomes = await store.applyEvents(
        projectId,
        [softBounce(a, h(0), 'm1'), softBounce(a, h(5), 'm1'), softBounce(a, h(30), 'm2')],
        options,
      );
      expect(outcomes).toStrictEqual(['applied', 'applied', 'applied']);
      expect(await store.getSuppression(projectId, a.hash, undefined, h(48))).toBeUndefined();
      const window = [softBounce(a, h(30), 'm2'), softBounce(a, h(40), 'm3')];
      expect(await store.applyEvents(projectId, window.slice(1), options)).toStrictEqual(['suppressed']);
      expect((await store.getSuppression(projectId, a.hash, undefined, h(48)))?.createdAt).toBe(h(40));
    });

    // Found by mutation: random hours rarely fall exactly a window apart.
    test('bounces exactly the window apart count; a millisecond more do not', async ({ store, projectId }) => {
      const [a, b] = addresses(2);
      const options = { now: h(30), softBounces: softBounceRule(2, 1) };
      const exact = [softBounce(a, h(0), 'm1'), softBounce(a, h(24), 'm2')];
      const over = [softBounce(b, h(0), 'm1'), softBounce(b, h(24) + 1, 'm2')];
      expect(await store.applyEvents(projectId, [...exact, ...over], options)).toStrictEqual([
        'applied',
        'suppressed',
        'applied',
        'applied',
      ]);
    });

    // Found by the order law on PostgreSQL (N 2, half a day, two bounces at hour 72): a bounce arriving
    // after one of the same time but sorting before it (by event ID) must still complete the window.
    test('bounces of the same time order by event ID, whichever arrives first', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const rule = softBounceRule(2, 0.5);
      const options = { now: h(120), softBounces: rule };
      const [first, second] = [softBounce(a, h(72), 'm2', 'rule:event-2'), softBounce(a, h(72), 'm4', 'rule:event-4')];
      expect(timelineEntryId('rule:event-2') < timelineEntryId('rule:event-4')).toBe(true);
      expect(await store.applyEvents(projectId, [second, first], options)).toStrictEqual(['applied', 'suppressed']);
      expect(await store.getSuppression(projectId, a.hash, undefined, h(120))).toStrictEqual(ruleSuppression(rule, [first, second]));
      const other = randomProjectId();
      expect(await store.applyEvents(other, [first, second], options)).toStrictEqual(['applied', 'suppressed']);
      expect(await store.getSuppression(other, a.hash, undefined, h(120))).toStrictEqual(ruleSuppression(rule, [first, second]));
    });

    test('a late bounce that completes an earlier window moves the suppression to that window', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const rule = softBounceRule(2, 1);
      const options = { now: h(24), softBounces: rule };
      const [b10, b20, b5] = [softBounce(a, h(10), 'm1'), softBounce(a, h(20), 'm2'), softBounce(a, h(5), 'm3')];
      expect(await store.applyEvents(projectId, [b10, b20], options)).toStrictEqual(['applied', 'suppressed']);
      expect(await store.getSuppression(projectId, a.hash, undefined, h(24))).toStrictEqual(ruleSuppression(rule, [b10, b20]));
      expect(await store.applyEvents(projectId, [b5], options)).toStrictEqual(['applied']);
      expect(await store.getSuppression(projectId, a.hash, undefined, h(24))).toStrictEqual(ruleSuppression(rule, [b5, b10]));
    });

    // Found by the order law: a message counts at its earliest bounce, so its earlier bounce arriving after
    // its later one completed a window leaves no such window in the set, yet the suppression stays (as a
    // late delivery's does): the law holds for bounces of distinct messages only (see docs/testing.md).
    test('a message’s earlier bounce arriving after its later one completed a window does not undo the suppression', async ({
      store,
      projectId,
    }) => {
      const [a] = addresses(1);
      const rule = softBounceRule(2, 1);
      const options = { now: h(48), softBounces: rule };
      const [early, other, late] = [softBounce(a, h(0), 'm1'), softBounce(a, h(30), 'm2'), softBounce(a, h(40), 'm1')];
      expect(await store.applyEvents(projectId, [other, late, early], options)).toStrictEqual(['applied', 'suppressed', 'applied']);
      expect(await store.getSuppression(projectId, a.hash, undefined, h(48))).toStrictEqual(ruleSuppression(rule, [other, late]));
      const inOrder = randomProjectId();
      expect(await store.applyEvents(inOrder, [early, other, late], options)).toStrictEqual(['applied', 'applied', 'applied']);
      expect(await store.getSuppression(inOrder, a.hash, undefined, h(48))).toBeUndefined();
    });

    test('with the reset, a delivery restarts the count; a late delivery does not undo a suppression', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const rule = softBounceRule(2, 1, { resetOnDelivery: true });
      const options = { now: h(20), softBounces: rule };
      const outcomes = await store.applyEvents(
        projectId,
        [softBounce(a, h(0), 'm1'), delivery(a, h(5)), softBounce(a, h(10), 'm2')],
        options,
      );
      expect(outcomes).toStrictEqual(['applied', 'applied', 'applied']);
      const window = [softBounce(a, h(10), 'm2'), softBounce(a, h(12), 'm3')];
      expect(await store.applyEvents(projectId, window.slice(1), options)).toStrictEqual(['suppressed']);
      // Late: a delivery inside the window used, then a bounce before that delivery (not counted).
      expect(await store.applyEvents(projectId, [delivery(a, h(11)), softBounce(a, h(1), 'm4')], options)).toStrictEqual([
        'applied',
        'applied',
      ]);
      const record = await store.getSuppression(projectId, a.hash, undefined, h(20));
      expect(record?.createdAt).toBe(h(12));
      expect(record?.provenance?.rule?.resetOnDelivery).toBe(true);
    });

    test('a bounce older than the keep time is not counted; without now nothing is forgotten', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const rule = softBounceRule(2, 1); // kept 1 day + 3 days of lateness: 96 hours
      const bounces = [softBounce(a, h(100), 'm1'), softBounce(a, h(110), 'm2')];
      expect(await store.applyEvents(projectId, bounces, { now: h(200), softBounces: rule })).toStrictEqual(['applied', 'applied']);
      expect(await store.getSuppression(projectId, a.hash, undefined, h(200))).toBeUndefined();
      const timeless = randomProjectId();
      expect(await store.applyEvents(timeless, bounces, { softBounces: rule })).toStrictEqual(['applied', 'suppressed']);
      expect(await store.getSuppression(timeless, a.hash)).toStrictEqual(ruleSuppression(rule, bounces));
    });

    // Found by the order law on PostgreSQL (N 2, half a day, clock at hour 120, one batch: a bounce at hour
    // 0, too old, then two at hour 72): the bounce not counted must leave the rest of the batch counting.
    test('a bounce too old to count, earlier in the same batch, leaves the next ones counting', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const rule = softBounceRule(2, 0.5);
      const bounces = [softBounce(a, h(0), 'm0'), softBounce(a, h(72), 'm2'), softBounce(a, h(72), 'm4')];
      expect(await store.applyEvents(projectId, bounces, { now: h(120), softBounces: rule })).toStrictEqual([
        'applied',
        'applied',
        'suppressed',
      ]);
      expect(
        (await store.getSuppression(projectId, a.hash, undefined, h(120)))?.provenance?.rule?.events.map((event) => event.at),
      ).toStrictEqual([h(72), h(72)]);
    });

    test('without the rule, what it would count is ignored, and not kept for later', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const bounces = [softBounce(a, h(0), 'm1'), softBounce(a, h(1), 'm2')];
      expect(await store.applyEvents(projectId, bounces, { now: h(2) })).toStrictEqual(['applied', 'applied']);
      expect(await store.getSuppression(projectId, a.hash)).toBeUndefined();
      const options = { now: h(3), softBounces: softBounceRule(2, 1) };
      expect(await store.applyEvents(projectId, [softBounce(a, h(2), 'm3')], options)).toStrictEqual(['applied']);
      expect(await store.getSuppression(projectId, a.hash)).toBeUndefined();
    });

    test('a bounce after an active bounce or complaint suppression is not counted; after it expires, counting restarts', async ({
      store,
      projectId,
    }) => {
      const [a] = addresses(1);
      const rule = softBounceRule(2, 1, { expireAfterDays: null });
      const complaint = suppressingEvent(a, 'complaint', h(5), { expiresAt: h(10) });
      const at8 = { now: h(8), softBounces: rule };
      expect(await store.applyEvents(projectId, [complaint], at8)).toStrictEqual(['suppressed']);
      expect(await store.applyEvents(projectId, [softBounce(a, h(6), 'm1'), softBounce(a, h(7), 'm2')], at8)).toStrictEqual([
        'applied',
        'applied',
      ]);
      expect(await store.getSuppression(projectId, a.hash, undefined, h(8))).toStrictEqual(complaint.suppression);
      const at12 = { now: h(12), softBounces: rule };
      // Had the bounces of hours 6 and 7 been kept, this one would complete a window with them.
      expect(await store.applyEvents(projectId, [softBounce(a, h(11), 'm3')], at12)).toStrictEqual(['applied']);
      const window = [softBounce(a, h(11), 'm3'), softBounce(a, h(11), 'm4')];
      expect(await store.applyEvents(projectId, window.slice(1), at12)).toStrictEqual(['suppressed']);
      expect((await store.getSuppression(projectId, a.hash, undefined, h(12)))?.provenance?.rule?.events).toHaveLength(2);
    });

    test('the rule raises a weaker suppression and says so; the event’s own suppression answers for it', async ({ store, projectId }) => {
      const [a, b] = addresses(2);
      const rule = softBounceRule(1, 1);
      const options = { now: h(4), softBounces: rule };
      const added: SuppressionRecord = { ...suppression(a, 'manual', h(0)), provenance: { source: 'api', at: h(0) } };
      await store.addSuppression(projectId, added, h(0));
      const bounce = softBounce(a, h(3), 'm1');
      expect(await store.applyEvents(projectId, [bounce], options)).toStrictEqual(['upgraded_from_manual']);
      expect(await store.getSuppression(projectId, a.hash, undefined, h(4))).toStrictEqual({
        ...ruleSuppression(rule, [bounce]),
        createdAt: h(0),
      });
      // An event carrying its own suppression reports that one's outcome, whatever the rule made.
      const own = { ...suppressingEvent(b, 'manual', h(2), { source: 'unsubscribe' }), ruleInput: softBounce(b, h(2), 'm1').ruleInput! };
      expect(await store.applyEvents(projectId, [own], options)).toStrictEqual(['suppressed']);
      expect((await store.getSuppression(projectId, b.hash, undefined, h(4)))?.reason).toBe('hard_bounce');
    });

    // Found by the order law (N 2, 12 hours, expiring after a day, bounces at hours 73, 85, 97, clock at 120):
    // the first window holding hour 85 expires at 109, before the clock; the next one, at 121, does not.
    test('a window whose suppression would already be expired does not count; the next window holding the bounce does', async ({
      store,
      projectId,
    }) => {
      const [a] = addresses(1);
      const rule = softBounceRule(2, 0.5, { expireAfterDays: 1 });
      const options = { now: h(120), softBounces: rule };
      const [b73, b85, b97] = [softBounce(a, h(73), 'm1'), softBounce(a, h(85), 'm2'), softBounce(a, h(97), 'm3')];
      expect(await store.applyEvents(projectId, [b73, b97, b85], options)).toStrictEqual(['applied', 'applied', 'suppressed']);
      expect(await store.getSuppression(projectId, a.hash, undefined, h(120))).toStrictEqual(ruleSuppression(rule, [b85, b97]));
      const other = randomProjectId();
      expect(await store.applyEvents(other, [b85, b97, b73], options)).toStrictEqual(['applied', 'suppressed', 'applied']);
      expect(await store.getSuppression(other, a.hash, undefined, h(120))).toStrictEqual(ruleSuppression(rule, [b85, b97]));
    });

    // Found by the order law (N 2, a day, expiring after a day, bounces at hours 73, 73 and 97, clock at
    // 120): a bounce arriving between the two of the window that made the suppression makes a window with
    // the first that is already expired, and one ending at the same last bounce. A join would keep whichever
    // came first (same time, same event): the window of the bounces kept now replaces it.
    test('a late bounce inside the window that made the suppression remakes the window ending at its last bounce', async ({
      store,
      projectId,
    }) => {
      const [a] = addresses(1);
      const rule = softBounceRule(2, 1, { expireAfterDays: 1 });
      const options = { now: h(120), softBounces: rule };
      const [first, last, late] = [softBounce(a, h(73), 'm1'), softBounce(a, h(97), 'm2'), softBounce(a, h(80), 'm3')];
      expect(await store.applyEvents(projectId, [first, last], options)).toStrictEqual(['applied', 'suppressed']);
      expect(await store.applyEvents(projectId, [late], options)).toStrictEqual(['applied']);
      expect(await store.getSuppression(projectId, a.hash, undefined, h(120))).toStrictEqual(ruleSuppression(rule, [late, last]));
      const other = randomProjectId();
      expect(await store.applyEvents(other, [late, last, first], options)).toStrictEqual(['applied', 'suppressed', 'applied']);
      expect(await store.getSuppression(other, a.hash, undefined, h(120))).toStrictEqual(ruleSuppression(rule, [late, last]));
    });

    test('a window whose suppression is already expired at now writes nothing; its bounces still count', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const rule = softBounceRule(2, 1, { expireAfterDays: 1 });
      const options = { now: h(40), softBounces: rule };
      const bounces = [softBounce(a, h(0), 'm1'), softBounce(a, h(10), 'm2'), softBounce(a, h(20), 'm3')];
      expect(await store.applyEvents(projectId, bounces.slice(0, 2), options)).toStrictEqual(['applied', 'applied']);
      expect(await store.listSuppressions(projectId, { limit: 10 })).toStrictEqual([]);
      expect(await store.applyEvents(projectId, bounces.slice(2), options)).toStrictEqual(['suppressed']);
      expect(await store.getSuppression(projectId, a.hash, undefined, h(40))).toStrictEqual(ruleSuppression(rule, bounces.slice(1)));
    });

    test('removal from the project-wide list forgets the history: a later bounce counts from zero', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const rule = softBounceRule(2, 1);
      const options = { now: h(10), softBounces: rule };
      expect(await store.applyEvents(projectId, [softBounce(a, h(0), 'm1'), softBounce(a, h(1), 'm2')], options)).toStrictEqual([
        'applied',
        'suppressed',
      ]);
      expect(await store.removeSuppressions(projectId, [a.hash])).toHaveLength(1);
      expect(await store.applyEvents(projectId, [softBounce(a, h(2), 'm3')], options)).toStrictEqual(['applied']);
      expect(await store.applyEvents(projectId, [softBounce(a, h(3), 'm4')], options)).toStrictEqual(['suppressed']);
      expect((await store.removeSuppression(projectId, a.hash))?.createdAt).toBe(h(3));
      expect(await store.applyEvents(projectId, [softBounce(a, h(4), 'm5')], options)).toStrictEqual(['applied']);
      // Removal from a stream's list forgets nothing: the project-wide history is not that list's.
      await store.removeSuppression(projectId, a.hash, 'marketing');
      expect(await store.applyEvents(projectId, [softBounce(a, h(5), 'm6')], options)).toStrictEqual(['suppressed']);
    });

    // The model decides with the design's steps written plainly: every call, in any order and batching,
    // with adds, removals, deliveries and allowlist changes between events, answers as it does.
    test('any steps under any rule answer as the model does, call by call', async ({ store }) => {
      await fc.assert(
        fc.asyncProperty(
          ruleConfig,
          fc.array(ruleStep, { minLength: 4, maxLength: 16 }),
          fc.array(fc.nat(), { maxLength: 4 }),
          async (config, steps, cuts) => {
            const rule = storedRule(config);
            const now = h(RULE_HOURS);
            // Deliveries count only with the reset: the service sends them then alone.
            const sent = steps.filter((step) => step.kind !== 'delivery' || config.resetOnDelivery);
            const model = createStoreModel();
            const projectId = randomProjectId();
            for (const call of ruleCalls(sent, cuts, rule, now)) {
              const expected = await call.run(model, projectId);
              expect(await call.run(store, projectId), call.describe).toStrictEqual(expected);
            }
            expect(await ruleLists(store, projectId, now)).toStrictEqual(await ruleLists(model, projectId, now));
          },
        ),
        { numRuns: ruleRuns(options) },
      );
    });

    // The law (docs/decisions.md, "The soft-bounce rule"): the same set of events (bounces of distinct
    // messages, no reset) gives the same suppressions whatever the order, the batching and the number of
    // instances applying them at once.
    test('the same events in any order, batching and three concurrent instances give the model’s suppressions', async ({ store }) => {
      const scenario = fc
        .record({
          config: ruleConfig.map((config) => ({ ...config, resetOnDelivery: false })),
          // Each bounce its own message (see the pinned example of a message's late earlier bounce), and one
          // expiry per add time: two adds equal in address, time and source tie in the join (provenanceWins),
          // which then keeps the expiry of whichever came first.
          steps: fc.array(commutingRuleStep(1), { minLength: 4, maxLength: 16 }).map((steps) =>
            steps.map((step, index): RuleStep => {
              if (step.kind === 'soft_bounce') return { ...step, message: index };
              if (step.kind === 'merge') return { ...step, expiresAfterHours: [null, 2, 48, 200][step.hour % 4] ?? null };
              return step;
            }),
          ),
          allowlist: fc.subarray(ruleAllowlist, { maxLength: 2 }),
          cuts: fc.array(fc.nat(), { maxLength: 4 }),
        })
        .chain((base) =>
          fc
            .record({
              order: fc.shuffledSubarray([...base.steps.keys()], { minLength: base.steps.length, maxLength: base.steps.length }),
              instance: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: base.steps.length, maxLength: base.steps.length }),
            })
            .map((arrival) => ({ ...base, ...arrival })),
        );
      await fc.assert(
        fc.asyncProperty(scenario, async ({ config, allowlist, steps, order, instance, cuts }) => {
          const rule = storedRule(config);
          const now = h(RULE_HOURS);
          const model = createStoreModel();
          const [expected, inOrder, shuffled] = [randomProjectId(), randomProjectId(), randomProjectId()];
          for (const projectId of [expected, inOrder, shuffled]) {
            for (const entry of allowlist) await (projectId === expected ? model : store).addAllowlistEntry(projectId, entry);
          }
          for (const call of ruleCalls(steps, [], rule, now)) await call.run(model, expected);
          for (const call of ruleCalls(steps, cuts, rule, now)) await call.run(store, inOrder);
          // Three instances, each applying its share of the shuffled events in its own batches, at once.
          const shares = [0, 1, 2].map((share) => order.filter((index) => instance[index] === share));
          await Promise.all(
            shares.map(async (share) => {
              const calls = ruleCalls(
                share.map((index) => steps[index]!),
                cuts,
                rule,
                now,
                share,
              );
              for (const call of calls) await call.run(store, shuffled);
            }),
          );
          const lists = await ruleLists(model, expected, now);
          expect(await ruleLists(store, inOrder, now)).toStrictEqual(lists);
          expect(await ruleLists(store, shuffled, now)).toStrictEqual(lists);
        }),
        { numRuns: ruleRuns(options) },
      );
    });
  });
}
