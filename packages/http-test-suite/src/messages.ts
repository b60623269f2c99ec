import type { Message, MessagePage, TrackingIdPage } from '@mailwarden/core';
import { listMessagesResponseSchema, listTrackingIdsResponseSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { TIMESTAMP, expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import { TRACKING_ID, mailgunDelivered, postmarkRecord, sendgridEvents, sesBounce } from './provider-requests.js';
import type { TestApp } from './test-app.js';

const SALE = 'spring-sale';
/** Differs from SALE only in case: a tracking ID is taken exactly as the sender set it. */
const SALE_CAPITALIZED = 'Spring-Sale';

/** Posts four providers' webhooks to acme: 7 messages under three tracking IDs and none. */
async function seed(app: TestApp): Promise<void> {
  const secrets = app.secrets.acme;
  const requests = [
    ['sendgrid', sendgridEvents(secrets, ['ana@example.com', 'bo@example.com', 'cy@example.com'], 'delivered', SALE)],
    ['ses', sesBounce(secrets, ['dee@example.org', 'eve@example.org'], TRACKING_ID)],
    ['postmark', postmarkRecord(secrets, 'fay@example.net', 'Delivery', null)],
    ['mailgun', mailgunDelivered(secrets, 'gus@example.com', SALE_CAPITALIZED)],
  ] as const;
  for (const [provider, request] of requests) {
    const answer = await app.webhook(provider, app.projects.acme, request);
    expect(answer.status, `${provider}: ${answer.text}`).toBe(200);
  }
}

const seeded = [
  'ana@example.com delivered spring-sale',
  'bo@example.com delivered spring-sale',
  'cy@example.com delivered spring-sale',
  `dee@example.org bounced ${TRACKING_ID}`,
  `eve@example.org bounced ${TRACKING_ID}`,
  'fay@example.net delivered null',
  'gus@example.com delivered Spring-Sale',
];

const summary = (message: Message) => `${message.recipient} ${message.status} ${message.trackingId}`;

async function listMessages(app: TestApp, query: Record<string, string> = {}): Promise<MessagePage> {
  const answer = await app.api('GET', `/projects/${app.projects.acme}/messages?${new URLSearchParams(query)}`);
  const page = expectSuccess(answer, 200, listMessagesResponseSchema);
  expect(page.count).toBe(page.items.length);
  return page;
}

async function walkMessages(app: TestApp, query: Record<string, string>): Promise<MessagePage[]> {
  const pages: MessagePage[] = [];
  let cursor: string | null | undefined;
  do {
    pages.push(await listMessages(app, { ...query, ...(cursor == null ? {} : { cursor }) }));
    cursor = pages.at(-1)!.next_cursor;
  } while (cursor !== null && pages.length < 100);
  return pages;
}

async function listTrackingIds(app: TestApp, query: Record<string, string> = {}): Promise<TrackingIdPage> {
  const answer = await app.api('GET', `/projects/${app.projects.acme}/tracking-ids?${new URLSearchParams(query)}`);
  const page = expectSuccess(answer, 200, listTrackingIdsResponseSchema);
  expect(page.count).toBe(page.items.length);
  return page;
}

function expectNewestFirst(items: readonly Message[]): void {
  for (let i = 1; i < items.length; i++) expect(items[i - 1]!.firstEventAt >= items[i]!.firstEventAt).toBe(true);
}

export function describeMessageTests(open: OpenApp): void {
  describe('messages and tracking IDs', () => {
    test('messages list what the webhooks stored, newest first, each with messageId, recipient, status and trackingId', async () => {
      const app = await open();
      expect(await listMessages(app)).toEqual({ items: [], next_cursor: null, count: 0 });
      await seed(app);
      const page = await listMessages(app);
      expect(page.items.map(summary).sort()).toEqual(seeded);
      expect(page.next_cursor).toBeNull();
      expectNewestFirst(page.items);
      for (const message of page.items) {
        expect(message.messageId).toEqual(expect.any(String));
        expect(message.messageId.length).toBeGreaterThan(0);
        expect(message.firstEventAt).toMatch(TIMESTAMP);
        expect(message.lastEventAt).toMatch(TIMESTAMP);
      }
      // Another project sees none of them.
      const globex = expectSuccess(await app.api('GET', `/projects/${app.projects.globex}/messages`, { key: 'globex' }), 200);
      expect(globex).toEqual({ items: [], next_cursor: null, count: 0 });
    });

    test('trackingId filters exactly (no case folding, Unicode percent-encoded); an empty one is no filter', async () => {
      const app = await open();
      await seed(app);
      expect((await listMessages(app, { trackingId: SALE })).items.map(summary).sort()).toEqual(seeded.slice(0, 3));
      expect((await listMessages(app, { trackingId: SALE_CAPITALIZED })).items.map(summary)).toEqual([seeded[6]]);
      expect((await listMessages(app, { trackingId: TRACKING_ID })).items.map(summary).sort()).toEqual(seeded.slice(3, 5));
      expect((await listMessages(app, { trackingId: 'SPRING-SALE' })).items).toEqual([]);
      expect((await listMessages(app, { trackingId: 'spring' })).items).toEqual([]);
      expect((await listMessages(app, { trackingId: '' })).count).toBe(7);
    });

    test('status filters, alone and with trackingId; an unknown status is 400 invalid_request', async () => {
      const app = await open();
      await seed(app);
      expect((await listMessages(app, { status: 'bounced' })).items.map(summary).sort()).toEqual(seeded.slice(3, 5));
      expect((await listMessages(app, { status: 'delivered' })).count).toBe(5);
      expect((await listMessages(app, { status: 'delivered', trackingId: SALE })).count).toBe(3);
      expect((await listMessages(app, { status: 'bounced', trackingId: SALE })).count).toBe(0);
      expect((await listMessages(app, { status: 'complained' })).count).toBe(0);
      for (const status of ['nope', 'Delivered', '']) {
        expectError(
          await app.api('GET', `/projects/${app.projects.acme}/messages?${new URLSearchParams({ status })}`),
          400,
          'invalid_request',
        );
      }
    });

    test('a trackingId over 128 code points is 400 invalid_tracking_id; 128, even of astral characters, is fine', async () => {
      const app = await open();
      const query = (trackingId: string) => `/projects/${app.projects.acme}/messages?${new URLSearchParams({ trackingId })}`;
      expectError(await app.api('GET', query('x'.repeat(129))), 400, 'invalid_tracking_id');
      expectError(await app.api('GET', query('🌷'.repeat(129))), 400, 'invalid_tracking_id');
      expect(expectSuccess(await app.api('GET', query('x'.repeat(128))), 200)).toEqual({ items: [], next_cursor: null, count: 0 });
      expect(expectSuccess(await app.api('GET', query('🌷'.repeat(128))), 200)).toEqual({ items: [], next_cursor: null, count: 0 });
    });

    test('pages walk every message once, next_cursor null on the last; a cursor continues only its own filter', async () => {
      const app = await open();
      await seed(app);
      const all = (await listMessages(app)).items;
      const pages = await walkMessages(app, { limit: '2' });
      expect(pages.map((page) => page.count)).toEqual([2, 2, 2, 1]);
      expect(pages.flatMap((page) => page.items)).toEqual(all);
      const sale = await walkMessages(app, { limit: '1', trackingId: SALE });
      expect(sale.map((page) => page.count)).toEqual([1, 1, 1]);
      const cursor = sale[0]!.next_cursor!;
      expectError(
        await app.api('GET', `/projects/${app.projects.acme}/messages?${new URLSearchParams({ cursor })}`),
        400,
        'invalid_cursor',
      );
      expectError(
        await app.api(
          'GET',
          `/projects/${app.projects.acme}/messages?${new URLSearchParams({ cursor, trackingId: SALE, status: 'delivered' })}`,
        ),
        400,
        'invalid_cursor',
      );
      expectError(await app.api('GET', `/projects/${app.projects.acme}/messages?cursor=garbage`), 400, 'invalid_cursor');
      for (const limit of ['0', '101', 'abc']) {
        expectError(await app.api('GET', `/projects/${app.projects.acme}/messages?limit=${limit}`), 400, 'invalid_request');
      }
    });

    test('tracking IDs list with their counters in code-point order; search is a case-insensitive substring', async () => {
      const app = await open();
      await seed(app);
      const messages = (await listMessages(app)).items;
      const lastEventAt = (trackingId: string) =>
        messages
          .filter((message) => message.trackingId === trackingId)
          .map((message) => message.lastEventAt)
          .sort()
          .at(-1);
      const page = await listTrackingIds(app);
      expect(page).toEqual({
        items: [
          {
            trackingId: TRACKING_ID,
            messages: 2,
            delivered: 0,
            bounced: 2,
            complained: 0,
            lastEventAt: lastEventAt(TRACKING_ID),
            opened: 0,
            clicked: 0,
            unsubscribed: 0,
          },
          {
            trackingId: SALE_CAPITALIZED,
            messages: 1,
            delivered: 1,
            bounced: 0,
            complained: 0,
            lastEventAt: lastEventAt(SALE_CAPITALIZED),
            opened: 0,
            clicked: 0,
            unsubscribed: 0,
          },
          {
            trackingId: SALE,
            messages: 3,
            delivered: 3,
            bounced: 0,
            complained: 0,
            lastEventAt: lastEventAt(SALE),
            opened: 0,
            clicked: 0,
            unsubscribed: 0,
          },
        ],
        next_cursor: null,
        count: 3,
      });
      const ids = async (search: string) => (await listTrackingIds(app, { search })).items.map((item) => item.trackingId);
      expect(await ids('SALE')).toEqual([SALE_CAPITALIZED, SALE]);
      expect(await ids('üH')).toEqual([TRACKING_ID]);
      expect(await ids('🌷')).toEqual([TRACKING_ID]);
      expect(await ids('zzz')).toEqual([]);
      expect(await ids('')).toEqual([TRACKING_ID, SALE_CAPITALIZED, SALE]);
      expectError(
        await app.api('GET', `/projects/${app.projects.acme}/tracking-ids?${new URLSearchParams({ search: 'x'.repeat(129) })}`),
        400,
        'invalid_request',
      );

      const first = await listTrackingIds(app, { limit: '2' });
      expect(first.items.map((item) => item.trackingId)).toEqual([TRACKING_ID, SALE_CAPITALIZED]);
      const second = await listTrackingIds(app, { limit: '2', cursor: first.next_cursor! });
      expect(second).toMatchObject({ items: [{ trackingId: SALE }], next_cursor: null, count: 1 });
      expectError(
        await app.api(
          'GET',
          `/projects/${app.projects.acme}/tracking-ids?${new URLSearchParams({ cursor: first.next_cursor!, search: 'sale' })}`,
        ),
        400,
        'invalid_cursor',
      );
    });

    test('trackingId gives that one tracking ID exactly (a page of 0 or 1 item), search applying too; over 128 code points is 400', async () => {
      const app = await open();
      await seed(app);
      const all = (await listTrackingIds(app)).items;
      for (const item of all) {
        expect(await listTrackingIds(app, { trackingId: item.trackingId })).toEqual({ items: [item], next_cursor: null, count: 1 });
      }
      const empty = { items: [], next_cursor: null, count: 0 };
      for (const absent of ['SPRING-SALE', 'spring', 'sale', 'Frühling', 'frühling 🌷 2026', `${SALE} `]) {
        expect(await listTrackingIds(app, { trackingId: absent })).toEqual(empty);
      }
      expect(await listTrackingIds(app, { trackingId: '' })).toEqual(await listTrackingIds(app));
      // Both filters: the one ID, if it also matches the search.
      expect((await listTrackingIds(app, { trackingId: SALE, search: 'SALE' })).items.map((item) => item.trackingId)).toEqual([SALE]);
      expect(await listTrackingIds(app, { trackingId: SALE, search: '🌷' })).toEqual(empty);
      expect((await listTrackingIds(app, { trackingId: TRACKING_ID, search: '🌷' })).items.map((item) => item.trackingId)).toEqual([
        TRACKING_ID,
      ]);
      // Another project has none of acme's tracking IDs.
      const globex = await app.api('GET', `/projects/${app.projects.globex}/tracking-ids?${new URLSearchParams({ trackingId: SALE })}`, {
        key: 'globex',
      });
      expect(expectSuccess(globex, 200, listTrackingIdsResponseSchema)).toEqual(empty);

      const query = (params: Record<string, string>) => `/projects/${app.projects.acme}/tracking-ids?${new URLSearchParams(params)}`;
      expectError(await app.api('GET', query({ trackingId: 'x'.repeat(129) })), 400, 'invalid_tracking_id');
      expectError(await app.api('GET', query({ trackingId: '🌷'.repeat(129), search: 'x' })), 400, 'invalid_tracking_id');
      expect(expectSuccess(await app.api('GET', query({ trackingId: '🌷'.repeat(128) })), 200)).toEqual(empty);
      // The page is the whole answer: no cursor continues it.
      const first = await listTrackingIds(app, { limit: '1' });
      expectError(await app.api('GET', query({ trackingId: SALE, cursor: first.next_cursor! })), 400, 'invalid_cursor');
    });
  });
}
