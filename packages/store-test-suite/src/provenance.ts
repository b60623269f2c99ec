import type { SuppressionReason } from '@mailwarden/core';
import {
  timelineEntryId,
  type EventOutcome,
  type StoredEvent,
  type SuppressionProvenance,
  type SuppressionRecord,
} from '@mailwarden/core/store';
import fc from 'fast-check';
import { addressPool, diagnosticPool, storedEvent as anyStoredEvent } from './arbitraries.js';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';
import { createStoreModel } from './model.js';
import { everyList, listKey } from './lists.js';
import { addresses, at, storedEvent, suppression, type Address } from './records.js';

/** A webhook suppression of `address`, caused by the event of `key`, as the service prepares it. */
function caused(address: Address, reason: SuppressionReason, seconds: number, key: string, diagnostic: string | null = null): StoredEvent {
  const provenance: SuppressionProvenance = {
    source: 'webhook',
    at: at(seconds),
    event: { provider: 'postmark', messageId: `m-${key}`, eventId: timelineEntryId(key), diagnostic },
  };
  return storedEvent({ key, suppression: { ...suppression(address, reason, at(seconds)), provenance } });
}

export function describeProvenanceTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options);

  describe('suppression provenance', () => {
    test('an added suppression keeps its provenance; one without reads without (unknown)', async ({ store, projectId }) => {
      const [a, b, c] = addresses(3);
      const api: SuppressionRecord = { ...suppression(a, 'manual', at(1)), provenance: { source: 'api', at: at(1) } };
      const imported: SuppressionRecord = { ...suppression(b, 'manual', at(2)), provenance: { source: 'import', at: at(2) } };
      const unknown = suppression(c, 'manual', at(3));
      for (const record of [api, imported, unknown])
        expect(await store.addSuppression(projectId, record)).toStrictEqual({ record, created: true });
      expect(await store.getSuppressions(projectId, [a.hash, b.hash, c.hash])).toStrictEqual([api, imported, unknown]);
      expect(await store.listSuppressions(projectId, { limit: 10 })).toStrictEqual([unknown, imported, api]);
      // Insert-if-absent: the existing record, provenance and all, whatever the new one says.
      expect(
        await store.addSuppression(projectId, { ...api, createdAt: at(0), provenance: { source: 'import', at: at(0) } }),
      ).toStrictEqual({
        record: api,
        created: false,
      });
    });

    test('an event keeps its cause whole, any text of its diagnostic included', async ({ store, projectId }) => {
      const [a] = addresses(1);
      for (const [index, diagnostic] of diagnosticPool.entries()) {
        const event = caused(a, 'hard_bounce', 10 - index, `provenance:text-${index}`, diagnostic);
        await store.applyEvents(projectId, [event]);
        // Each event is earlier than the last, so each becomes the cause.
        expect(await store.getSuppression(projectId, a.hash)).toStrictEqual({ ...event.suppression, createdAt: at(10 - index) });
      }
    });

    test('the cause is the strongest reason’s earliest event, then the smaller event ID; createdAt stays the earliest of all', async ({
      store,
      projectId,
    }) => {
      const [a] = addresses(1);
      const bounce = caused(a, 'hard_bounce', 5, 'provenance:bounce');
      const laterBounce = caused(a, 'hard_bounce', 6, 'provenance:later-bounce');
      const manual = caused(a, 'manual', 1, 'provenance:manual');
      const complaint = caused(a, 'complaint', 9, 'provenance:complaint');
      await store.applyEvents(projectId, [laterBounce, bounce, manual]);
      expect(await store.getSuppression(projectId, a.hash)).toStrictEqual({ ...bounce.suppression, createdAt: at(1) });
      await store.applyEvents(projectId, [complaint]);
      expect(await store.getSuppression(projectId, a.hash)).toStrictEqual({ ...complaint.suppression, createdAt: at(1) });

      // Same reason, same time: the smaller event ID, in byte order.
      const [b] = addresses(1);
      const [first, second] = [caused(b, 'complaint', 4, 'provenance:tie-x'), caused(b, 'complaint', 4, 'provenance:tie-y')].sort((x, y) =>
        x.suppression!.provenance!.event!.eventId < y.suppression!.provenance!.event!.eventId ? -1 : 1,
      );
      await store.applyEvents(projectId, [second!]);
      await store.applyEvents(projectId, [first!]);
      expect(await store.getSuppression(projectId, b.hash)).toStrictEqual(first!.suppression);
    });

    // Found by the bulk law: two causes equal in reason, time and (no) event ID once kept whichever came first.
    test('same reason and time, no event: the smaller source wins (api before import), in either order', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const api: SuppressionRecord = { ...suppression(a, 'hard_bounce', at(2)), provenance: { source: 'api', at: at(2) } };
      const imported: SuppressionRecord = { ...suppression(a, 'hard_bounce', at(2)), provenance: { source: 'import', at: at(2) } };
      const other = randomProjectId();
      await store.mergeSuppressions(projectId, [imported, api]);
      await store.mergeSuppressions(other, [api, imported]);
      expect(await store.getSuppression(projectId, a.hash)).toStrictEqual(api);
      expect(await store.getSuppression(other, a.hash)).toStrictEqual(api);
    });

    test('an API suppression is upgraded by an event, which becomes its cause', async ({ store, projectId }) => {
      const [a] = addresses(1);
      await store.addSuppression(projectId, { ...suppression(a, 'manual', at(1)), provenance: { source: 'api', at: at(1) } });
      const bounce = caused(a, 'hard_bounce', 5, 'provenance:after-api');
      await store.applyEvents(projectId, [bounce]);
      expect(await store.getSuppression(projectId, a.hash)).toStrictEqual({ ...bounce.suppression, createdAt: at(1) });
    });

    // The law: provenance is a join, so the same distinct events in any order and any batching leave every
    // suppression (reason, createdAt, provenance) as the model's.
    test('any order and batching of the same events gives the same suppressions, the model’s', async ({ store }) => {
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(anyStoredEvent, { selector: (event) => event.key, maxLength: 12 }),
          fc.infiniteStream(fc.integer({ min: 1, max: 4 })),
          fc.infiniteStream(fc.nat()),
          async (events, batchSizes, picks) => {
            const pending = [...events];
            const shuffled: StoredEvent[] = [];
            while (pending.length > 0) shuffled.push(pending.splice(picks.next().value % pending.length, 1)[0]!);
            const model = createStoreModel();
            const projectId = randomProjectId();
            const inOrder = randomProjectId();
            await model.applyEvents(projectId, events);
            await store.applyEvents(inOrder, events);
            for (let from = 0; from < shuffled.length; ) {
              const size = batchSizes.next().value;
              await store.applyEvents(projectId, shuffled.slice(from, from + size));
              from += size;
            }
            const hashes = addressPool.map((entry) => entry.hash);
            const expected = await model.getSuppressions(projectId, hashes);
            expect(await store.getSuppressions(projectId, hashes)).toStrictEqual(expected);
            expect(await store.getSuppressions(inOrder, hashes)).toStrictEqual(expected);
            // Per list: an unsubscribe's provenance joins in its stream's list as a bounce's does in the project's.
            const lists = await everyList(model, projectId);
            expect(await everyList(store, projectId)).toStrictEqual(lists);
            expect(await everyList(store, inOrder)).toStrictEqual(lists);
          },
        ),
        { numRuns: options.numRuns ?? 50 },
      );
    });
  });

  // What each event did to its recipient's suppression: what apps are told (the hooks), exactly once.
  describe('suppression changes', () => {
    test('the first event of an address suppresses it, a stronger one upgrades it, the rest change no reason', async ({
      store,
      projectId,
    }) => {
      const [a, b] = addresses(2);
      const bounce = caused(a, 'hard_bounce', 5, 'changes:bounce');
      const complaint = caused(a, 'complaint', 6, 'changes:complaint');
      const earlierBounce = caused(a, 'hard_bounce', 1, 'changes:earlier-bounce');
      // One batch behaves as its events one by one, in order.
      expect(await store.applyEvents(projectId, [bounce, complaint, earlierBounce, bounce])).toStrictEqual([
        'suppressed',
        'upgraded_from_hard_bounce',
        'applied', // the time moved, the reason did not
        'duplicate',
      ]);
      expect(await store.applyEvents(projectId, [caused(a, 'complaint', 0, 'changes:earliest-complaint')])).toStrictEqual(['applied']);

      await store.addSuppression(projectId, { ...suppression(b, 'manual', at(1)), provenance: { source: 'api', at: at(1) } });
      expect(await store.applyEvents(projectId, [caused(b, 'manual', 2, 'changes:manual')])).toStrictEqual(['applied']);
      expect(await store.applyEvents(projectId, [caused(b, 'complaint', 3, 'changes:b-complaint')])).toStrictEqual([
        'upgraded_from_manual',
      ]);

      // Removed means absent: the next event suppresses the address again.
      await store.removeSuppression(projectId, a.hash);
      expect(await store.applyEvents(projectId, [caused(a, 'manual', 9, 'changes:after-removal')])).toStrictEqual(['suppressed']);
    });

    // The law: batching does not change what events did. Replaying the outcomes in order rebuilds every
    // address's reason in every list: one 'suppressed' each per list, then each upgrade from the reason it had there.
    test('any batching of events reports the changes of applying them one by one, and the outcomes rebuild the reasons', async ({
      store,
    }) => {
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(anyStoredEvent, { selector: (event) => event.key, maxLength: 12 }),
          fc.infiniteStream(fc.integer({ min: 1, max: 4 })),
          async (events, batchSizes) => {
            const model = createStoreModel();
            const projectId = randomProjectId();
            const expected = await Promise.all(events.map(async (event) => (await model.applyEvents(projectId, [event]))[0]!));
            const outcomes: EventOutcome[] = [];
            for (let from = 0; from < events.length; ) {
              const size = batchSizes.next().value;
              outcomes.push(...(await store.applyEvents(projectId, [...events.slice(from, from + size), ...events.slice(from, from + 1)])));
              expect(outcomes.pop(), 'the batch’s first event, replayed in it').toBe('duplicate');
              from += size;
            }
            expect(outcomes).toStrictEqual(expected);

            const rebuilt = new Map<string, SuppressionReason>();
            events.forEach((event, index) => {
              const outcome = outcomes[index]!;
              if (outcome === 'duplicate' || outcome === 'applied') return;
              const key = listKey(event.suppression!);
              expect(outcome === 'suppressed' ? undefined : outcome.slice('upgraded_from_'.length)).toBe(rebuilt.get(key));
              rebuilt.set(key, event.suppression!.reason);
            });
            const stored = new Map((await everyList(store, projectId)).flat().map((record) => [listKey(record), record.reason]));
            expect(stored).toStrictEqual(rebuilt);
          },
        ),
        { numRuns: options.numRuns ?? 50 },
      );
    });
  });
}
