import type { Store } from '@mailwarden/core';
import type { SuppressionMergeOutcome, SuppressionPosition, SuppressionRecord } from '@mailwarden/core/store';
import fc from 'fast-check';
import { addressPool, storedEvent, suppression as addedSuppression } from './arbitraries.js';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';
import { createStoreModel } from './model.js';
import { walkPages } from './pages.js';
import { everyList } from './lists.js';
import { addresses, at, suppression } from './records.js';

/** A record a bulk import may bring: added by hand or imported, or one an event caused (with its cause). */
const mergeRecord: fc.Arbitrary<SuppressionRecord> = fc.oneof(
  addedSuppression,
  storedEvent.filter((event) => event.suppression !== null).map((event) => event.suppression!),
);

/**
 * Records as an import may send them: an event ID names one event, so two records of one event ID are
 * the same record (a retry), never two causes (found by the law below: a "cause" of SES and one of
 * SendGrid sharing an event ID made the winner depend on order, which no real pair of events can).
 */
const mergeRecords: fc.Arbitrary<SuppressionRecord[]> = fc
  .uniqueArray(mergeRecord, { maxLength: 12, selector: (record) => record.provenance?.event?.eventId ?? Symbol('no event') })
  .chain((records) =>
    fc.array(fc.nat(Math.max(0, records.length - 1)), { maxLength: records.length === 0 ? 0 : 4 }).chain((repeats) =>
      fc.shuffledSubarray([...records, ...repeats.map((index) => structuredClone(records[index]!))], {
        minLength: records.length + repeats.length,
      }),
    ),
  );

export function describeBulkTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options);
  /** Every suppression of the project, newest first, through pages of 100. */
  const everything = async (store: Store, projectId: string) =>
    (
      await walkPages<SuppressionRecord, SuppressionPosition>(
        100,
        (after) => store.listSuppressions(projectId, after === undefined ? { limit: 100 } : { limit: 100, after }),
        (record) => ({ createdAt: record.createdAt, hash: record.hash }),
      )
    ).flat();

  describe('bulk suppressions', () => {
    test('mergeSuppressions joins each record as one at a time would, and says what each did', async ({ store, projectId }) => {
      const [a, b] = addresses(2);
      await store.addSuppression(projectId, suppression(b, 'manual', at(5)));
      expect(
        await store.mergeSuppressions(projectId, [
          suppression(a, 'manual', at(9)),
          suppression(a, 'hard_bounce', at(7)), // raises it, and the earlier time stays
          suppression(b, 'manual', at(2)), // same reason: only the time moves
          suppression(b, 'complaint', at(8)),
          suppression(a, 'manual', at(1)),
        ]),
      ).toStrictEqual(['suppressed', 'upgraded_from_manual', 'applied', 'upgraded_from_manual', 'applied']);
      expect(await store.getSuppressions(projectId, [a.hash, b.hash])).toStrictEqual([
        suppression(a, 'hard_bounce', at(1)),
        suppression(b, 'complaint', at(2)),
      ]);
      expect(await store.mergeSuppressions(projectId, [])).toStrictEqual([]);
    });

    test('removeSuppressions deletes each hash and returns what it deleted', async ({ store, projectId }) => {
      const [a, b, never] = addresses(3);
      const ra = suppression(a, 'complaint', at(1));
      const rb = suppression(b, 'manual', at(2));
      await store.mergeSuppressions(projectId, [ra, rb]);
      expect(await store.removeSuppressions(projectId, [a.hash, never.hash, a.hash])).toStrictEqual([ra, undefined, undefined]);
      expect(await store.getSuppressions(projectId, [a.hash, b.hash])).toStrictEqual([undefined, rb]);
      expect(await everything(store, projectId)).toStrictEqual([rb]);
      expect(await store.removeSuppressions(projectId, [])).toStrictEqual([]);
    });

    test('batches longer than a store’s round trip are whole: 2 500 merged, listed, removed', async ({ store, projectId }) => {
      const records = addresses(2500).map((address, index) =>
        suppression(address, index % 3 === 0 ? 'hard_bounce' : 'manual', at(index % 50)),
      );
      expect(await store.mergeSuppressions(projectId, records)).toStrictEqual(records.map(() => 'suppressed'));
      const newestFirst = [...records].sort((x, y) => y.createdAt - x.createdAt || (x.hash < y.hash ? -1 : 1));
      expect(await everything(store, projectId)).toStrictEqual(newestFirst);
      // Again, as a resumed import sends them: nothing changes.
      expect(await store.mergeSuppressions(projectId, records)).toStrictEqual(records.map(() => 'applied'));
      expect(
        await store.removeSuppressions(
          projectId,
          records.map((record) => record.hash),
        ),
      ).toStrictEqual(records);
      expect(await everything(store, projectId)).toStrictEqual([]);
    });

    // The law: a batch is the same records merged one by one, in its order, whatever the batching;
    // and the records' order does not change the end state (the merge is a join).
    test('any batching gives the outcomes and suppressions of merging one by one; any order the same suppressions', async ({ store }) => {
      await fc.assert(
        fc.asyncProperty(
          mergeRecords,
          fc.infiniteStream(fc.integer({ min: 1, max: 5 })),
          fc.infiniteStream(fc.nat()),
          async (records, batchSizes, picks) => {
            const model = createStoreModel();
            const projectId = randomProjectId();
            const expected: SuppressionMergeOutcome[] = [];
            for (const record of records) expected.push(...(await model.mergeSuppressions(projectId, [record])));
            const outcomes: SuppressionMergeOutcome[] = [];
            for (let from = 0; from < records.length; ) {
              const size = batchSizes.next().value;
              outcomes.push(...(await store.mergeSuppressions(projectId, records.slice(from, from + size))));
              from += size;
            }
            expect(outcomes).toStrictEqual(expected);
            const hashes = addressPool.map((entry) => entry.hash);
            expect(await store.getSuppressions(projectId, hashes)).toStrictEqual(await model.getSuppressions(projectId, hashes));
            // Per list: records of several lists in one batch each join their own.
            expect(await everyList(store, projectId)).toStrictEqual(await everyList(model, projectId));

            const pending = [...records];
            const shuffled: SuppressionRecord[] = [];
            while (pending.length > 0) shuffled.push(pending.splice(picks.next().value % pending.length, 1)[0]!);
            const reordered = randomProjectId();
            await store.mergeSuppressions(reordered, shuffled);
            expect(await store.getSuppressions(reordered, hashes)).toStrictEqual(await model.getSuppressions(projectId, hashes));
            expect(await everyList(store, reordered)).toStrictEqual(await everyList(model, projectId));
          },
        ),
        { numRuns: options.numRuns ?? 50 },
      );
    });

    // The law of retries: merging is idempotent in every list, so an import that failed part-way may send
    // everything again. A second merge of the same records changes no list and reports only 'applied'.
    test('merging the same records again changes no list and reports only applied', async ({ store }) => {
      await fc.assert(
        fc.asyncProperty(mergeRecords, async (records) => {
          const projectId = randomProjectId();
          await store.mergeSuppressions(projectId, records);
          const once = await everyList(store, projectId);
          expect(await store.mergeSuppressions(projectId, records)).toStrictEqual(records.map(() => 'applied'));
          expect(await everyList(store, projectId)).toStrictEqual(once);
        }),
        { numRuns: options.numRuns ?? 50 },
      );
    });
  });
}
