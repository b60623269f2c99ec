import { providers, type Store } from '@mailwarden/core';
import {
  Fact,
  type MessagePosition,
  type MessageQuery,
  type MessageRecord,
  type SuppressionPosition,
  type SuppressionQuery,
  type SuppressionRecord,
} from '@mailwarden/core/store';
import fc from 'fast-check';
import * as arbitrary from './arbitraries.js';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';
import { createStoreModel } from './model.js';
import { walkPages } from './pages.js';
import { addresses, at, message, messageIdentities, storedEvent, suppression } from './records.js';

const messagePositionOf = (record: MessageRecord): MessagePosition => ({ firstEventAt: record.firstEventAt, key: record.key });
const suppressionPositionOf = (record: SuppressionRecord): SuppressionPosition => ({ createdAt: record.createdAt, hash: record.hash });

/** Every page of a message listing, walked as the service walks it, joined. */
async function walkMessages(store: Store, projectId: string, query: Omit<MessageQuery, 'after'>): Promise<MessageRecord[]> {
  const pages = await walkPages(
    query.limit,
    (after) => store.listMessages(projectId, after === undefined ? query : { ...query, after }),
    messagePositionOf,
  );
  return pages.flat();
}

async function walkSuppressions(store: Store, projectId: string, query: Omit<SuppressionQuery, 'after'>): Promise<SuppressionRecord[]> {
  const pages = await walkPages(
    query.limit,
    (after) => store.listSuppressions(projectId, after === undefined ? query : { ...query, after }),
    suppressionPositionOf,
  );
  return pages.flat();
}

/** The filters of the message and suppression listings, each alone and combined, paged exactly. */
export function describeFilterTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options);

  describe('listing filters', () => {
    test('listMessages filters by recipient, exactly, with every other filter', async ({ store, projectId }) => {
      const [ana, bo] = [`ana-${projectId}@example.com`, `bo-${projectId}@example.com`];
      // Six messages, a provider each (messageIdentities takes them in turn), alternately to ana and bo.
      const identities = messageIdentities(6).map((identity, index) => ({ ...identity, recipient: index % 2 === 0 ? ana : bo }));
      const records = identities.map((identity, index) =>
        message(identity, index < 3 ? Fact.delivered : Fact.hard_bounced, at(index), 'promo'),
      );
      await store.applyEvents(
        projectId,
        records.map((record) => storedEvent({ message: record })),
      );
      const newestFirst = [...records].reverse();

      const toAna = newestFirst.filter((record) => record.recipient === ana);
      expect(await store.listMessages(projectId, { limit: 10, recipient: ana })).toStrictEqual(toAna);
      expect(await store.listMessages(projectId, { limit: 10, recipient: 'ANA@example.com' })).toStrictEqual([]);
      expect(await store.listMessages(projectId, { limit: 10, recipient: 'nobody@example.com' })).toStrictEqual([]);
      expect(await store.listMessages(projectId, { limit: 10, recipient: ana, status: 'bounced' })).toStrictEqual(
        toAna.filter((record) => record.facts === Fact.hard_bounced),
      );
      expect(await store.listMessages(projectId, { limit: 10, recipient: bo, trackingId: 'promo' })).toStrictEqual(
        newestFirst.filter((record) => record.recipient === bo),
      );
      expect(await store.listMessages(projectId, { limit: 10, recipient: bo, trackingId: 'other' })).toStrictEqual([]);
      expect(await walkMessages(store, projectId, { limit: 1, recipient: ana })).toStrictEqual(toAna);
    });

    test('listMessages filters by provider', async ({ store, projectId }) => {
      // Each provider twice (messageIdentities takes them in turn, then sorts by key).
      const records = messageIdentities(2 * providers.length).map((identity, index) => message(identity, Fact.delivered, at(index % 4)));
      await store.applyEvents(
        projectId,
        records.map((record) => storedEvent({ message: record })),
      );
      const all = await store.listMessages(projectId, { limit: 100 });
      for (const provider of new Set(records.map((record) => record.provider))) {
        const expected = all.filter((record) => record.provider === provider);
        expect(expected).toHaveLength(2);
        expect(await store.listMessages(projectId, { limit: 10, provider })).toStrictEqual(expected);
        expect(await walkMessages(store, projectId, { limit: 1, provider })).toStrictEqual(expected);
      }
    });

    test('listMessages filters by stream, exactly, with every other filter', async ({ store, projectId }) => {
      // Nine messages: in turn in 'marketing', in 'market' and in none; the filter is exact, not a prefix.
      const streams = ['marketing', 'market', null] as const;
      const records = messageIdentities(9).map((identity, index) =>
        message(identity, index < 5 ? Fact.delivered : Fact.hard_bounced, at(index), index < 6 ? 'promo' : null, streams[index % 3]!),
      );
      await store.applyEvents(
        projectId,
        records.map((record) => storedEvent({ message: record })),
      );
      const newestFirst = [...records].sort((a, b) => b.firstEventAt - a.firstEventAt);
      const inMarketing = newestFirst.filter((record) => record.stream === 'marketing');
      expect(inMarketing).toHaveLength(3);
      expect(await store.listMessages(projectId, { limit: 10, stream: 'marketing' })).toStrictEqual(inMarketing);
      expect(await store.listMessages(projectId, { limit: 10, stream: 'market' })).toStrictEqual(
        newestFirst.filter((record) => record.stream === 'market'),
      );
      expect(await store.listMessages(projectId, { limit: 10, stream: 'marketin' })).toStrictEqual([]);
      expect(await store.listMessages(projectId, { limit: 10, stream: 'marketing', status: 'bounced' })).toStrictEqual(
        inMarketing.filter((record) => record.facts === Fact.hard_bounced),
      );
      expect(await store.listMessages(projectId, { limit: 10, stream: 'marketing', trackingId: 'promo' })).toStrictEqual(
        inMarketing.filter((record) => record.trackingId === 'promo'),
      );
      expect(await walkMessages(store, projectId, { limit: 1, stream: 'marketing' })).toStrictEqual(inMarketing);
      expect(await walkMessages(store, projectId, { limit: 1, stream: 'marketing', trackingId: 'promo' })).toStrictEqual(
        inMarketing.filter((record) => record.trackingId === 'promo'),
      );
    });

    test('listMessages filters by the time of the last event: from inclusive, to exclusive', async ({ store, projectId }) => {
      const [early, late, moved] = messageIdentities(3);
      const earlyMessage = message(early, Fact.delivered, at(10));
      const lateMessage = message(late, Fact.delivered, at(20));
      // First seen at 5, last at 30: listed by its first event, filtered by its last.
      const movedMessage = { ...message(moved, Fact.sent, at(5)), facts: Fact.sent | Fact.delivered, lastEventAt: at(30) };
      await store.applyEvents(projectId, [
        storedEvent({ message: earlyMessage }),
        storedEvent({ message: lateMessage }),
        storedEvent({ message: message(moved, Fact.sent, at(5)) }),
        storedEvent({ message: message(moved, Fact.delivered, at(30)) }),
      ]);
      const list = (range: { from?: number; to?: number }) => store.listMessages(projectId, { limit: 10, ...range });
      expect(await list({ from: at(10) })).toStrictEqual([lateMessage, earlyMessage, movedMessage]);
      expect(await list({ from: at(11) })).toStrictEqual([lateMessage, movedMessage]);
      expect(await list({ to: at(20) })).toStrictEqual([earlyMessage]);
      expect(await list({ to: at(21) })).toStrictEqual([lateMessage, earlyMessage]);
      expect(await list({ from: at(10), to: at(30) })).toStrictEqual([lateMessage, earlyMessage]);
      expect(await list({ from: at(30), to: at(31) })).toStrictEqual([movedMessage]);
      // Its first event is in this range, its last is not.
      expect(await list({ from: at(0), to: at(6) })).toStrictEqual([]);
      expect(await list({ from: at(31) })).toStrictEqual([]);
      expect(await store.listMessages(projectId, { limit: 1, from: at(10), after: messagePositionOf(lateMessage) })).toStrictEqual([
        earlyMessage,
      ]);
      expect(await walkMessages(store, projectId, { limit: 1, from: at(10), to: at(31), provider: moved.provider })).toStrictEqual([
        movedMessage,
      ]);
    });

    test('a filtered walk skips any number of messages that do not match, and repeats none', async ({ store, projectId }) => {
      // Matches spread among many messages that do not match: a store that reads a bounded number of
      // entries per call must resume where it stopped, not end the page early or start over.
      const target = `target-${projectId}@example.com`;
      const identities = messageIdentities(60);
      const records = identities.map((identity, index) =>
        message(index % 13 === 0 ? { ...identity, recipient: target } : identity, Fact.delivered, at(index)),
      );
      await store.applyEvents(
        projectId,
        records.map((record) => storedEvent({ message: record })),
      );
      const expected = records.filter((record) => record.recipient === target).reverse();
      expect(expected).toHaveLength(5);
      for (const limit of [1, 2, 5, 50]) {
        expect(await walkMessages(store, projectId, { limit, recipient: target })).toStrictEqual(expected);
        expect(await walkMessages(store, projectId, { limit, recipient: target, to: at(40) })).toStrictEqual(
          expected.filter((record) => record.lastEventAt < at(40)),
        );
      }
    });

    test('listMessages filters by the start of the recipient and by its domain, exactly, with every other filter', async ({
      store,
      projectId,
    }) => {
      // Pattern characters in addresses (`_` and `%` are atext), an IDNA domain, and a subdomain.
      const recipients = [
        `a_b%c-${projectId}@example.com`,
        `axbyc-${projectId}@example.com`,
        `a_b%c-${projectId}@mail.example.com`,
        `fé-${projectId}@xn--exmple-cua.com`,
        `ana-${projectId}@example.org`,
        `a\\b-${projectId}@example.com`,
      ];
      const identities = messageIdentities(6).map((identity, index) => ({ ...identity, recipient: recipients[index]! }));
      const records = identities.map((identity, index) =>
        message(identity, index < 3 ? Fact.delivered : Fact.hard_bounced, at(index), 'promo'),
      );
      await store.applyEvents(
        projectId,
        records.map((record) => storedEvent({ message: record })),
      );
      const newestFirst = [...records].reverse();
      const expectPrefix = async (recipientPrefix: string) =>
        expect(await walkMessages(store, projectId, { limit: 1, recipientPrefix }), recipientPrefix).toStrictEqual(
          newestFirst.filter((record) => record.recipient.startsWith(recipientPrefix)),
        );
      const expectDomain = async (recipientDomain: string) =>
        expect(await walkMessages(store, projectId, { limit: 2, recipientDomain }), recipientDomain).toStrictEqual(
          newestFirst.filter((record) => record.recipient.endsWith(`@${recipientDomain}`)),
        );

      for (const prefix of [
        'a_b%c',
        'a_',
        'a_b%c-',
        `a_b%c-${projectId}@`,
        `a_b%c-${projectId}@example.com`,
        'fé',
        `fé-${projectId}@xn--`,
        'a\\',
        '',
      ]) {
        await expectPrefix(prefix);
      }
      // Nothing starts with these, and a pattern passed on unescaped would find something.
      for (const prefix of ['a%', '_', '%', 'a.b', 'A_B%C', 'a\\b%', `a_b%c-${projectId}@example.com.`]) {
        expect(await store.listMessages(projectId, { limit: 10, recipientPrefix: prefix }), prefix).toStrictEqual([]);
      }
      expect(await walkMessages(store, projectId, { limit: 1, recipientPrefix: 'a', status: 'bounced' })).toStrictEqual([
        records[5],
        records[4],
      ]);
      expect(await store.listMessages(projectId, { limit: 10, recipientPrefix: 'a', trackingId: 'other' })).toStrictEqual([]);
      expect(await store.listMessages(projectId, { limit: 10, recipientPrefix: 'a', recipient: recipients[1]! })).toStrictEqual([
        records[1],
      ]);

      for (const domain of ['example.com', 'mail.example.com', 'xn--exmple-cua.com', 'example.org']) await expectDomain(domain);
      for (const domain of ['EXAMPLE.COM', 'example', 'xample.com', 'com', 'exämple.com', '', '%']) {
        expect(await store.listMessages(projectId, { limit: 10, recipientDomain: domain }), domain).toStrictEqual([]);
      }
      expect(await store.listMessages(projectId, { limit: 10, recipientDomain: 'example.com', recipientPrefix: 'a_' })).toStrictEqual([
        records[0],
      ]);
      expect(
        await store.listMessages(projectId, { limit: 10, recipientDomain: 'example.com', provider: records[1]!.provider }),
      ).toStrictEqual([records[1]]);
      expect(
        await store.listMessages(projectId, {
          limit: 10,
          recipientDomain: 'example.com',
          from: at(1),
          to: at(5),
          after: messagePositionOf(records[1]!),
        }),
      ).toStrictEqual([]);
      expect(
        await store.listMessages(projectId, { limit: 10, recipientDomain: 'example.com', after: messagePositionOf(records[1]!) }),
      ).toStrictEqual([records[0]]);
    });

    test('listSuppressions filters by the start of the address, exactly, with every other filter', async ({ store, projectId }) => {
      const [a, b, c, d] = addresses(4);
      const named = [
        { ...a, email: `a_b%c-${projectId}@example.com` },
        { ...b, email: `axbyc-${projectId}@example.com` },
        { ...c, email: `fé-${projectId}@xn--exmple-cua.com` },
        { ...d, email: `a_b%c-${projectId}@example.org` },
      ];
      const records = [
        suppression(named[0]!, 'manual', at(1)),
        suppression(named[1]!, 'hard_bounce', at(2)),
        suppression(named[2]!, 'complaint', at(3)),
        suppression(named[3]!, 'hard_bounce', at(4)),
      ];
      for (const record of records) await store.addSuppression(projectId, record);
      const newestFirst = [...records].reverse();
      for (const prefix of [
        'a',
        'a_',
        'a_b%c-',
        `a_b%c-${projectId}@example.`,
        `a_b%c-${projectId}@example.org`,
        'fé-',
        `fé-${projectId}@xn--exmple-cua.com`,
        '',
      ]) {
        const expected = newestFirst.filter((record) => record.email.startsWith(prefix));
        expect(await walkSuppressions(store, projectId, { limit: 1, emailPrefix: prefix }), prefix).toStrictEqual(expected);
      }
      for (const prefix of ['a%', '_', '%', 'A_', 'fe', `a_b%c-${projectId}@example.org.`]) {
        expect(await store.listSuppressions(projectId, { limit: 10, emailPrefix: prefix }), prefix).toStrictEqual([]);
      }
      expect(await store.listSuppressions(projectId, { limit: 10, emailPrefix: 'a', reason: 'hard_bounce' })).toStrictEqual([
        records[3],
        records[1],
      ]);
      expect(await store.listSuppressions(projectId, { limit: 10, emailPrefix: 'a_', from: at(2), to: at(4) })).toStrictEqual([]);
      expect(await store.listSuppressions(projectId, { limit: 10, emailPrefix: 'a_', to: at(4) })).toStrictEqual([records[0]]);
      expect(
        await store.listSuppressions(projectId, { limit: 10, emailPrefix: 'a', after: suppressionPositionOf(records[3]!) }),
      ).toStrictEqual([records[1], records[0]]);
    });

    test('a partial search skips any number of entries that do not match, and repeats none', async ({ store, projectId }) => {
      // As for the recipient: a store that reads a bounded number of entries per call must resume.
      const identities = messageIdentities(60).map((identity, index) =>
        index % 13 === 0 ? { ...identity, recipient: `needle-${index}-${projectId}@needle.example` } : identity,
      );
      const records = identities.map((identity, index) => message(identity, Fact.delivered, at(index)));
      await store.applyEvents(
        projectId,
        records.map((record) => storedEvent({ message: record })),
      );
      const expected = records.filter((record) => record.recipient.startsWith('needle-')).reverse();
      expect(expected).toHaveLength(5);
      const needles = addresses(60).map((address, index) => ({
        ...address,
        email: index % 13 === 0 ? `needle-${address.email}` : address.email,
      }));
      for (const [index, address] of needles.entries()) await store.addSuppression(projectId, suppression(address, 'manual', at(index)));
      const expectedSuppressions = needles
        .map((address, index) => suppression(address, 'manual', at(index)))
        .filter((record) => record.email.startsWith('needle-'))
        .reverse();
      for (const limit of [1, 2, 5, 50]) {
        expect(await walkMessages(store, projectId, { limit, recipientPrefix: 'needle-' })).toStrictEqual(expected);
        expect(await walkMessages(store, projectId, { limit, recipientDomain: 'needle.example' })).toStrictEqual(expected);
        expect(await walkSuppressions(store, projectId, { limit, emailPrefix: 'needle-' })).toStrictEqual(expectedSuppressions);
      }
    });

    test('listSuppressions filters by reason and by a time range of createdAt (from inclusive, to exclusive)', async ({
      store,
      projectId,
    }) => {
      const [a, b, c, d, e] = addresses(5);
      const records = [
        suppression(a, 'manual', at(1)),
        suppression(b, 'hard_bounce', at(2)),
        suppression(c, 'complaint', at(2)),
        suppression(d, 'hard_bounce', at(3)),
        suppression(e, 'manual', at(4)),
      ];
      for (const record of records) await store.addSuppression(projectId, record);
      const newestFirst = [records[4], records[3], records[1], records[2], records[0]];
      const list = (query: Omit<SuppressionQuery, 'limit'>) => store.listSuppressions(projectId, { limit: 10, ...query });

      expect(await list({ reason: 'hard_bounce' })).toStrictEqual([records[3], records[1]]);
      expect(await list({ reason: 'complaint' })).toStrictEqual([records[2]]);
      expect(await list({ reason: 'manual' })).toStrictEqual([records[4], records[0]]);
      expect(await list({ from: at(2) })).toStrictEqual(newestFirst.slice(0, 4));
      expect(await list({ to: at(2) })).toStrictEqual([records[0]]);
      expect(await list({ from: at(2), to: at(4) })).toStrictEqual(newestFirst.slice(1, 4));
      expect(await list({ from: at(2), to: at(3), reason: 'hard_bounce' })).toStrictEqual([records[1]]);
      expect(await list({ from: at(5) })).toStrictEqual([]);
      expect(await list({ from: at(2), after: suppressionPositionOf(records[1]!) })).toStrictEqual([records[2]]);
      expect(await walkSuppressions(store, projectId, { limit: 1, from: at(2), to: at(4) })).toStrictEqual(newestFirst.slice(1, 4));

      // An event upgrades a's reason and moves its createdAt earlier: it leaves one listing for another.
      await store.applyEvents(projectId, [storedEvent({ suppression: suppression(a, 'complaint', at(0)) })]);
      const upgraded = suppression(a, 'complaint', at(0));
      expect(await list({ reason: 'manual' })).toStrictEqual([records[4]]);
      expect(await list({ reason: 'complaint' })).toStrictEqual([records[2], upgraded]);
      expect(await list({ to: at(1) })).toStrictEqual([upgraded]);
    });

    test('a walk of any filtered listing, with any page size, is the model’s filtered list', async () => {
      const store = await options.createStore({});
      try {
        const filtersOf = <Q extends { after?: unknown }>({ after: _ignored, ...filters }: Q) => filters;
        await fc.assert(
          fc.asyncProperty(
            fc.array(arbitrary.eventBatch, { minLength: 2, maxLength: 6 }),
            fc.array(arbitrary.suppression, { maxLength: 6 }),
            fc.array(arbitrary.messageFilters, { minLength: 1, maxLength: 4 }),
            fc.array(arbitrary.suppressionQuery, { minLength: 1, maxLength: 3 }),
            async (batches, added, messageQueries, suppressionQueries) => {
              const projectId = randomProjectId();
              const model = createStoreModel();
              for (const target of [model, store]) {
                for (const record of added) await target.addSuppression(projectId, record);
                for (const batch of batches) await target.applyEvents(projectId, batch);
              }
              for (const filters of messageQueries) {
                const expected = await model.listMessages(projectId, { ...filters, limit: 1000 });
                expect(await walkMessages(store, projectId, filters)).toStrictEqual(expected);
              }
              for (const query of suppressionQueries) {
                const filters = filtersOf(query);
                const expected = await model.listSuppressions(projectId, { ...filters, limit: 1000 });
                expect(await walkSuppressions(store, projectId, filters)).toStrictEqual(expected);
              }
            },
          ),
          { numRuns: options.numRuns ?? 50 },
        );
      } finally {
        await store.close();
      }
    });
  });
}
