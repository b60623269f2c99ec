import type { Store } from '@mailwarden/core';
import type { SuppressionPosition, SuppressionRecord } from '@mailwarden/core/store';
import { storeTest, randomProjectId, type StoreConformanceOptions } from './harness.js';
import { walkPages } from './pages.js';
import { addresses, at, suppression } from './records.js';

const positionOf = (record: SuppressionRecord): SuppressionPosition => ({ createdAt: record.createdAt, hash: record.hash });

function listAll(store: Store, projectId: string): Promise<SuppressionRecord[]> {
  return store.listSuppressions(projectId, { limit: 1000 });
}

/** Runs `call` over `items`, a hundred at a time, and returns the results in order. */
async function inChunks<Item, Result>(items: readonly Item[], call: (item: Item) => Promise<Result>): Promise<Result[]> {
  const results: Result[] = [];
  for (let start = 0; start < items.length; start += 100) {
    results.push(...(await Promise.all(items.slice(start, start + 100).map(call))));
  }
  return results;
}

export function describeSuppressionTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options);

  describe('suppressions', () => {
    test('getSuppression returns the stored record, or undefined for an unknown hash', async ({ store, projectId }) => {
      const [a, b] = addresses(2);
      const record = suppression(a, 'hard_bounce', at(1));
      expect(await store.getSuppression(projectId, a.hash)).toBeUndefined();
      await store.addSuppression(projectId, record);
      expect(await store.getSuppression(projectId, a.hash)).toStrictEqual(record);
      expect(await store.getSuppression(projectId, b.hash)).toBeUndefined();
    });

    test('getSuppressions answers in the order asked, duplicates and misses included', async ({ store, projectId }) => {
      const [a, b, c] = addresses(3);
      const ra = suppression(a, 'manual', at(1));
      const rb = suppression(b, 'complaint', at(2));
      await store.addSuppression(projectId, ra);
      await store.addSuppression(projectId, rb);
      expect(await store.getSuppressions(projectId, [b.hash, c.hash, a.hash, b.hash, c.hash])).toStrictEqual([
        rb,
        undefined,
        ra,
        rb,
        undefined,
      ]);
      expect(await store.getSuppressions(projectId, [c.hash])).toStrictEqual([undefined]);
      expect(await store.getSuppressions(projectId, [])).toStrictEqual([]);
    });

    test('addSuppression inserts an absent record and answers created: true', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const record = suppression(a, 'manual', at(5));
      expect(await store.addSuppression(projectId, record)).toStrictEqual({ record, created: true });
      expect(await store.getSuppression(projectId, a.hash)).toStrictEqual(record);
      expect(await listAll(store, projectId)).toStrictEqual([record]);
    });

    test('addSuppression on a present hash returns it unchanged, with created: false', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const stored = suppression(a, 'hard_bounce', at(5));
      await store.addSuppression(projectId, stored);
      // Insert-if-absent, not an upsert: neither a stronger reason, a weaker one nor an earlier time changes it.
      for (const retry of [suppression(a, 'complaint', at(1)), suppression(a, 'manual', at(9)), stored]) {
        expect(await store.addSuppression(projectId, retry)).toStrictEqual({ record: stored, created: false });
      }
      expect(await store.getSuppression(projectId, a.hash)).toStrictEqual(stored);
      expect(await listAll(store, projectId)).toStrictEqual([stored]);
    });

    test('removeSuppression deletes a present record and returns it', async ({ store, projectId }) => {
      const [a, b, never] = addresses(3);
      const ra = suppression(a, 'complaint', at(1));
      const rb = suppression(b, 'manual', at(2));
      await store.addSuppression(projectId, ra);
      await store.addSuppression(projectId, rb);

      expect(await store.removeSuppression(projectId, a.hash)).toStrictEqual(ra);
      expect(await store.removeSuppression(projectId, a.hash)).toBeUndefined();
      expect(await store.removeSuppression(projectId, never.hash)).toBeUndefined();
      expect(await store.getSuppression(projectId, a.hash)).toBeUndefined();
      expect(await store.getSuppressions(projectId, [a.hash, b.hash])).toStrictEqual([undefined, rb]);
      expect(await listAll(store, projectId)).toStrictEqual([rb]);

      // Removed means absent: adding it again creates a new record, whatever the old one said.
      const again = suppression(a, 'manual', at(7));
      expect(await store.addSuppression(projectId, again)).toStrictEqual({ record: again, created: true });
      expect(await listAll(store, projectId)).toStrictEqual([again, rb]);
    });

    test('listSuppressions is newest first: createdAt descending, then hash ascending', async ({ store, projectId }) => {
      const [a, b, c, d, e] = addresses(5);
      const ra = suppression(a, 'manual', at(2));
      const rb = suppression(b, 'hard_bounce', at(3));
      const rc = suppression(c, 'complaint', at(2));
      const rd = suppression(d, 'manual', at(1));
      const re = suppression(e, 'manual', at(3));
      for (const record of [rd, ra, re, rc, rb]) await store.addSuppression(projectId, record);

      expect(await listAll(store, projectId)).toStrictEqual([rb, re, ra, rc, rd]);
    });

    test('listSuppressions returns at most limit items; pages go on strictly after the last', async ({ store, projectId }) => {
      const [a, b, c, d, e, f] = addresses(6);
      const records = [
        suppression(a, 'manual', at(4)),
        suppression(b, 'manual', at(4)),
        suppression(c, 'manual', at(3)),
        suppression(d, 'manual', at(2)),
        suppression(e, 'manual', at(2)),
        suppression(f, 'manual', at(1)),
      ];
      for (const record of [...records].reverse()) await store.addSuppression(projectId, record);
      const walk = (limit: number) =>
        walkPages(limit, (after) => store.listSuppressions(projectId, after === undefined ? { limit } : { limit, after }), positionOf);

      expect(await store.listSuppressions(projectId, { limit: 1 })).toStrictEqual(records.slice(0, 1));
      expect(await walk(4)).toStrictEqual([records.slice(0, 4), records.slice(4)]);
      // A full last page is followed by an empty one.
      expect(await walk(3)).toStrictEqual([records.slice(0, 3), records.slice(3), []]);
      expect(await walk(1)).toStrictEqual([...records.map((record) => [record]), []]);
    });

    test('after is strictly after a position, whether or not an item is still there', async ({ store, projectId }) => {
      const [a, b, c, d, e] = addresses(5);
      const ra = suppression(a, 'manual', at(2));
      const rb = suppression(b, 'manual', at(3));
      const rc = suppression(c, 'manual', at(2));
      const rd = suppression(d, 'manual', at(1));
      const re = suppression(e, 'manual', at(3));
      for (const record of [ra, rb, rc, rd, re]) await store.addSuppression(projectId, record);
      // Newest first: rb, re, ra, rc, rd.
      const after = (position: SuppressionPosition) => store.listSuppressions(projectId, { limit: 10, after: position });

      expect(await after(positionOf(ra))).toStrictEqual([rc, rd]);
      expect(await after(positionOf(rb))).toStrictEqual([re, ra, rc, rd]);
      await store.removeSuppression(projectId, ra.hash);
      // The cursor of a page may name an item removed since: the walk goes on from its place.
      expect(await after(positionOf(ra))).toStrictEqual([rc, rd]);
      // A position between two items (same time, hash between theirs): c sorts after b and before e.
      expect(await after({ createdAt: at(3), hash: c.hash })).toStrictEqual([re, rc, rd]);
      expect(await after({ createdAt: at(9), hash: a.hash })).toStrictEqual([rb, re, rc, rd]);
      expect(await after(positionOf(rd))).toStrictEqual([]);
      expect(await after({ createdAt: at(0), hash: e.hash })).toStrictEqual([]);
    });

    test('a walk returns each item present throughout exactly once, whatever changes meanwhile', async ({ store, projectId }) => {
      const [a, b, c, d, e, f, newer, older] = addresses(8);
      const ra = suppression(a, 'manual', at(10));
      const rb = suppression(b, 'manual', at(9));
      const rc = suppression(c, 'manual', at(8));
      const rd = suppression(d, 'manual', at(7));
      const re = suppression(e, 'manual', at(6));
      const rf = suppression(f, 'manual', at(5));
      for (const record of [ra, rb, rc, rd, re, rf]) await store.addSuppression(projectId, record);

      const first = await store.listSuppressions(projectId, { limit: 2 });
      expect(first).toStrictEqual([ra, rb]);
      await store.removeSuppression(projectId, rb.hash); // the cursor's own item
      await store.removeSuppression(projectId, rd.hash); // an item not listed yet
      await store.addSuppression(projectId, suppression(newer, 'manual', at(20))); // before the cursor
      const late = suppression(older, 'manual', at(1)); // after the cursor
      await store.addSuppression(projectId, late);

      const rest = await walkPages(
        2,
        (after) => store.listSuppressions(projectId, { limit: 2, after: after! }),
        positionOf,
        positionOf(rb),
      );
      expect(rest).toStrictEqual([[rc, re], [rf, late], []]);
    });

    test('many adds and removes keep every read exact', async ({ store, projectId }) => {
      // Enough churn for a store to reorganize itself (compaction, rehashing, reuse of freed space).
      const records = addresses(1500).map((address, index) => suppression(address, 'manual', at(index % 40)));
      const kept = records.filter((_, index) => index % 5 === 0);
      const removed = records.filter((_, index) => index % 5 !== 0);
      const readded = removed.filter((_, index) => index % 7 === 0).map((record) => suppression(record, 'complaint', at(-1)));

      await inChunks(records, (record) => store.addSuppression(projectId, record));
      expect(await inChunks(removed, (record) => store.removeSuppression(projectId, record.hash))).toStrictEqual(removed);
      expect(await inChunks(readded, (record) => store.addSuppression(projectId, record))).toStrictEqual(
        readded.map((record) => ({ record, created: true })),
      );

      const present = [...kept, ...readded];
      const newestFirst = (x: SuppressionRecord, y: SuppressionRecord) => y.createdAt - x.createdAt || (x.hash < y.hash ? -1 : 1);
      const pages = await walkPages(
        100,
        (after) => store.listSuppressions(projectId, after === undefined ? { limit: 100 } : { limit: 100, after }),
        positionOf,
      );
      expect(pages.flat()).toStrictEqual(present.sort(newestFirst));
      const byHash = new Map(present.map((record) => [record.hash, record]));
      expect(
        await store.getSuppressions(
          projectId,
          records.map((record) => record.hash),
        ),
      ).toStrictEqual(records.map((record) => byHash.get(record.hash)));
    });

    test('projects are isolated from each other', async ({ store, projectId }) => {
      const other = randomProjectId();
      const [a, b] = addresses(2);
      const mine = suppression(a, 'manual', at(1));
      const theirs = suppression(a, 'complaint', at(2));
      const onlyTheirs = suppression(b, 'hard_bounce', at(3));

      expect(await store.addSuppression(projectId, mine)).toStrictEqual({ record: mine, created: true });
      expect(await store.addSuppression(other, theirs)).toStrictEqual({ record: theirs, created: true });
      await store.addSuppression(other, onlyTheirs);

      expect(await store.getSuppressions(projectId, [a.hash, b.hash])).toStrictEqual([mine, undefined]);
      expect(await listAll(store, projectId)).toStrictEqual([mine]);
      expect(await store.removeSuppression(projectId, b.hash)).toBeUndefined();
      expect(await store.removeSuppression(projectId, a.hash)).toStrictEqual(mine);
      expect(await store.getSuppressions(other, [a.hash, b.hash])).toStrictEqual([theirs, onlyTheirs]);
      expect(await listAll(store, other)).toStrictEqual([onlyTheirs, theirs]);
    });
  });
}
