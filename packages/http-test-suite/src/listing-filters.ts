import type { Message, Suppression } from '@mailwarden/core';
import {
  listMessagesResponseSchema,
  listSuppressionsResponseSchema,
  messageDetailSchema,
  suppressionSchema,
} from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { expectError, expectSuccess, type Schema } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import { TRACKING_ID, mailgunDelivered, postmarkRecord, sendgridEvents, sesBounce } from './provider-requests.js';
import type { TestApp } from './test-app.js';

/** Four providers' webhooks to acme: 7 messages at four times, to six recipients (bo twice). */
async function seed(app: TestApp): Promise<void> {
  const secrets = app.secrets.acme;
  const requests = [
    ['sendgrid', sendgridEvents(secrets, ['ana@example.com', 'bo@example.com', 'cy@example.com'], 'delivered', 'spring-sale')],
    ['ses', sesBounce(secrets, ['dee@example.org', 'bo@example.com'], TRACKING_ID)],
    ['postmark', postmarkRecord(secrets, 'fay@example.net', 'Delivery', null)],
    ['mailgun', mailgunDelivered(secrets, 'gus@example.com', 'spring-sale')],
  ] as const;
  for (const [provider, request] of requests) {
    const answer = await app.webhook(provider, app.projects.acme, request);
    expect(answer.status, `${provider}: ${answer.text}`).toBe(200);
  }
}

const messagesPath = (app: TestApp, query: Record<string, string>) =>
  `/projects/${app.projects.acme}/messages?${new URLSearchParams(query)}`;
const suppressionsPath = (app: TestApp, query: Record<string, string>) =>
  `/projects/${app.projects.acme}/suppressions?${new URLSearchParams(query)}`;

/** Every page of a listing with these query parameters, joined; each page checked against its schema. */
async function walk<Item>(
  app: TestApp,
  path: (app: TestApp, query: Record<string, string>) => string,
  schema: Schema<{ items: Item[]; next_cursor: string | null; count: number }>,
  query: Record<string, string>,
): Promise<Item[]> {
  const items: Item[] = [];
  let cursor: string | null | undefined;
  for (let pages = 0; cursor !== null; pages++) {
    if (pages > 100) throw new Error('the walk does not end');
    const page = expectSuccess(await app.api('GET', path(app, { ...query, ...(cursor == null ? {} : { cursor }) })), 200, schema);
    expect(page.count).toBe(page.items.length);
    items.push(...page.items);
    cursor = page.next_cursor;
  }
  return items;
}

const walkMessages = (app: TestApp, query: Record<string, string>): Promise<Message[]> =>
  walk(app, messagesPath, listMessagesResponseSchema, query);
const walkSuppressions = (app: TestApp, query: Record<string, string>): Promise<Suppression[]> =>
  walk(app, suppressionsPath, listSuppressionsResponseSchema, query);

export function describeListingFilterTests(open: OpenApp): void {
  describe('listing filters', () => {
    test('messages filter by recipient (normalized), provider and last event (from inclusive, to exclusive), combined and paged', async () => {
      const app = await open();
      await seed(app);
      const all = await walkMessages(app, {});
      expect(all).toHaveLength(7);

      const bo = all.filter((message) => message.recipient === 'bo@example.com');
      expect(bo).toHaveLength(2);
      expect(await walkMessages(app, { recipient: 'Bo@EXAMPLE.com' })).toEqual(bo);
      expect(await walkMessages(app, { recipient: 'bo@example.com', limit: '1' })).toEqual(bo);
      expect(await walkMessages(app, { recipient: 'bo@example.com', provider: 'ses' })).toEqual(
        bo.filter((message) => message.provider === 'ses'),
      );
      expect(await walkMessages(app, { recipient: 'nobody@example.com' })).toEqual([]);
      expect(await walkMessages(app, { recipient: '' })).toEqual(all);

      for (const provider of ['sendgrid', 'ses', 'postmark', 'mailgun', 'sparkpost']) {
        expect(await walkMessages(app, { provider, limit: '1' })).toEqual(all.filter((message) => message.provider === provider));
      }

      // Every last-event time of the seed as a bound, alone and with the others.
      const times = [...new Set(all.map((message) => message.lastEventAt))].sort();
      expect(times.length).toBeGreaterThan(2);
      for (const from of times) {
        expect(await walkMessages(app, { from, limit: '2' })).toEqual(all.filter((message) => message.lastEventAt >= from));
        expect(await walkMessages(app, { to: from, limit: '2' })).toEqual(all.filter((message) => message.lastEventAt < from));
        for (const to of times.filter((time) => time > from)) {
          const expected = all.filter(
            (message) => message.lastEventAt >= from && message.lastEventAt < to && message.trackingId === 'spring-sale',
          );
          expect(await walkMessages(app, { from, to, trackingId: 'spring-sale', status: 'delivered', limit: '1' })).toEqual(expected);
        }
      }
    });

    test('messages refuse a bad recipient (invalid_email), provider, time or range (invalid_request); a cursor is bound to every filter', async () => {
      const app = await open();
      await seed(app);
      expectError(await app.api('GET', messagesPath(app, { recipient: 'not-an-address' })), 400, 'invalid_email');
      const malformed: Record<string, string>[] = [
        { provider: 'pigeon' },
        { provider: '' },
        { from: 'yesterday' },
        { from: '2026-11-01T00:00:00' },
        { to: '2026-02-30' },
        { to: '2026-11-01T00:00:00.0001Z' },
        { from: '2026-11-02', to: '2026-11-01' },
        { from: '2026-11-01', to: '2026-11-01T00:00:00Z' },
      ];
      for (const query of malformed) {
        expectError(await app.api('GET', messagesPath(app, query)), 400, 'invalid_request');
      }

      const query = { recipient: 'bo@example.com', from: '2000-01-01', to: '2100-01-01', limit: '1' };
      const first = expectSuccess(await app.api('GET', messagesPath(app, query)), 200, listMessagesResponseSchema);
      const cursor = first.next_cursor!;
      expect(cursor).toEqual(expect.any(String));
      // The same filters written otherwise continue it.
      const same = { ...query, recipient: 'BO@example.com', from: '2000-01-01T01:00:00+01:00', cursor };
      expect(expectSuccess(await app.api('GET', messagesPath(app, same)), 200, listMessagesResponseSchema).count).toBe(1);
      const others: Record<string, string>[] = [
        { recipient: 'ana@example.com' },
        { provider: 'ses' },
        { from: '2000-01-02' },
        { to: '2099-01-01' },
      ];
      for (const other of others) {
        expectError(await app.api('GET', messagesPath(app, { ...query, ...other, cursor })), 400, 'invalid_cursor');
      }
      const { recipient: _recipient, ...withoutRecipient } = query;
      expectError(await app.api('GET', messagesPath(app, { ...withoutRecipient, cursor })), 400, 'invalid_cursor');
    });

    test('messages filter by stream, exactly; answers carry "stream" only when the message has one; a cursor is bound to it', async () => {
      const app = await open();
      await seed(app);
      // Three messages sent in streams, recorded as any event (the providers' carriers have tests of their own).
      const sent = (recipient: string, stream: string, minutes: number) => ({
        provider: 'sendgrid' as const,
        type: 'delivered' as const,
        messageId: `stream-${recipient}`,
        recipient,
        trackingId: null,
        stream,
        occurredAt: new Date(Date.now() - minutes * 60_000),
        eventKey: `stream-${recipient}`,
      });
      const applied = await app.mailwarden.applyEvents(app.projects.acme, [
        sent('hal@example.com', 'weekly-digest', 3),
        sent('ivy@example.com', 'weekly-digest', 2),
        sent('jo@example.com', 'receipts', 1),
      ]);
      expect(applied.accepted).toBe(3);
      const all = await walkMessages(app, {});
      expect(all).toHaveLength(10);
      // The seven without a stream answer as before: no "stream" key at all.
      expect(all.filter((message) => !('stream' in message))).toHaveLength(7);
      const digests = all.filter((message) => message.stream === 'weekly-digest');
      expect(digests.map((message) => message.recipient).sort()).toEqual(['hal@example.com', 'ivy@example.com']);
      expect(await walkMessages(app, { stream: 'weekly-digest', limit: '1' })).toEqual(digests);
      expect(await walkMessages(app, { stream: 'receipts' })).toEqual(all.filter((message) => message.stream === 'receipts'));
      expect(await walkMessages(app, { stream: 'weekly' })).toEqual([]);
      expect(await walkMessages(app, { stream: 'weekly-digest', recipient: 'ivy@example.com' })).toEqual(
        digests.filter((message) => message.recipient === 'ivy@example.com'),
      );
      expect(await walkMessages(app, { stream: 'weekly-digest', provider: 'ses' })).toEqual([]);
      expect(await walkMessages(app, { stream: '' })).toEqual(all);

      const detail = async (id: string) =>
        expectSuccess(await app.api('GET', `/projects/${app.projects.acme}/messages/${id}`), 200, messageDetailSchema);
      expect((await detail(digests[0]!.id)).stream).toBe('weekly-digest');
      expect('stream' in (await detail(all.find((message) => !('stream' in message))!.id))).toBe(false);

      for (const stream of ['Weekly-Digest', '-digest', '_digest', 'a'.repeat(65), 'weekly digest', 'é']) {
        expectError(await app.api('GET', messagesPath(app, { stream })), 400, 'invalid_stream');
      }
      const first = expectSuccess(
        await app.api('GET', messagesPath(app, { stream: 'weekly-digest', limit: '1' })),
        200,
        listMessagesResponseSchema,
      );
      const cursor = first.next_cursor!;
      expect(cursor).toEqual(expect.any(String));
      expect(
        expectSuccess(
          await app.api('GET', messagesPath(app, { stream: 'weekly-digest', limit: '1', cursor })),
          200,
          listMessagesResponseSchema,
        ).items,
      ).toEqual(digests.slice(1));
      for (const other of [{}, { stream: 'receipts' }] as Record<string, string>[]) {
        expectError(await app.api('GET', messagesPath(app, { limit: '1', ...other, cursor })), 400, 'invalid_cursor');
      }
    });

    test('messages by the start of the recipient or its domain: any text is a search, compared as stored, combined and paged', async () => {
      const app = await open();
      await seed(app);
      const all = await walkMessages(app, {});
      const startingWith = (prefix: string) => all.filter((message) => message.recipient.startsWith(prefix));
      // Partial input, in any case and white space, is a search (issue 21: it was a 400 `invalid_email`).
      for (const [typed, prefix] of [
        ['bo', 'bo'],
        [' BO@Ex ', 'bo@ex'],
        ['d', 'd'],
        ['a', 'a'],
        ['bo@example.com', 'bo@example.com'],
        ['zz', 'zz'],
        ['%', '%'],
        ['_', '_'],
      ]) {
        expect(await walkMessages(app, { recipientPrefix: typed!, limit: '1' }), typed).toEqual(startingWith(prefix!));
      }
      expect(startingWith('bo')).toHaveLength(2);
      expect(await walkMessages(app, { recipientPrefix: '' })).toEqual(all);
      expect(await walkMessages(app, { recipientPrefix: 'bo', provider: 'ses' })).toEqual(
        startingWith('bo').filter((message) => message.provider === 'ses'),
      );
      expect(await walkMessages(app, { recipientPrefix: 'bo', recipient: 'bo@example.com', status: 'bounced' })).toEqual(
        startingWith('bo').filter((message) => message.status === 'bounced'),
      );

      const inDomain = (domain: string) => all.filter((message) => message.recipient.endsWith(`@${domain}`));
      expect(inDomain('example.com')).toHaveLength(5);
      for (const [typed, domain] of [
        ['example.com', 'example.com'],
        ['@Example.COM', 'example.com'],
        ['example.org.', 'example.org'],
        ['example', 'example'],
        ['ample.com', 'ample.com'],
      ]) {
        expect(await walkMessages(app, { recipientDomain: typed!, limit: '2' }), typed).toEqual(inDomain(domain!));
      }
      expect(await walkMessages(app, { recipientDomain: '@' })).toEqual(all);
      expect(await walkMessages(app, { recipientDomain: 'example.com', recipientPrefix: 'b', limit: '1' })).toEqual(
        startingWith('bo@example.com'),
      );
      expect(await walkMessages(app, { recipientDomain: 'example.com', trackingId: 'spring-sale', limit: '1' })).toEqual(
        inDomain('example.com').filter((message) => message.trackingId === 'spring-sale'),
      );

      // A cursor carries the search as normalized: the same search written otherwise continues it.
      const first = expectSuccess(
        await app.api('GET', messagesPath(app, { recipientDomain: 'example.com', limit: '1' })),
        200,
        listMessagesResponseSchema,
      );
      const cursor = first.next_cursor!;
      expect(
        expectSuccess(
          await app.api('GET', messagesPath(app, { recipientDomain: '@EXAMPLE.com', limit: '10', cursor })),
          200,
          listMessagesResponseSchema,
        ).count,
      ).toBe(4);
      const others: Record<string, string>[] = [
        {},
        { recipientDomain: 'example.org' },
        { recipientDomain: 'example.com', recipientPrefix: 'b' },
      ];
      for (const other of others) {
        expectError(await app.api('GET', messagesPath(app, { limit: '10', ...other, cursor })), 400, 'invalid_cursor');
      }
    });

    test('a partial search is a 400 invalid_request only for text no search can use: over 254 characters, NUL, a lone surrogate', async () => {
      const app = await open();
      await seed(app);
      for (const name of ['recipientPrefix', 'recipientDomain']) {
        expect(
          expectSuccess(await app.api('GET', messagesPath(app, { [name]: 'x'.repeat(254) })), 200, listMessagesResponseSchema).count,
        ).toBe(0);
        for (const value of ['x'.repeat(255), 'a\u0000']) {
          const error = expectError(await app.api('GET', messagesPath(app, { [name]: value })), 400, 'invalid_request');
          expect(error.message).toContain(name);
        }
        // A lone surrogate, percent-encoded as its CESU bytes: decoded leniently to U+FFFD, a search like any other.
        expect((await app.api('GET', `${messagesPath(app, {})}&${name}=%ED%A0%80`)).status).toBe(200);
      }
      expect(
        expectSuccess(await app.api('GET', suppressionsPath(app, { emailPrefix: 'x'.repeat(254) })), 200, listSuppressionsResponseSchema)
          .count,
      ).toBe(0);
      const error = expectError(await app.api('GET', suppressionsPath(app, { emailPrefix: 'x'.repeat(255) })), 400, 'invalid_request');
      expect(error.message).toContain('emailPrefix');
      expectError(await app.api('GET', suppressionsPath(app, { emailPrefix: '\u0000' })), 400, 'invalid_request');
    });

    test('suppressions by the start of the address, compared as stored, combined and paged', async () => {
      const app = await open();
      for (const email of ['Ana@Example.com', 'bo@example.com', 'bob@example.org']) {
        app.clock.advance(1000);
        expectSuccess(await app.api('POST', `/projects/${app.projects.acme}/suppressions`, { json: { email } }), 201, suppressionSchema);
      }
      await seed(app);
      const all = await walkSuppressions(app, {});
      const startingWith = (prefix: string) => all.filter((item) => item.email.startsWith(prefix));
      for (const [typed, prefix] of [
        ['BO', 'bo'],
        [' bo@ ', 'bo@'],
        ['ana', 'ana'],
        ['d', 'd'],
        ['bob@example.org', 'bob@example.org'],
        ['%', '%'],
        ['', ''],
      ]) {
        expect(await walkSuppressions(app, { emailPrefix: typed!, limit: '1' }), typed).toEqual(startingWith(prefix!));
      }
      expect(startingWith('bo')).toHaveLength(2);
      expect(await walkSuppressions(app, { emailPrefix: 'bo', reason: 'manual' })).toEqual(
        startingWith('bo').filter((item) => item.reason === 'manual'),
      );
      const first = expectSuccess(
        await app.api('GET', suppressionsPath(app, { emailPrefix: 'bo', limit: '1' })),
        200,
        listSuppressionsResponseSchema,
      );
      const cursor = first.next_cursor!;
      expect(
        expectSuccess(await app.api('GET', suppressionsPath(app, { emailPrefix: 'BO', cursor })), 200, listSuppressionsResponseSchema)
          .items,
      ).toEqual(startingWith('bo').slice(1));
      expectError(await app.api('GET', suppressionsPath(app, { cursor })), 400, 'invalid_cursor');
      expectError(await app.api('GET', suppressionsPath(app, { emailPrefix: 'b', cursor })), 400, 'invalid_cursor');
    });

    test('suppressions filter by reason and created_at (from inclusive, to exclusive), combined and paged; bad values are 400', async () => {
      const app = await open();
      for (const email of ['ana@example.com', 'bo@example.com', 'cy@example.com']) {
        app.clock.advance(1000);
        expectSuccess(await app.api('POST', `/projects/${app.projects.acme}/suppressions`, { json: { email } }), 201, suppressionSchema);
      }
      // The seed's bounces suppress dee and bo (upgrading bo's manual suppression) by their events' times.
      await seed(app);
      const all = await walkSuppressions(app, {});
      expect(all).toHaveLength(4);
      expect(new Set(all.map((item) => item.reason)).size).toBeGreaterThan(1);

      for (const reason of ['manual', 'hard_bounce', 'complaint']) {
        expect(await walkSuppressions(app, { reason, limit: '1' })).toEqual(all.filter((item) => item.reason === reason));
      }
      const times = [...new Set(all.map((item) => item.created_at))].sort();
      for (const from of times) {
        expect(await walkSuppressions(app, { from, limit: '1' })).toEqual(all.filter((item) => item.created_at >= from));
        expect(await walkSuppressions(app, { to: from, reason: 'manual' })).toEqual(
          all.filter((item) => item.created_at < from && item.reason === 'manual'),
        );
      }

      const malformed: Record<string, string>[] = [
        { reason: 'bored' },
        { from: 'soon' },
        { to: '2026-13-01' },
        { from: times[1]!, to: times[0]! },
      ];
      for (const query of malformed) {
        expectError(await app.api('GET', suppressionsPath(app, query)), 400, 'invalid_request');
      }
      const page = expectSuccess(
        await app.api('GET', suppressionsPath(app, { reason: 'manual', limit: '1' })),
        200,
        listSuppressionsResponseSchema,
      );
      const cursor = page.next_cursor!;
      const manual = all.filter((item) => item.reason === 'manual');
      expect(
        expectSuccess(await app.api('GET', suppressionsPath(app, { reason: 'manual', cursor })), 200, listSuppressionsResponseSchema).items,
      ).toEqual(manual.slice(1));
      expectError(await app.api('GET', suppressionsPath(app, { cursor })), 400, 'invalid_cursor');
      expectError(await app.api('GET', suppressionsPath(app, { reason: 'hard_bounce', cursor })), 400, 'invalid_cursor');
      expectError(await app.api('GET', suppressionsPath(app, { reason: 'manual', from: times[0]!, cursor })), 400, 'invalid_cursor');
    });
  });
}
