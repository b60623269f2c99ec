import { emptyBucket, Fact, HOUR_MS, type StoredEvent } from '@mailwarden/core/store';
import fc from 'fast-check';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';
import { createStoreModel } from './model.js';
import { message, messageIdentities, storedEvent, T0 } from './records.js';
import { batches } from './arbitraries.js';

const DAY_MS = 24 * HOUR_MS;
/** An hour of the first days after T0 (a UTC midnight), and a minute in it. */
const hourAt = (hour: number, minute = 0): number => T0 + hour * HOUR_MS + minute * 60_000;

export function describeStatsTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options);
  const numRuns = options.numRuns ?? 50;

  describe('counts over time', () => {
    test('getStats: a message counts once per fact, in the hour of the earliest event establishing it; days sum hours', async ({
      store,
      projectId,
    }) => {
      const [a, b] = messageIdentities(2);
      await store.applyEvents(projectId, [
        storedEvent({ message: message(a, Fact.sent, hourAt(1, 5), 'promo') }),
        storedEvent({ message: message(a, Fact.delivered, hourAt(2, 10), 'promo') }),
        // An open establishes delivered too: not again, it is counted already (unique per message).
        storedEvent({ message: message(a, Fact.opened | Fact.delivered, hourAt(3, 0), 'promo') }),
        storedEvent({ message: message(a, Fact.opened | Fact.delivered, hourAt(4, 0), 'promo') }),
        storedEvent({ message: message(b, Fact.hard_bounced, hourAt(2, 59)) }),
        storedEvent({ message: message(b, Fact.complained, hourAt(30, 0)) }),
      ]);
      const all = { interval: 'hour', from: T0, to: T0 + 2 * DAY_MS } as const;
      expect(await store.getStats(projectId, all)).toStrictEqual([
        { ...emptyBucket(hourAt(2)), delivered: 1, hardBounced: 1 },
        { ...emptyBucket(hourAt(3)), opened: 1 },
        { ...emptyBucket(hourAt(30)), complained: 1 },
      ]);
      expect(await store.getStats(projectId, { ...all, trackingId: 'promo' })).toStrictEqual([
        { ...emptyBucket(hourAt(2)), delivered: 1 },
        { ...emptyBucket(hourAt(3)), opened: 1 },
      ]);
      expect(await store.getStats(projectId, { ...all, interval: 'day' })).toStrictEqual([
        { ...emptyBucket(T0), delivered: 1, hardBounced: 1, opened: 1 },
        { ...emptyBucket(T0 + DAY_MS), complained: 1 },
      ]);
      // From inclusive, to exclusive.
      expect(await store.getStats(projectId, { interval: 'hour', from: hourAt(3), to: hourAt(30) })).toStrictEqual([
        { ...emptyBucket(hourAt(3)), opened: 1 },
      ]);
      expect(await store.getStats(projectId, { ...all, trackingId: 'PROMO' })).toStrictEqual([]);
      expect(await store.getStats(`${projectId}-other`, all)).toStrictEqual([]);
    });

    test('a late, earlier event moves the message to its hour; a tracking ID arriving later takes its counts along', async ({
      store,
      projectId,
    }) => {
      const [a] = messageIdentities(1);
      const all = { interval: 'hour', from: T0, to: T0 + DAY_MS } as const;
      await store.applyEvents(projectId, [storedEvent({ message: message(a, Fact.delivered, hourAt(5)) })]);
      expect(await store.getStats(projectId, all)).toStrictEqual([{ ...emptyBucket(hourAt(5)), delivered: 1 }]);
      await store.applyEvents(projectId, [storedEvent({ message: message(a, Fact.clicked | Fact.delivered, hourAt(2), 'news') })]);
      expect(await store.getStats(projectId, all)).toStrictEqual([{ ...emptyBucket(hourAt(2)), delivered: 1, clicked: 1 }]);
      expect(await store.getStats(projectId, { ...all, trackingId: 'news' })).toStrictEqual([
        { ...emptyBucket(hourAt(2)), delivered: 1, clicked: 1 },
      ]);
      // A smaller ID wins (joinTrackingIds): the counts leave 'news' for 'alpha'.
      await store.applyEvents(projectId, [storedEvent({ message: message(a, Fact.soft_bounced, hourAt(7), 'alpha') })]);
      expect(await store.getStats(projectId, { ...all, trackingId: 'news' })).toStrictEqual([]);
      expect(await store.getStats(projectId, { ...all, trackingId: 'alpha' })).toStrictEqual([
        { ...emptyBucket(hourAt(2)), delivered: 1, clicked: 1 },
        { ...emptyBucket(hourAt(7)), softBounced: 1 },
      ]);
    });

    test('law: any order of the same events, with duplicates, in any batches, gives the model buckets', async ({ store }) => {
      const identities = messageIdentities(3);
      const counted = [
        Fact.sent,
        Fact.delivered,
        Fact.hard_bounced,
        Fact.soft_bounced,
        Fact.complained,
        Fact.opened | Fact.delivered,
        Fact.clicked | Fact.delivered,
        Fact.unsubscribed | Fact.delivered,
      ];
      const spec = fc.record({
        message: fc.integer({ min: 0, max: identities.length - 1 }),
        // Seconds around a UTC midnight: the same hour often, an hour and a day boundary between them,
        // and the whole run within a minute, so a store with a retention of a minute forgets nothing.
        second: fc.integer({ min: -30, max: 29 }),
        facts: fc.constantFrom(...counted),
        trackingId: fc.constantFrom(null, null, 'a', 'b'),
      });
      await fc.assert(
        fc.asyncProperty(
          fc.array(spec, { minLength: 1, maxLength: 12 }),
          fc.array(fc.nat(), { maxLength: 8 }),
          fc.array(fc.nat(), { maxLength: 5 }),
          fc.infiniteStream(fc.nat()),
          async (specs, duplicates, cuts, order) => {
            const projectId = randomProjectId();
            const events: StoredEvent[] = specs.map((s, i) =>
              storedEvent({
                key: `law-${i}`,
                message: message(identities[s.message]!, s.facts, T0 + DAY_MS + s.second * 1000, s.trackingId),
              }),
            );
            const replays = duplicates.map((d) => events[d % events.length]!);
            const shuffled = [...events, ...replays]
              .map((event) => ({ event, rank: order.next().value as number }))
              .sort((x, y) => x.rank - y.rank)
              .map(({ event }) => event);
            for (const batch of batches(shuffled, cuts)) await store.applyEvents(projectId, batch);
            const model = createStoreModel();
            await model.applyEvents(projectId, events);
            for (const interval of ['hour', 'day'] as const) {
              for (const trackingId of [undefined, 'a', 'b']) {
                const query = { interval, from: T0, to: T0 + 2 * DAY_MS, ...(trackingId === undefined ? {} : { trackingId }) };
                expect(await store.getStats(projectId, query)).toStrictEqual(await model.getStats(projectId, query));
              }
            }
          },
        ),
        { numRuns },
      );
    });
  });
}
