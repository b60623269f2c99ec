import type { SuppressionRecord } from '@mailwarden/core/store';
import fc from 'fast-check';
import { storedEvent as anyStoredEvent } from './arbitraries.js';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';
import { everyList } from './lists.js';
import { addresses, at, suppression, suppressingEvent, type Address } from './records.js';

/** An added suppression that expires at `expiresAt` (absent: never). */
function expiring(address: Address, createdAt: number, expiresAt?: number, stream?: string): SuppressionRecord {
  return {
    ...suppression(address, 'manual', createdAt),
    provenance: { source: 'api', at: createdAt },
    ...(stream === undefined ? {} : { stream }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
  };
}

/** Enough calls of a bounded sweep to finish any test's work: each call must do some. */
const MAX_SWEEPS = 50;

export function describeExpiryTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options);

  describe('suppressions that expire', () => {
    test('a suppression stops suppressing exactly at expiresAt, in checks with and without a stream', async ({ store, projectId }) => {
      const [a, b] = addresses(2);
      const wide = expiring(a, at(1), at(10));
      const inStream = expiring(a, at(2), at(20), 'marketing');
      const never = expiring(b, at(3));
      for (const record of [wide, inStream, never]) await store.addSuppression(projectId, record, at(5));
      expect(await store.getSuppression(projectId, a.hash, undefined, at(10) - 1)).toStrictEqual(wide);
      expect(await store.getSuppression(projectId, a.hash, undefined, at(10))).toBeUndefined();
      expect(await store.getSuppression(projectId, a.hash)).toStrictEqual(wide); // no now: nothing is expired
      // With a stream, the stream's entry answers once the project-wide one has expired, until it expires too.
      expect(await store.getSuppression(projectId, a.hash, 'marketing', at(10) - 1)).toStrictEqual(wide);
      expect(await store.getSuppression(projectId, a.hash, 'marketing', at(10))).toStrictEqual(inStream);
      expect(await store.getSuppression(projectId, a.hash, 'marketing', at(20))).toBeUndefined();
      const hashes = [a.hash, b.hash, a.hash];
      expect(await store.getSuppressions(projectId, hashes, undefined, at(10) - 1)).toStrictEqual([wide, never, wide]);
      expect(await store.getSuppressions(projectId, hashes, undefined, at(10))).toStrictEqual([undefined, never, undefined]);
      expect(await store.getSuppressions(projectId, hashes, 'marketing', at(10))).toStrictEqual([inStream, never, inStream]);
      expect(await store.getSuppressions(projectId, hashes, 'marketing', at(20))).toStrictEqual([undefined, never, undefined]);
    });

    test('listings leave out what is expired at now, and filter by whether an entry expires', async ({ store, projectId }) => {
      const [a, b, c] = addresses(3);
      const soon = expiring(a, at(3), at(10));
      const later = expiring(b, at(2), at(20));
      const never = expiring(c, at(1));
      await store.mergeSuppressions(projectId, [soon, later, never]);
      expect(await store.listSuppressions(projectId, { limit: 10 })).toStrictEqual([soon, later, never]);
      expect(await store.listSuppressions(projectId, { limit: 10, now: at(10) - 1 })).toStrictEqual([soon, later, never]);
      expect(await store.listSuppressions(projectId, { limit: 10, now: at(10) })).toStrictEqual([later, never]);
      expect(await store.listSuppressions(projectId, { limit: 1, now: at(10) })).toStrictEqual([later]);
      expect(await store.listSuppressions(projectId, { limit: 10, now: at(10), after: { createdAt: at(2), hash: b.hash } })).toStrictEqual([
        never,
      ]);
      expect(await store.listSuppressions(projectId, { limit: 10, expiring: true })).toStrictEqual([soon, later]);
      expect(await store.listSuppressions(projectId, { limit: 10, expiring: true, now: at(10) })).toStrictEqual([later]);
      expect(await store.listSuppressions(projectId, { limit: 10, expiring: false, now: at(30) })).toStrictEqual([never]);
      expect(await store.listSuppressions(projectId, { limit: 10, expiring: true, reason: 'manual', now: at(20) })).toStrictEqual([]);
    });

    test('a write meets an expired entry as absent: an event, a merge or an add after expiry suppresses again', async ({
      store,
      projectId,
    }) => {
      const [a, b, c] = addresses(3);
      for (const address of [a, b, c]) await store.addSuppression(projectId, { ...expiring(address, at(1), at(10)), reason: 'complaint' });
      const bounce = suppressingEvent(a, 'hard_bounce', at(12));
      expect(await store.applyEvents(projectId, [bounce], { now: at(10) })).toStrictEqual(['suppressed']);
      expect(await store.getSuppression(projectId, a.hash, undefined, at(10))).toStrictEqual(bounce.suppression);
      const imported: SuppressionRecord = { ...suppression(b, 'manual', at(11)), provenance: { source: 'import', at: at(11) } };
      expect(await store.mergeSuppressions(projectId, [imported], at(10))).toStrictEqual(['suppressed']);
      expect(await store.getSuppression(projectId, b.hash, undefined, at(10))).toStrictEqual(imported);
      const added = expiring(c, at(11), at(40));
      expect(await store.addSuppression(projectId, added, at(10))).toStrictEqual({ record: added, created: true });
      // Before expiry the stored one still answers an add, as ever.
      expect(await store.addSuppression(projectId, expiring(c, at(12)), at(39))).toStrictEqual({ record: added, created: false });
      expect(await store.listSuppressions(projectId, { limit: 10 })).toStrictEqual([bounce.suppression, imported, added]);
    });

    test('in a join the expiry goes with the provenance that wins', async ({ store, projectId }) => {
      const [a, b] = addresses(2);
      // A stronger reason wins, and brings its expiry or none.
      await store.addSuppression(projectId, expiring(a, at(1), at(100)));
      const bounce = suppressingEvent(a, 'hard_bounce', at(5));
      expect(await store.applyEvents(projectId, [bounce], { now: at(6) })).toStrictEqual(['upgraded_from_manual']);
      expect(await store.getSuppression(projectId, a.hash, undefined, at(6))).toStrictEqual({ ...bounce.suppression, createdAt: at(1) });
      // Of one reason, the earlier cause wins with its expiry; a later one's expiry is not taken.
      const first = suppressingEvent(b, 'hard_bounce', at(5), { expiresAt: at(50) });
      const later = suppressingEvent(b, 'hard_bounce', at(7), { expiresAt: at(90) });
      const earliest = suppressingEvent(b, 'hard_bounce', at(3));
      expect(await store.applyEvents(projectId, [first, later], { now: at(8) })).toStrictEqual(['suppressed', 'applied']);
      expect(await store.getSuppression(projectId, b.hash, undefined, at(8))).toStrictEqual(first.suppression);
      expect(await store.applyEvents(projectId, [earliest], { now: at(8) })).toStrictEqual(['applied']);
      expect(await store.getSuppression(projectId, b.hash, undefined, at(60))).toStrictEqual(earliest.suppression);
    });

    test('a suppression already expired at now is not written; removal returns an expired entry', async ({ store, projectId }) => {
      const [a, b] = addresses(2);
      const past = suppressingEvent(a, 'hard_bounce', at(1), { expiresAt: at(5) });
      expect(await store.applyEvents(projectId, [past], { now: at(5) })).toStrictEqual(['applied']);
      expect(await store.mergeSuppressions(projectId, [expiring(b, at(1), at(5))], at(6))).toStrictEqual(['applied']);
      expect(await store.listSuppressions(projectId, { limit: 10 })).toStrictEqual([]);
      const stored = expiring(a, at(1), at(5));
      await store.addSuppression(projectId, stored);
      expect(await store.removeSuppression(projectId, a.hash)).toStrictEqual(stored);
    });

    test('the sweep deletes only entries expired at its now, of every list and project, a bounded amount per call', async ({
      store,
      projectId,
    }) => {
      if (store.purgeExpired === undefined) return; // optional: a store without it keeps expired entries (never answered)
      const other = randomProjectId();
      const many = addresses(12).flatMap((address) => Array.from({ length: 100 }, (_, index) => ({ address, index })));
      // 1 200 expired entries (more than a bounded call need take), in many lists, beside entries that stay.
      const expired = many.map(({ address, index }) =>
        expiring(
          { ...address, hash: `${address.hash.slice(0, 60)}${index.toString(16).padStart(4, '0')}` },
          at(1),
          at(10),
          [undefined, 'marketing', 'weekly-digest'][index % 3],
        ),
      );
      const [a, b] = addresses(2);
      const staying = [expiring(a, at(2), at(11)), expiring(b, at(3)), expiring(a, at(4), at(11), 'marketing')];
      await store.mergeSuppressions(projectId, [...expired, ...staying]);
      await store.mergeSuppressions(other, [expiring(a, at(1), at(10), 'marketing'), expiring(b, at(1), at(10))]);
      let sweeps = 0;
      while ((await store.purgeExpired(at(10))) > 0 && sweeps < MAX_SWEEPS) sweeps += 1;
      expect(sweeps).toBeLessThan(MAX_SWEEPS);
      expect(await everyList(store, projectId)).toStrictEqual([[staying[1], staying[0]], [staying[2]], [], [], []]);
      expect((await everyList(store, other)).flat()).toStrictEqual([]);
    });
  });

  describe('without rules', () => {
    // The pinned answers depend on it: no rule, no expiry and no allowlist leave every record as before issue 25.
    test('events and adds without options make records with no expiresAt, no rule and no allowlisted mark', async ({ store }) => {
      await fc.assert(
        fc.asyncProperty(fc.array(anyStoredEvent, { maxLength: 12 }), async (events) => {
          const projectId = randomProjectId();
          await store.applyEvents(projectId, events);
          for (const record of (await everyList(store, projectId)).flat()) {
            expect(record).not.toHaveProperty('expiresAt');
            expect(record.provenance ?? {}).not.toHaveProperty('rule');
            expect(record.provenance ?? {}).not.toHaveProperty('allowlisted');
          }
        }),
        { numRuns: Math.ceil((options.numRuns ?? 50) / 5) },
      );
    });
  });
}
