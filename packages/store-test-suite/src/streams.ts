import type { Store } from '@mailwarden/core';
import { timelineEntryId, type StoredEvent, type SuppressionPosition, type SuppressionRecord } from '@mailwarden/core/store';
import fc from 'fast-check';
import * as arbitrary from './arbitraries.js';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';
import { everyList } from './lists.js';
import { walkPages } from './pages.js';
import { addresses, at, storedEvent, suppression, type Address } from './records.js';

// Lists per stream (docs/storage.md, "Suppression lists"): each list independent, a check for a stream answered by
// the project-wide entry, else the stream's.

const positionOf = (record: SuppressionRecord): SuppressionPosition => ({ createdAt: record.createdAt, hash: record.hash });

/** `record` in the list of `stream`. */
const inStream = (record: SuppressionRecord, stream: string): SuppressionRecord => ({ ...record, stream });

/** A recipient's unsubscribe as the service stores it: `manual`, source `unsubscribe`, in `stream`'s list (project-wide when absent). */
function unsubscribe(address: Address, seconds: number, stream: string | undefined, key?: string): SuppressionRecord {
  return {
    ...suppression(address, 'manual', at(seconds)),
    provenance: {
      source: 'unsubscribe',
      at: at(seconds),
      ...(key === undefined
        ? {}
        : { event: { provider: 'sendgrid', messageId: `m-${key}`, eventId: timelineEntryId(key), diagnostic: null } }),
    },
    ...(stream === undefined ? {} : { stream }),
  };
}

/** A list as a store's optional argument: none for the project-wide list. */
const lists = (stream: string | undefined): [] | [string] => (stream === undefined ? [] : [stream]);

/** One write of a random run, to any list. */
type Write =
  | { kind: 'add'; record: SuppressionRecord }
  | { kind: 'merge'; records: SuppressionRecord[] }
  | { kind: 'remove'; hashes: string[]; stream: string | undefined }
  | { kind: 'events'; events: StoredEvent[] };

function writes(records: fc.Arbitrary<SuppressionRecord>, events: fc.Arbitrary<StoredEvent>, stream: fc.Arbitrary<string | undefined>) {
  return fc.oneof(
    records.map((record): Write => ({ kind: 'add', record })),
    fc.array(records, { maxLength: 5 }).map((records): Write => ({ kind: 'merge', records })),
    fc
      .tuple(fc.array(arbitrary.hash, { minLength: 1, maxLength: 3 }), stream)
      .map(([hashes, stream]): Write => ({ kind: 'remove', hashes, stream })),
    fc.array(events, { maxLength: 4 }).map((events): Write => ({ kind: 'events', events })),
  );
}

function write(store: Store, projectId: string, step: Write): Promise<unknown> {
  switch (step.kind) {
    case 'add':
      return store.addSuppression(projectId, step.record);
    case 'merge':
      return store.mergeSuppressions(projectId, step.records);
    case 'remove':
      return store.removeSuppressions(projectId, step.hashes, ...lists(step.stream));
    case 'events':
      return store.applyEvents(projectId, step.events);
  }
}

/** Writes to any list. */
const anyWrite = writes(arbitrary.suppression, arbitrary.storedEvent, arbitrary.suppressionList);
/** Writes to the project-wide list only. */
const projectWideWrite = writes(arbitrary.projectWideSuppression, arbitrary.projectWideEvent, fc.constant(undefined));
/** Writes to streams' lists only; their events have keys of their own (a shared key would make one a duplicate). */
const streamOnly = fc.constantFrom(...arbitrary.suppressionStreamPool);
const streamWrite = writes(
  fc.tuple(arbitrary.projectWideSuppression, streamOnly).map(([record, stream]) => inStream(record, stream)),
  arbitrary
    .storedEventIn(streamOnly, 'sendgrid:stream-event-')
    .map((event) => (event.suppression?.stream === undefined ? { ...event, suppression: null } : event)),
  streamOnly,
);

export function describeStreamTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options);

  describe('suppression lists per stream', () => {
    test('lists are independent: one address in several, each with its own record', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const wide = { ...suppression(a, 'hard_bounce', at(5)), provenance: { source: 'webhook' as const, at: at(5) } };
      const marketing = unsubscribe(a, 2, 'marketing');
      const digest = unsubscribe(a, 9, 'weekly-digest', 'streams:digest');
      expect(await store.addSuppression(projectId, marketing)).toStrictEqual({ record: marketing, created: true });
      expect(await store.addSuppression(projectId, wide)).toStrictEqual({ record: wide, created: true });
      expect(await store.mergeSuppressions(projectId, [digest])).toStrictEqual(['suppressed']);
      // Insert-if-absent within its list: the list's own record comes back.
      expect(await store.addSuppression(projectId, inStream(suppression(a, 'complaint', at(1)), 'marketing'))).toStrictEqual({
        record: marketing,
        created: false,
      });
      expect(await store.getSuppression(projectId, a.hash)).toStrictEqual(wide);
      expect(await store.listSuppressions(projectId, { limit: 10 })).toStrictEqual([wide]);
      expect(await store.listSuppressions(projectId, { limit: 10, stream: 'marketing' })).toStrictEqual([marketing]);
      expect(await store.listSuppressions(projectId, { limit: 10, stream: 'weekly-digest' })).toStrictEqual([digest]);
      expect(await store.listSuppressions(projectId, { limit: 10, stream: 'x-1' })).toStrictEqual([]);
    });

    test('a check for a stream: the project-wide entry when there is one (also when both hold it), else the stream’s', async ({
      store,
      projectId,
    }) => {
      const [a, b, c] = addresses(3);
      const wideA = suppression(a, 'manual', at(3));
      const marketingA = unsubscribe(a, 1, 'marketing');
      const marketingB = unsubscribe(b, 2, 'marketing');
      for (const record of [wideA, marketingA, marketingB]) await store.addSuppression(projectId, record);

      expect(await store.getSuppression(projectId, a.hash, 'marketing')).toStrictEqual(wideA);
      expect(await store.getSuppression(projectId, b.hash, 'marketing')).toStrictEqual(marketingB);
      expect(await store.getSuppression(projectId, b.hash)).toBeUndefined();
      expect(await store.getSuppression(projectId, b.hash, 'weekly-digest')).toBeUndefined();
      expect(await store.getSuppression(projectId, a.hash, 'weekly-digest')).toStrictEqual(wideA);
      expect(await store.getSuppression(projectId, c.hash, 'marketing')).toBeUndefined();
      expect(await store.getSuppressions(projectId, [c.hash, b.hash, a.hash, b.hash], 'marketing')).toStrictEqual([
        undefined,
        marketingB,
        wideA,
        marketingB,
      ]);
      expect(await store.getSuppressions(projectId, [a.hash, b.hash], 'a')).toStrictEqual([wideA, undefined]);
      expect(await store.getSuppressions(projectId, [], 'marketing')).toStrictEqual([]);

      // Without the project-wide entry, the stream's answers.
      expect(await store.removeSuppression(projectId, a.hash)).toStrictEqual(wideA);
      expect(await store.getSuppression(projectId, a.hash, 'marketing')).toStrictEqual(marketingA);
      expect(await store.getSuppression(projectId, a.hash)).toBeUndefined();
    });

    test('removes take from the named list only', async ({ store, projectId }) => {
      const [a, b] = addresses(2);
      const wideA = suppression(a, 'complaint', at(1));
      const marketingA = unsubscribe(a, 2, 'marketing');
      const marketingB = unsubscribe(b, 3, 'marketing');
      await store.mergeSuppressions(projectId, [wideA, marketingA, marketingB]);

      expect(await store.removeSuppression(projectId, a.hash, 'weekly-digest')).toBeUndefined();
      expect(await store.removeSuppression(projectId, b.hash)).toBeUndefined();
      expect(await store.removeSuppression(projectId, a.hash, 'marketing')).toStrictEqual(marketingA);
      expect(await store.removeSuppression(projectId, a.hash, 'marketing')).toBeUndefined();
      expect(await store.getSuppression(projectId, a.hash)).toStrictEqual(wideA);
      expect(await store.removeSuppressions(projectId, [b.hash, a.hash, b.hash], 'marketing')).toStrictEqual([
        marketingB,
        undefined,
        undefined,
      ]);
      expect(await store.listSuppressions(projectId, { limit: 10, stream: 'marketing' })).toStrictEqual([]);
      expect(await store.listSuppressions(projectId, { limit: 10 })).toStrictEqual([wideA]);
      // Removed means absent from that list: added again, it is created again there.
      expect(await store.addSuppression(projectId, marketingA)).toStrictEqual({ record: marketingA, created: true });
    });

    test('one merge may mix lists: each record joins its own, outcomes per list', async ({ store, projectId }) => {
      const [a] = addresses(1);
      expect(
        await store.mergeSuppressions(projectId, [
          suppression(a, 'manual', at(4)),
          inStream(suppression(a, 'complaint', at(6)), 'marketing'),
          suppression(a, 'complaint', at(5)),
          inStream(suppression(a, 'manual', at(2)), 'marketing'),
          inStream(suppression(a, 'hard_bounce', at(9)), 'x-1'),
        ]),
      ).toStrictEqual(['suppressed', 'suppressed', 'upgraded_from_manual', 'applied', 'suppressed']);
      expect(await everyList(store, projectId)).toStrictEqual([
        [suppression(a, 'complaint', at(4))],
        [inStream(suppression(a, 'complaint', at(2)), 'marketing')],
        [],
        [],
        [inStream(suppression(a, 'hard_bounce', at(9)), 'x-1')],
      ]);
    });

    test('an event’s suppression goes to its list: one `suppressed` per address per list', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const unsubscribed = storedEvent({ key: 'streams:unsub', suppression: unsubscribe(a, 3, 'marketing', 'streams:unsub') });
      const again = storedEvent({ key: 'streams:unsub-again', suppression: unsubscribe(a, 1, 'marketing', 'streams:unsub-again') });
      const everything = storedEvent({ key: 'streams:unsub-all', suppression: unsubscribe(a, 4, undefined, 'streams:unsub-all') });
      const bounced: SuppressionRecord = {
        ...suppression(a, 'hard_bounce', at(5)),
        provenance: {
          source: 'webhook',
          at: at(5),
          event: { provider: 'sendgrid', messageId: null, eventId: timelineEntryId('streams:bounce'), diagnostic: '550' },
        },
      };
      const bounce = storedEvent({ key: 'streams:bounce', suppression: bounced });
      expect(await store.applyEvents(projectId, [unsubscribed, again, everything, bounce, unsubscribed])).toStrictEqual([
        'suppressed',
        'applied', // earlier: its time and cause win, the reason is the same
        'suppressed',
        'upgraded_from_manual',
        'duplicate',
      ]);
      // The project-wide list: the unsubscribe from everything, raised by the bounce, which is now its cause.
      const wide: SuppressionRecord = { ...bounced, createdAt: at(4) };
      expect(await store.getSuppression(projectId, a.hash, 'marketing')).toStrictEqual(wide);
      expect(await store.getSuppression(projectId, a.hash)).toStrictEqual(wide);
      expect(await store.listSuppressions(projectId, { limit: 10, stream: 'marketing' })).toStrictEqual([again.suppression]);
    });

    test('a stream’s listing: newest first, keyset pages, every filter, apart from the other lists', async ({ store, projectId }) => {
      const [a, b, c, d, e] = addresses(5);
      const records = [
        inStream(suppression(a, 'manual', at(4)), 'weekly-digest'),
        inStream(suppression(b, 'hard_bounce', at(4)), 'weekly-digest'),
        inStream(suppression(c, 'manual', at(3)), 'weekly-digest'),
        inStream(suppression(d, 'complaint', at(2)), 'weekly-digest'),
        inStream(suppression(e, 'manual', at(1)), 'weekly-digest'),
      ];
      for (const record of [...records].reverse()) await store.addSuppression(projectId, record);
      // The same addresses elsewhere, newer: no listing of the stream may show them.
      for (const address of [a, b, c, d, e]) {
        await store.addSuppression(projectId, suppression(address, 'manual', at(9)));
        await store.addSuppression(projectId, inStream(suppression(address, 'manual', at(8)), 'marketing'));
      }
      const walk = (limit: number, filters: { reason?: 'manual'; from?: number; to?: number } = {}) =>
        walkPages(
          limit,
          (after) =>
            store.listSuppressions(projectId, { limit, stream: 'weekly-digest', ...filters, ...(after === undefined ? {} : { after }) }),
          positionOf,
        );
      expect(await walk(2)).toStrictEqual([records.slice(0, 2), records.slice(2, 4), records.slice(4)]);
      expect(await walk(5)).toStrictEqual([records, []]);
      expect(await walk(1, { reason: 'manual' })).toStrictEqual([[records[0]], [records[2]], [records[4]], []]);
      expect(await walk(10, { from: at(2), to: at(4) })).toStrictEqual([records.slice(2, 4)]);
      expect(
        await store.listSuppressions(projectId, { limit: 10, stream: 'weekly-digest', emailPrefix: c.email.slice(0, 12) }),
      ).toStrictEqual([records[2]]);
      expect(await store.listSuppressions(projectId, { limit: 10, stream: 'weekly-digest', after: positionOf(records[1]!) })).toStrictEqual(
        records.slice(2),
      );
      // A position whose item was removed: the walk goes on from its place.
      await store.removeSuppression(projectId, c.hash, 'weekly-digest');
      expect(await store.listSuppressions(projectId, { limit: 10, stream: 'weekly-digest', after: positionOf(records[2]!) })).toStrictEqual(
        records.slice(3),
      );
    });

    test('a stream’s list belongs to its project', async ({ store, projectId }) => {
      const other = randomProjectId();
      const [a] = addresses(1);
      const mine = unsubscribe(a, 1, 'marketing');
      await store.addSuppression(projectId, mine);
      expect(await store.getSuppression(other, a.hash, 'marketing')).toBeUndefined();
      expect(await store.listSuppressions(other, { limit: 10, stream: 'marketing' })).toStrictEqual([]);
      expect(await store.removeSuppression(other, a.hash, 'marketing')).toBeUndefined();
      expect(await store.getSuppression(projectId, a.hash, 'marketing')).toStrictEqual(mine);
    });

    test('an unsubscribe’s provenance is kept whole; at the same reason and time, import wins over unsubscribe, unsubscribe over webhook', async ({
      store,
      projectId,
    }) => {
      const [a, b] = addresses(2);
      const caused = unsubscribe(a, 2, 'marketing', 'streams:provenance');
      await store.applyEvents(projectId, [storedEvent({ key: 'streams:provenance', suppression: caused })]);
      expect(await store.getSuppression(projectId, a.hash, 'marketing')).toStrictEqual(caused);

      const imported: SuppressionRecord = {
        ...suppression(b, 'manual', at(3)),
        provenance: { source: 'import', at: at(3) },
        stream: 'x-1',
      };
      const asked = unsubscribe(b, 3, 'x-1');
      const webhook: SuppressionRecord = {
        ...suppression(b, 'manual', at(3)),
        provenance: { source: 'webhook', at: at(3) },
        stream: 'x-1',
      };
      const other = randomProjectId();
      await store.mergeSuppressions(projectId, [webhook, asked, imported]);
      await store.mergeSuppressions(other, [imported, asked, webhook]);
      expect(await store.getSuppression(projectId, b.hash, 'x-1')).toStrictEqual(imported);
      expect(await store.getSuppression(other, b.hash, 'x-1')).toStrictEqual(imported);
      const third = randomProjectId();
      await store.mergeSuppressions(third, [webhook, asked]);
      expect(await store.getSuppression(third, b.hash, 'x-1')).toStrictEqual(asked);
    });

    // The law of the check: whatever was written to whichever lists, a check for a list answers by the rule
    // over what the store's own listings hold, one hash or many.
    test('after any writes, every check answers by the rule over the lists the store lists', async ({ store }) => {
      await fc.assert(
        fc.asyncProperty(fc.array(anyWrite, { maxLength: 12 }), async (steps) => {
          const projectId = randomProjectId();
          for (const step of steps) await write(store, projectId, step);
          const held = (await everyList(store, projectId)).map((list) => new Map(list.map((record) => [record.hash, record])));
          const hashes = [...arbitrary.addressPool.map((entry) => entry.hash), arbitrary.addressPool[0]!.hash];
          for (const [index, stream] of arbitrary.everySuppressionList.entries()) {
            const expected = hashes.map((hash) => held[0]!.get(hash) ?? (index === 0 ? undefined : held[index]!.get(hash)));
            expect(await store.getSuppressions(projectId, hashes, ...lists(stream))).toStrictEqual(expected);
            expect(await Promise.all(hashes.map((hash) => store.getSuppression(projectId, hash, ...lists(stream))))).toStrictEqual(
              expected,
            );
          }
        }),
        { numRuns: options.numRuns ?? 50 },
      );
    });

    // The law of compatibility: the same project-wide writes give the same answers without a stream, and
    // the same outcomes, whatever is written to the streams between them.
    test('answers without a stream are unchanged whatever is in the streams', async ({ store }) => {
      const step = fc.record({ wide: projectWideWrite, around: fc.array(streamWrite, { maxLength: 2 }) });
      const query = arbitrary.suppressionQuery.map(({ stream: _list, after: _start, ...filters }) => filters);
      await fc.assert(
        fc.asyncProperty(fc.array(step, { maxLength: 10 }), fc.array(query, { minLength: 1, maxLength: 3 }), async (steps, queries) => {
          const alone = randomProjectId();
          const mixed = randomProjectId();
          for (const { wide, around } of steps) {
            for (const extra of around) await write(store, mixed, extra);
            expect(await write(store, mixed, wide)).toStrictEqual(await write(store, alone, wide));
          }
          const hashes = arbitrary.addressPool.map((entry) => entry.hash);
          expect(await store.getSuppressions(mixed, hashes)).toStrictEqual(await store.getSuppressions(alone, hashes));
          expect(await Promise.all(hashes.map((hash) => store.getSuppression(mixed, hash)))).toStrictEqual(
            await Promise.all(hashes.map((hash) => store.getSuppression(alone, hash))),
          );
          for (const filters of queries) {
            const walk = (projectId: string) =>
              walkPages(
                filters.limit,
                (after) => store.listSuppressions(projectId, after === undefined ? filters : { ...filters, after }),
                positionOf,
              );
            expect(await walk(mixed)).toStrictEqual(await walk(alone));
          }
        }),
        { numRuns: options.numRuns ?? 50 },
      );
    });
  });
}
