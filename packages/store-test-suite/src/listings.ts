import type { MessageStatus, Store } from '@mailwarden/core';
import { Fact, compareCodePoints, type MessagePosition, type MessageRecord, type TrackingIdRecord } from '@mailwarden/core/store';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';
import { walkPages } from './pages.js';
import { at, message, messageIdentities, storedEvent } from './records.js';

const positionOf = (record: MessageRecord): MessagePosition => ({ firstEventAt: record.firstEventAt, key: record.key });

/** Gives each tracking ID one delivered message of its own. */
async function withTrackingIds(store: Store, projectId: string, trackingIds: readonly string[]): Promise<void> {
  const identities = messageIdentities(trackingIds.length as number);
  await store.applyEvents(
    projectId,
    trackingIds.map((trackingId, index) => storedEvent({ message: message(identities[index]!, Fact.delivered, at(index), trackingId) })),
  );
}

/**
 * Case variants, an ID inside others, non-ASCII (characters that lower-case to longer text too), astral
 * and 128-code-point IDs, and pattern characters.
 */
const lookedUpIds = [
  'promo',
  'Promo',
  'PROMO',
  'promo-2',
  'Spring-Promo',
  'Ünïcode-Été',
  'ünïcode-été',
  'İstanbul',
  'Straße',
  'a😀',
  '😀',
  '😀'.repeat(128),
  'x'.repeat(128),
  '50%_off',
];

/** Facts given in turn to the messages of `withCountedTrackingIds`, so rows differ in every counter. */
const factsInTurn = [Fact.delivered, Fact.hard_bounced, Fact.complained | Fact.delivered, Fact.soft_bounced, Fact.sent];

/** Gives the tracking ID at index i of `trackingIds` 1 + i % 3 messages, of facts and times that vary. */
async function withCountedTrackingIds(store: Store, projectId: string, trackingIds: readonly string[]): Promise<void> {
  const perId = trackingIds.map((_, index) => 1 + (index % 3));
  const identities = messageIdentities(perId.reduce((sum, count) => sum + count, 0));
  await store.applyEvents(
    projectId,
    trackingIds.flatMap((trackingId, index) =>
      Array.from({ length: perId[index]! }, (_, turn) =>
        storedEvent({
          message: message(identities.pop()!, factsInTurn[(index + turn) % factsInTurn.length]!, at(index + turn), trackingId),
        }),
      ),
    ),
  );
}

async function listedIds(store: Store, projectId: string, query: { search?: string; after?: string; limit?: number }): Promise<string[]> {
  const rows = await store.listTrackingIds(projectId, { limit: 1000, ...query });
  return rows.map((row) => row.trackingId);
}

export function describeListingTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options);

  describe('listings', () => {
    test('listMessages is newest first: firstEventAt descending, then key ascending', async ({ store, projectId }) => {
      const [k1, k2, k3, k4, k5] = messageIdentities(5);
      const seen = [
        message(k1, Fact.sent, at(2)),
        message(k2, Fact.sent, at(3)),
        message(k3, Fact.sent, at(2)),
        message(k4, Fact.sent, at(1)),
        message(k5, Fact.sent, at(3)),
      ];
      await store.applyEvents(
        projectId,
        [...seen].reverse().map((record) => storedEvent({ message: record })),
      );
      const [m1, m2, m3, m4, m5] = seen;
      expect(await store.listMessages(projectId, { limit: 10 })).toStrictEqual([m2, m5, m1, m3, m4]);

      // A later event keeps a message's place; an earlier one moves it.
      await store.applyEvents(projectId, [
        storedEvent({ message: message(k3, Fact.delivered, at(4)) }),
        storedEvent({ message: message(k1, Fact.delivered, at(1)) }),
      ]);
      const m1Now = { ...m1!, facts: Fact.sent | Fact.delivered, firstEventAt: at(1) };
      const m3Now = { ...m3!, facts: Fact.sent | Fact.delivered, lastEventAt: at(4) };
      expect(await store.listMessages(projectId, { limit: 10 })).toStrictEqual([m2, m5, m3Now, m1Now, m4]);
    });

    test('listMessages pages with limit, strictly after the given position', async ({ store, projectId }) => {
      const identities = messageIdentities(5);
      const [m1, m2, m3, m4, m5] = identities.map((identity, index) => message(identity, Fact.sent, at([3, 3, 2, 2, 1][index]!)));
      await store.applyEvents(
        projectId,
        [m5, m3, m1, m4, m2].map((record) => storedEvent({ message: record })),
      );
      const walk = (limit: number) =>
        walkPages(limit, (after) => store.listMessages(projectId, after === undefined ? { limit } : { limit, after }), positionOf);
      const after = (position: MessagePosition) => store.listMessages(projectId, { limit: 10, after: position });

      expect(await walk(2)).toStrictEqual([[m1, m2], [m3, m4], [m5]]);
      expect(await walk(5)).toStrictEqual([[m1, m2, m3, m4, m5], []]);
      expect(await after(positionOf(m2!))).toStrictEqual([m3, m4, m5]);
      // Positions no message holds: between two keys of one time, newer than all, older than all.
      expect(await after({ firstEventAt: at(2), key: '0'.repeat(32) })).toStrictEqual([m3, m4, m5]);
      expect(await after({ firstEventAt: at(2), key: 'f'.repeat(32) })).toStrictEqual([m5]);
      expect(await after({ firstEventAt: at(9), key: 'f'.repeat(32) })).toStrictEqual([m1, m2, m3, m4, m5]);
      expect(await after({ firstEventAt: at(0), key: '0'.repeat(32) })).toStrictEqual([]);
    });

    test('listMessages filters by tracking ID exactly as written', async ({ store, projectId }) => {
      const [k1, k2, k3, k4, k5] = messageIdentities(5);
      const m1 = message(k1, Fact.sent, at(5), 'Promo');
      const m2 = message(k2, Fact.sent, at(4), 'promo');
      const m3 = message(k3, Fact.sent, at(3), 'promo');
      const m4 = message(k4, Fact.sent, at(2), 'a😀');
      const m5 = message(k5, Fact.sent, at(1), null);
      await store.applyEvents(
        projectId,
        [m1, m2, m3, m4, m5].map((record) => storedEvent({ message: record })),
      );

      expect(await store.listMessages(projectId, { limit: 10, trackingId: 'promo' })).toStrictEqual([m2, m3]);
      expect(await store.listMessages(projectId, { limit: 10, trackingId: 'Promo' })).toStrictEqual([m1]);
      expect(await store.listMessages(projectId, { limit: 10, trackingId: 'a😀' })).toStrictEqual([m4]);
      expect(await store.listMessages(projectId, { limit: 10, trackingId: 'PROMO' })).toStrictEqual([]);
      expect(await store.listMessages(projectId, { limit: 10, trackingId: 'prom' })).toStrictEqual([]);
      expect(await store.listMessages(projectId, { limit: 1, trackingId: 'promo' })).toStrictEqual([m2]);
      expect(await store.listMessages(projectId, { limit: 1, trackingId: 'promo', after: positionOf(m2) })).toStrictEqual([m3]);
      expect(await store.listMessages(projectId, { limit: 1, trackingId: 'promo', after: positionOf(m1) })).toStrictEqual([m2]);
    });

    test('listMessages filters by status, derived from facts by precedence', async ({ store, projectId }) => {
      const cases: [MessageStatus, number][] = [
        ['complained', Fact.complained | Fact.hard_bounced | Fact.delivered],
        ['bounced', Fact.hard_bounced | Fact.rejected | Fact.delivered],
        ['rejected', Fact.rejected | Fact.delivered],
        ['delivered', Fact.delivered | Fact.soft_bounced | Fact.opened],
        ['soft_bounced', Fact.soft_bounced | Fact.deferred],
        ['deferred', Fact.deferred | Fact.sent],
        ['sent', Fact.sent],
      ];
      const identities = messageIdentities(cases.length as number);
      const records = cases.map(([, facts], index) => message(identities[index]!, facts, at(index), 'promo'));
      await store.applyEvents(
        projectId,
        records.map((record) => storedEvent({ message: record })),
      );

      for (const [index, [status]] of cases.entries()) {
        expect(await store.listMessages(projectId, { limit: 10, status })).toStrictEqual([records[index]]);
        expect(await store.listMessages(projectId, { limit: 10, status, trackingId: 'promo' })).toStrictEqual([records[index]]);
        expect(await store.listMessages(projectId, { limit: 10, status, trackingId: 'other' })).toStrictEqual([]);
      }

      // A weaker fact leaves the status; a stronger one changes it. limit counts only matching messages.
      const [rejected, delivered, sent] = [records[2]!, records[3]!, records[6]!];
      await store.applyEvents(projectId, [
        storedEvent({ message: { ...rejected, facts: Fact.sent } }),
        storedEvent({ message: { ...sent, facts: Fact.delivered } }),
      ]);
      const sentThenDelivered = { ...sent, facts: Fact.sent | Fact.delivered };
      expect(await store.listMessages(projectId, { limit: 10, status: 'rejected' })).toStrictEqual([
        { ...rejected, facts: rejected.facts | Fact.sent },
      ]);
      expect(await store.listMessages(projectId, { limit: 10, status: 'sent' })).toStrictEqual([]);
      expect(await store.listMessages(projectId, { limit: 1, status: 'delivered' })).toStrictEqual([sentThenDelivered]);
      expect(await store.listMessages(projectId, { limit: 1, status: 'delivered', after: positionOf(sentThenDelivered) })).toStrictEqual([
        delivered,
      ]);
    });

    test('listTrackingIds is in code-point order: astral characters sort after U+FFFD', async ({ store, projectId }) => {
      // UTF-16 code-unit order (JavaScript's <) would put 'a😀' before 'a\uFFFD' and '😀' before 'ａ'.
      const ordered = ['B', 'a', 'a\uFFFD', 'a😀', 'b', 'é', 'ａ', '\uFFFD', '😀', '😀😀'];
      await withTrackingIds(store, projectId, [...ordered].reverse());

      expect(await listedIds(store, projectId, {})).toStrictEqual(ordered);
      expect(await listedIds(store, projectId, { after: 'a\uFFFD' })).toStrictEqual(ordered.slice(3));
      expect(await listedIds(store, projectId, { after: '\uFFFD' })).toStrictEqual(['😀', '😀😀']);
      expect(await listedIds(store, projectId, { after: 'ａ', limit: 2 })).toStrictEqual(['\uFFFD', '😀']);
      const pages = await walkPages<string, string>(
        3,
        (after) => listedIds(store, projectId, after === undefined ? { limit: 3 } : { limit: 3, after }),
        (id) => id,
      );
      expect(pages).toStrictEqual([ordered.slice(0, 3), ordered.slice(3, 6), ordered.slice(6, 9), ordered.slice(9)]);
    });

    test('listTrackingIds after is strictly after any string, a tracking ID or not', async ({ store, projectId }) => {
      await withTrackingIds(store, projectId, ['b', 'a', 'c']);
      expect(await listedIds(store, projectId, { after: 'a' })).toStrictEqual(['b', 'c']);
      expect(await listedIds(store, projectId, { after: 'A' })).toStrictEqual(['a', 'b', 'c']);
      expect(await listedIds(store, projectId, { after: 'a\u0000' })).toStrictEqual(['b', 'c']);
      expect(await listedIds(store, projectId, { after: 'bb' })).toStrictEqual(['c']);
      expect(await listedIds(store, projectId, { after: 'c' })).toStrictEqual([]);
      expect(await listedIds(store, projectId, { after: '😀' })).toStrictEqual([]);
    });

    test('getTrackingId answers, for every ID, the row a listTrackingIds walk has for it', async ({ store, projectId }) => {
      await withCountedTrackingIds(store, projectId, lookedUpIds);
      const rows = (
        await walkPages<TrackingIdRecord, string>(
          3,
          (after) => store.listTrackingIds(projectId, after === undefined ? { limit: 3 } : { limit: 3, after }),
          (row) => row.trackingId,
        )
      ).flat();
      expect(rows.map((row) => row.trackingId)).toStrictEqual([...lookedUpIds].sort(compareCodePoints));
      for (const row of rows) expect(await store.getTrackingId(projectId, row.trackingId)).toStrictEqual(row);
      // Two messages: hard-bounced at 1 s, complained after delivery at 2 s.
      expect(await store.getTrackingId(projectId, 'Promo')).toStrictEqual({
        trackingId: 'Promo',
        messages: 2,
        delivered: 1,
        bounced: 1,
        complained: 1,
        lastEventAt: at(2),
        opened: 0,
        clicked: 0,
        unsubscribed: 0,
      });
    });

    test('getTrackingId is undefined for an ID the project has no message with, even one another project has', async ({
      store,
      projectId,
    }) => {
      await withCountedTrackingIds(store, projectId, lookedUpIds);
      const other = randomProjectId();
      await withTrackingIds(store, other, ['elsewhere', 'Promo']);
      // Other case, inside or around a stored ID, one code point short or long, U+0000 appended.
      const absent = ['PROMO-2', 'prom', 'romo', 'promo ', ' promo', 'ÜNÏCODE-ÉTÉ', 'istanbul', 'strasse', 'a', '😀😀'];
      absent.push('😀'.repeat(127), 'x'.repeat(127), 'x'.repeat(129), 'promo\u0000', 'elsewhere');
      for (const trackingId of absent) expect(await store.getTrackingId(projectId, trackingId), trackingId).toBeUndefined();

      expect(await store.getTrackingId(other, 'elsewhere')).toStrictEqual({
        trackingId: 'elsewhere',
        messages: 1,
        delivered: 1,
        bounced: 0,
        complained: 0,
        lastEventAt: at(0),
        opened: 0,
        clicked: 0,
        unsubscribed: 0,
      });
      // The same ID in two projects: each answers its own counters.
      expect((await store.getTrackingId(other, 'Promo'))?.messages).toBe(1);
      expect((await store.getTrackingId(projectId, 'Promo'))?.messages).toBe(2);
      expect(await store.getTrackingId(other, 'promo')).toBeUndefined();
      expect(await store.getTrackingId(randomProjectId(), 'promo')).toBeUndefined();
    });

    test('listTrackingIds search matches a substring of the lower-cased tracking ID, literally', async ({ store, projectId }) => {
      const trackingIds = ['Spring-Promo', 'PROMO-2', 'newsletter', 'promo😀', '50%_off', 'a\\b', '[x]*?', 'İstanbul', 'Straße'];
      await withTrackingIds(store, projectId, trackingIds);
      const search = (text: string, page: { after?: string; limit?: number } = {}) =>
        listedIds(store, projectId, { search: text, ...page });

      expect(await search('promo')).toStrictEqual(['PROMO-2', 'Spring-Promo', 'promo😀']);
      expect(await search('o-')).toStrictEqual(['PROMO-2']);
      expect(await search('😀')).toStrictEqual(['promo😀']);
      expect(await search('spring-promo')).toStrictEqual(['Spring-Promo']);
      expect(await search('ß')).toStrictEqual(['Straße']);
      expect(await search('İstanbul'.toLowerCase())).toStrictEqual(['İstanbul']);
      // Pattern characters of SQL LIKE, Redis glob and regular expressions match only themselves.
      expect(await search('%')).toStrictEqual(['50%_off']);
      expect(await search('_')).toStrictEqual(['50%_off']);
      expect(await search('\\')).toStrictEqual(['a\\b']);
      expect(await search('*')).toStrictEqual(['[x]*?']);
      expect(await search('?')).toStrictEqual(['[x]*?']);
      expect(await search('[x]')).toStrictEqual(['[x]*?']);
      expect(await search('.')).toStrictEqual([]);
      expect(await search('promo-3')).toStrictEqual([]);

      expect(await search('promo', { limit: 1 })).toStrictEqual(['PROMO-2']);
      expect(await search('promo', { limit: 1, after: 'PROMO-2' })).toStrictEqual(['Spring-Promo']);
      expect(await search('promo', { after: 'Spring-Promo' })).toStrictEqual(['promo😀']);
      expect(await search('promo', { after: 'Q' })).toStrictEqual(['Spring-Promo', 'promo😀']);
    });
  });
}
