import { createHash } from 'node:crypto';
import type { Suppression, SuppressionPage } from '@mailwarden/core';
import {
  batchCheckResponseSchema,
  bulkAddResponseSchema,
  bulkRemoveResponseSchema,
  checkSuppressionResponseSchema,
  listSuppressionsResponseSchema,
  removeSuppressionResponseSchema,
  suppressionSchema,
} from '@mailwarden/core/schemas';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { CLOCK_START } from './clock.js';
import { expectError, expectSuccess } from './expect-answer.js';
import type { Answer } from './http.js';
import type { OpenApp } from './harness.js';
import type { TestApp } from './test-app.js';

// docs/http.md, "Streams": every suppression endpoint takes an optional `stream` (a query parameter
// without a body, a body field with one). A stream's list is a list of its own; a check for a stream
// answers from the project-wide list, else from that stream's; without `stream`, every answer is what
// it was before streams existed.

const sha256 = (normalized: string) => createHash('sha256').update(normalized).digest('hex');
const iso = (ms: number) => new Date(ms).toISOString();

/** A suppression's keys in their order: the spec's fields, provenance, then the stream only when in one. */
const KEYS = ['hash', 'email', 'reason', 'created_at', 'source', 'cause'];
const STREAM_KEYS = [...KEYS, 'stream'];

/** Names that are no stream name (docs/errors.md#invalid_stream): case, a leading `-` or `_`, 65 characters, others. */
export const INVALID_STREAMS = ['Marketing', '-news', '_news', 'a'.repeat(65), 'news letter', 'newsé', 'news/x', 'news.x'];

function paths(projectId: string) {
  const base = `/projects/${projectId}/suppressions`;
  const withQuery = (path: string, query: Record<string, string>) => {
    const text = new URLSearchParams(query).toString();
    return text === '' ? path : `${path}?${text}`;
  };
  return {
    list: (query: Record<string, string> = {}) => withQuery(base, query),
    check: (email: string, stream?: string) => withQuery(`${base}/check`, { email, ...(stream === undefined ? {} : { stream }) }),
    batch: `${base}/check`,
    bulkCheck: `${base}/bulk-check`,
    bulk: `${base}/bulk`,
    bulkDelete: `${base}/bulk-delete`,
    one: (hash: string, stream?: string) => withQuery(`${base}/${hash}`, stream === undefined ? {} : { stream }),
  };
}

/** Adds an address to a list of acme (a stream's when given) and expects it to be new. */
async function add(app: TestApp, email: string, extra: { stream?: string; source?: string } = {}): Promise<Suppression> {
  const answer = await app.api('POST', paths(app.projects.acme).list(), { json: { email, ...extra } });
  return expectSuccess(answer, 201, suppressionSchema);
}

/** Walks one list of acme with `limit`, checking every page; returns the pages. */
async function walk(app: TestApp, query: Record<string, string>, limit: number): Promise<SuppressionPage[]> {
  const pages: SuppressionPage[] = [];
  let cursor: string | null | undefined;
  do {
    const page = expectSuccess(
      await app.api('GET', paths(app.projects.acme).list({ ...query, limit: String(limit), ...(cursor == null ? {} : { cursor }) })),
      200,
      listSuppressionsResponseSchema,
    );
    expect(page.count).toBe(page.items.length);
    expect(page.items.length).toBeLessThanOrEqual(limit);
    pages.push(page);
    cursor = page.next_cursor;
    if (pages.length > 100) throw new Error('the walk does not end');
  } while (cursor !== null);
  return pages;
}

/** Every answer about acme's project-wide list for these addresses, as text: what a client without streams sees. */
async function projectWideAnswers(app: TestApp, emails: readonly string[]): Promise<string[]> {
  const p = paths(app.projects.acme);
  const answers: Answer[] = [
    await app.api('GET', p.list()),
    await app.api('GET', p.list({ limit: '1' })),
    await app.api('GET', p.list({ reason: 'manual' })),
    await app.api('POST', p.batch, { json: { emails } }),
    await app.api('POST', p.bulkCheck, { json: { emails } }),
  ];
  for (const email of emails) answers.push(await app.api('GET', p.check(email)));
  return answers.map((answer) => `${answer.status} ${answer.text}`);
}

export function describeStreamTests(open: OpenApp): void {
  describe('streams', () => {
    test("add to a stream: 201 with the record and its stream last, then 200 with the same bytes; it is that stream's only", async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      const first = await app.api('POST', p.list(), { json: { email: ' Ana@Example.com ', stream: 'marketing' } });
      const created = expectSuccess(first, 201, suppressionSchema);
      expect(created).toEqual({
        hash: sha256('ana@example.com'),
        email: 'ana@example.com',
        reason: 'manual',
        created_at: iso(CLOCK_START),
        source: 'api',
        cause: null,
        stream: 'marketing',
      });
      expect(Object.keys(created)).toEqual(STREAM_KEYS);
      app.clock.advance(1000);
      const again = await app.api('POST', p.list(), { json: { email: 'ana@example.com', stream: 'marketing' } });
      expect(again.text).toBe(first.text);
      expectSuccess(again, 200, suppressionSchema);

      // Its stream's listing holds it; the project-wide list and another stream's do not.
      expect(expectSuccess(await app.api('GET', p.list({ stream: 'marketing' })), 200, listSuppressionsResponseSchema)).toEqual({
        items: [created],
        next_cursor: null,
        count: 1,
      });
      expect((await app.api('GET', p.list())).text).toBe('{"items":[],"next_cursor":null,"count":0}');
      expect((await app.api('GET', p.list({ stream: 'weekly-digest' }))).text).toBe('{"items":[],"next_cursor":null,"count":0}');

      // Mail of the stream is blocked; other mail is not, and those answers have no stream key.
      expect(expectSuccess(await app.api('GET', p.check('ANA@example.com', 'marketing')), 200, checkSuppressionResponseSchema)).toEqual({
        email: 'ANA@example.com',
        suppressed: true,
        reason: 'manual',
        created_at: iso(CLOCK_START),
        source: 'api',
        cause: null,
        stream: 'marketing',
      });
      expect((await app.api('GET', p.check('ana@example.com'))).text).toBe('{"email":"ana@example.com","suppressed":false}');
      expect((await app.api('GET', p.check('ana@example.com', 'weekly-digest'))).text).toBe(
        '{"email":"ana@example.com","suppressed":false}',
      );

      // The same address added project-wide is a new suppression of that list: 201, no stream key.
      const projectWide = await add(app, 'ana@example.com');
      expect(Object.keys(projectWide)).toEqual(KEYS);
      expect(projectWide.created_at).toBe(iso(CLOCK_START + 1000));
    });

    test('a check for a stream: the project-wide list or that stream; the project-wide entry answers when both hold it (stream null)', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      const wide = await add(app, 'ana@example.com');
      app.clock.advance(1000);
      await add(app, 'ana@example.com', { stream: 'marketing', source: 'unsubscribe' });
      await add(app, 'bo@example.com', { stream: 'marketing', source: 'unsubscribe' });
      await add(app, 'cy@example.com', { stream: 'weekly-digest' });

      const both = expectSuccess(await app.api('GET', p.check('ana@example.com', 'marketing')), 200, checkSuppressionResponseSchema);
      expect(both).toEqual({
        email: 'ana@example.com',
        suppressed: true,
        reason: 'manual',
        created_at: wide.created_at,
        source: 'api',
        cause: null,
        stream: null,
      });
      expect(Object.keys(both)).toEqual(['email', 'suppressed', 'reason', 'created_at', 'source', 'cause', 'stream']);
      // The project-wide entry blocks every stream, even one nothing was ever added to.
      expect(expectSuccess(await app.api('GET', p.check('ana@example.com', 'other')), 200)).toMatchObject({
        suppressed: true,
        stream: null,
      });
      expect(expectSuccess(await app.api('GET', p.check('bo@example.com', 'marketing')), 200)).toEqual({
        email: 'bo@example.com',
        suppressed: true,
        reason: 'manual',
        created_at: iso(CLOCK_START + 1000),
        source: 'unsubscribe',
        cause: null,
        stream: 'marketing',
      });

      const emails = ['ana@example.com', 'BO@example.com', 'cy@example.com', 'dee@example.com'];
      const expected = {
        results: [
          { email: 'ana@example.com', suppressed: true, reason: 'manual', stream: null },
          { email: 'BO@example.com', suppressed: true, reason: 'manual', stream: 'marketing' },
          { email: 'cy@example.com', suppressed: false },
          { email: 'dee@example.com', suppressed: false },
        ],
      };
      const batch = await app.api('POST', p.batch, { json: { emails, stream: 'marketing' } });
      expect(expectSuccess(batch, 200, batchCheckResponseSchema)).toEqual(expected);
      expect((await app.api('POST', p.bulkCheck, { json: { emails, stream: 'marketing' } })).text).toBe(batch.text);
      // Without a stream (absent or null): the project-wide list alone, and no stream key.
      for (const json of [{ emails }, { emails, stream: null }]) {
        expect((await app.api('POST', p.batch, { json })).text).toBe(
          JSON.stringify({
            results: [
              { email: 'ana@example.com', suppressed: true, reason: 'manual' },
              { email: 'BO@example.com', suppressed: false },
              { email: 'cy@example.com', suppressed: false },
              { email: 'dee@example.com', suppressed: false },
            ],
          }),
        );
      }

      // Once the project-wide entry is gone, the stream's answers.
      expect(expectSuccess(await app.api('DELETE', p.one(wide.hash)), 200)).toEqual({ deleted: true, hash: wide.hash });
      expect(expectSuccess(await app.api('GET', p.check('ana@example.com', 'marketing')), 200)).toMatchObject({
        suppressed: true,
        source: 'unsubscribe',
        created_at: iso(CLOCK_START + 1000),
        stream: 'marketing',
      });
      expect((await app.api('GET', p.check('ana@example.com'))).text).toBe('{"email":"ana@example.com","suppressed":false}');
    });

    test("remove by hash from a stream's list: { deleted, hash, stream }, then 404 with { hash, stream }; other lists untouched", async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      const { hash } = await add(app, 'ana@example.com', { stream: 'marketing' });
      await add(app, 'ana@example.com', { stream: 'weekly-digest' });
      await add(app, 'bo@example.com');
      const bo = sha256('bo@example.com');

      // Not in the project-wide list, nor in a stream that never held it.
      expect(expectError(await app.api('DELETE', p.one(hash)), 404, 'suppression_not_found').details).toEqual({ hash });
      expect(expectError(await app.api('DELETE', p.one(hash, 'other')), 404, 'suppression_not_found').details).toEqual({
        hash,
        stream: 'other',
      });
      expect(expectError(await app.api('DELETE', p.one(bo, 'marketing')), 404, 'suppression_not_found').details).toEqual({
        hash: bo,
        stream: 'marketing',
      });

      const removed = await app.api('DELETE', p.one(hash.toUpperCase(), 'marketing'));
      expect(expectSuccess(removed, 200, removeSuppressionResponseSchema)).toEqual({ deleted: true, hash, stream: 'marketing' });
      expect(removed.text).toBe(JSON.stringify({ deleted: true, hash, stream: 'marketing' }));
      expect(expectError(await app.api('DELETE', p.one(hash, 'marketing')), 404, 'suppression_not_found').details).toEqual({
        hash,
        stream: 'marketing',
      });
      expect((await app.api('GET', p.check('ana@example.com', 'marketing'))).text).toBe('{"email":"ana@example.com","suppressed":false}');
      expect(expectSuccess(await app.api('GET', p.check('ana@example.com', 'weekly-digest')), 200)).toMatchObject({
        suppressed: true,
        stream: 'weekly-digest',
      });
      // An empty stream is none: the project-wide list, answered as without it.
      expect((await app.api('DELETE', p.one(bo, ''))).text).toBe(JSON.stringify({ deleted: true, hash: bo }));
      expect(expectSuccess(await app.api('GET', p.list({ stream: 'weekly-digest' })), 200, listSuppressionsResponseSchema).count).toBe(1);
    });

    test("a stream's listing: newest first, ties by hash, each once, its own filters; its cursors continue it only", async () => {
      const app = await open();
      const { acme, globex } = app.projects;
      const marketing: Suppression[] = [];
      for (let i = 0; i < 5; i++) {
        app.clock.advance(1000);
        marketing.push(await add(app, `user${i}@example.com`, { stream: 'marketing' }));
        // Interleaved: the same addresses and others in the project-wide list and another stream.
        await add(app, `user${i}@example.com`);
        await add(app, `other${i}@example.com`, { stream: 'weekly-digest' });
      }
      marketing.push(
        await add(app, 'same-a@example.com', { stream: 'marketing' }),
        await add(app, 'same-b@example.com', { stream: 'marketing', source: 'unsubscribe' }),
      );
      const expected = [...marketing].sort((a, b) => b.created_at.localeCompare(a.created_at) || (a.hash < b.hash ? -1 : 1));
      for (const limit of [1, 2, 3, 100]) {
        expect((await walk(app, { stream: 'marketing' }, limit)).flatMap((page) => page.items)).toEqual(expected);
      }
      for (const item of expected) expect(Object.keys(item)).toEqual(STREAM_KEYS);
      // The stream's listing filters as the project-wide one does.
      expect((await walk(app, { stream: 'marketing', emailPrefix: 'SAME-' }, 1)).flatMap((page) => page.items)).toEqual(
        expected.filter((item) => item.email.startsWith('same-')),
      );
      expect(
        (await walk(app, { stream: 'marketing', from: iso(CLOCK_START + 2000), to: iso(CLOCK_START + 4000) }, 1)).flatMap(
          (page) => page.items,
        ),
      ).toEqual(expected.filter((item) => item.created_at >= iso(CLOCK_START + 2000) && item.created_at < iso(CLOCK_START + 4000)));
      const projectWide = (await walk(app, {}, 2)).flatMap((page) => page.items);
      expect(projectWide.map((item) => item.email).sort()).toEqual(
        ['user0', 'user1', 'user2', 'user3', 'user4'].map((u) => `${u}@example.com`),
      );
      for (const item of projectWide) expect(Object.keys(item)).toEqual(KEYS);

      // A cursor continues its own list only: not another stream's, not the project-wide one, and back.
      const page = (query: Record<string, string>) => app.api('GET', paths(acme).list({ limit: '1', ...query }));
      const marketingCursor = expectSuccess(await page({ stream: 'marketing' }), 200, listSuppressionsResponseSchema).next_cursor!;
      const projectCursor = expectSuccess(await page({}), 200, listSuppressionsResponseSchema).next_cursor!;
      expect(marketingCursor).toEqual(expect.any(String));
      expectError(await page({ stream: 'weekly-digest', cursor: marketingCursor }), 400, 'invalid_cursor');
      expectError(await page({ cursor: marketingCursor }), 400, 'invalid_cursor');
      expectError(await page({ stream: '', cursor: marketingCursor }), 400, 'invalid_cursor');
      expectError(await page({ stream: 'marketing', cursor: projectCursor }), 400, 'invalid_cursor');
      expectError(
        await app.api('GET', paths(globex).list({ stream: 'marketing', cursor: marketingCursor }), { key: 'both' }),
        400,
        'invalid_cursor',
      );
      expect(
        expectSuccess(await page({ stream: 'marketing', cursor: marketingCursor }), 200, listSuppressionsResponseSchema).items,
      ).toEqual([expected[1]]);
      // An empty stream is the project-wide list: its cursors continue there.
      expect(expectSuccess(await page({ stream: '', cursor: projectCursor }), 200, listSuppressionsResponseSchema).items).toEqual([
        projectWide[1],
      ]);
    });

    test("bulk add and bulk delete with a stream apply every item to that stream's list; results keep their shape", async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      await add(app, 'wide@example.com');
      await add(app, 'known@example.com', { stream: 'marketing' });
      const items = [
        { email: 'Gone@Example.com', reason: 'hard_bounce', created_at: '2025-06-01T10:00:00Z' },
        { email: 'known@example.com', reason: 'complaint', created_at: '2025-01-01' },
        { email: 'wide@example.com' },
        { email: 'no-at-sign' },
      ];
      const answer = await app.api('POST', p.bulk, { json: { items, source: 'unsubscribe', stream: 'marketing' } });
      const { results } = expectSuccess(answer, 200, bulkAddResponseSchema);
      expect(results).toStrictEqual([
        { email: 'Gone@Example.com', status: 'created', hash: sha256('gone@example.com') },
        { email: 'known@example.com', status: 'upgraded', hash: sha256('known@example.com'), previous_reason: 'manual' },
        // In the project-wide list, but not in this stream's: created there.
        { email: 'wide@example.com', status: 'created', hash: sha256('wide@example.com') },
        { email: 'no-at-sign', status: 'invalid', error: { code: 'invalid_email', message: expect.any(String) } },
      ]);
      const listed = expectSuccess(await app.api('GET', p.list({ stream: 'marketing' })), 200, listSuppressionsResponseSchema).items;
      expect(listed.map((item) => [item.email, item.reason, item.created_at, item.source, item.stream])).toStrictEqual([
        ['wide@example.com', 'manual', iso(CLOCK_START), 'unsubscribe', 'marketing'],
        ['gone@example.com', 'hard_bounce', '2025-06-01T10:00:00.000Z', 'unsubscribe', 'marketing'],
        ['known@example.com', 'complaint', '2025-01-01T00:00:00.000Z', 'unsubscribe', 'marketing'],
      ]);
      // The project-wide list holds what it held.
      expect(expectSuccess(await app.api('GET', p.list()), 200, listSuppressionsResponseSchema).items.map((item) => item.email)).toEqual([
        'wide@example.com',
      ]);

      const removed = await app.api('POST', p.bulkDelete, {
        json: {
          stream: 'marketing',
          items: [{ email: 'gone@example.com' }, { hash: sha256('wide@example.com') }, { email: 'nobody@example.com' }, { hash: 'xyz' }],
        },
      });
      expect(expectSuccess(removed, 200, bulkRemoveResponseSchema).results).toStrictEqual([
        { hash: sha256('gone@example.com'), deleted: true },
        { hash: sha256('wide@example.com'), deleted: true },
        { hash: sha256('nobody@example.com'), deleted: false },
        { status: 'invalid', error: { code: 'invalid_request', message: expect.any(String) } },
      ]);
      expect(
        expectSuccess(await app.api('GET', p.list({ stream: 'marketing' })), 200, listSuppressionsResponseSchema).items.map(
          (item) => item.email,
        ),
      ).toEqual(['known@example.com']);
      expect(expectSuccess(await app.api('GET', p.check('wide@example.com')), 200)).toMatchObject({ suppressed: true });
      // Without a stream (or with null), bulk delete works on the project-wide list only.
      const wide = await app.api('POST', p.bulkDelete, {
        json: { stream: null, items: [{ email: 'known@example.com' }, { email: 'wide@example.com' }] },
      });
      expect(expectSuccess(wide, 200, bulkRemoveResponseSchema).results).toStrictEqual([
        { hash: sha256('known@example.com'), deleted: false },
        { hash: sha256('wide@example.com'), deleted: true },
      ]);
      expect(expectSuccess(await app.api('GET', p.list({ stream: 'marketing' })), 200, listSuppressionsResponseSchema).count).toBe(1);
    });

    test('an invalid stream is 400 invalid_stream on every endpoint, and nothing is written', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      const { hash } = await add(app, 'ana@example.com', { stream: 'marketing' });
      await add(app, 'ana@example.com');
      const before = [
        ...(await projectWideAnswers(app, ['ana@example.com', 'bo@example.com'])),
        (await app.api('GET', p.list({ stream: 'marketing' }))).text,
      ];
      for (const stream of INVALID_STREAMS) {
        const requests: [string, string, unknown?][] = [
          ['GET', p.list({ stream })],
          ['GET', p.check('ana@example.com', stream)],
          ['DELETE', p.one(hash, stream)],
          ['POST', p.list(), { email: 'bo@example.com', stream }],
          ['POST', p.batch, { emails: ['ana@example.com'], stream }],
          ['POST', p.bulkCheck, { emails: ['ana@example.com'], stream }],
          ['POST', p.bulk, { items: [{ email: 'bo@example.com' }], stream }],
          ['POST', p.bulkDelete, { items: [{ hash }], stream }],
        ];
        for (const [method, path, json] of requests) {
          const answer = await app.api(method, path, json === undefined ? {} : { json });
          expect(expectError(answer, 400, 'invalid_stream').message, `${method} ${path}`).toMatch(/1 to 64 lower-case letters/);
        }
      }
      // In a body, an empty string is no stream name either (absent or null means the project-wide list).
      expectError(await app.api('POST', p.list(), { json: { email: 'bo@example.com', stream: '' } }), 400, 'invalid_stream');
      expectError(await app.api('POST', p.bulk, { json: { items: [{ email: 'bo@example.com' }], stream: '' } }), 400, 'invalid_stream');
      // Named before the batch's size and entries are looked at: the request is refused whole.
      const tooMany = Array.from({ length: 101 }, (_, i) => `u${i}@example.com`);
      expectError(await app.api('POST', p.batch, { json: { emails: tooMany, stream: 'Bad' } }), 400, 'invalid_stream');
      expectError(await app.api('POST', p.batch, { json: { emails: ['nope'], stream: 'Bad' } }), 400, 'invalid_stream');
      // Not a string at all: the body's shape is wrong.
      for (const stream of [42, true, ['marketing'], { name: 'marketing' }]) {
        expectError(await app.api('POST', p.list(), { json: { email: 'bo@example.com', stream } }), 400, 'invalid_request');
        expectError(await app.api('POST', p.bulk, { json: { items: [], stream } }), 400, 'invalid_request');
      }
      expect([
        ...(await projectWideAnswers(app, ['ana@example.com', 'bo@example.com'])),
        (await app.api('GET', p.list({ stream: 'marketing' }))).text,
      ]).toEqual(before);
    });

    test('a request with a body takes its stream there: a stream in its query is 400 invalid_request, not ignored', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      await add(app, 'ana@example.com', { stream: 'marketing' });
      const requests: [string, unknown][] = [
        [p.list(), { email: 'bo@example.com' }],
        [p.batch, { emails: ['ana@example.com'] }],
        [p.bulkCheck, { emails: ['ana@example.com'] }],
        [p.bulk, { items: [{ email: 'bo@example.com' }] }],
        [p.bulkDelete, { items: [{ email: 'ana@example.com' }] }],
      ];
      for (const [path, json] of requests) {
        for (const stream of ['marketing', '']) {
          const error = expectError(await app.api('POST', `${path}?${new URLSearchParams({ stream })}`, { json }), 400, 'invalid_request');
          expect(error.message, path).toMatch(/JSON body/);
        }
      }
      expect((await app.api('GET', p.list())).text).toBe('{"items":[],"next_cursor":null,"count":0}');
      expect(expectSuccess(await app.api('GET', p.list({ stream: 'marketing' })), 200, listSuppressionsResponseSchema).count).toBe(1);
    });

    test('add and bulk add take source unsubscribe (reason manual, told apart by its source); other sources are invalid_request', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      const added = await add(app, 'ana@example.com', { source: 'unsubscribe' });
      expect(added).toEqual({
        hash: sha256('ana@example.com'),
        email: 'ana@example.com',
        reason: 'manual',
        created_at: iso(CLOCK_START),
        source: 'unsubscribe',
        cause: null,
      });
      expect(Object.keys(added)).toEqual(KEYS);
      expect(await add(app, 'bo@example.com', { source: 'import' })).toMatchObject({ source: 'import' });
      for (const source of ['webhook', 'UNSUBSCRIBE', '', 7, null]) {
        expectError(await app.api('POST', p.list(), { json: { email: 'cy@example.com', source } }), 400, 'invalid_request');
        expectError(await app.api('POST', p.bulk, { json: { items: [{ email: 'cy@example.com' }], source } }), 400, 'invalid_request');
      }
      expect((await app.api('GET', p.check('cy@example.com'))).text).toBe('{"email":"cy@example.com","suppressed":false}');
    });

    test('answers without a stream are the same bytes whatever the streams hold', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      const emails = ['ana@example.com', 'bo@example.com', 'cy@example.com', 'nobody@example.com'];
      await add(app, 'ana@example.com');
      app.clock.advance(1000);
      await app.api('POST', p.bulk, {
        json: { items: [{ email: 'bo@example.com', reason: 'hard_bounce', created_at: '2025-06-01T10:00:00Z' }], source: 'import' },
      });
      const before = await projectWideAnswers(app, emails);

      // Writes to streams: the same addresses (stronger reasons, earlier times, other sources) and others.
      app.clock.advance(1000);
      await add(app, 'ana@example.com', { stream: 'marketing', source: 'unsubscribe' });
      await add(app, 'cy@example.com', { stream: 'marketing' });
      await app.api('POST', p.bulk, {
        json: {
          stream: 'weekly-digest',
          items: [
            { email: 'ana@example.com', reason: 'complaint', created_at: '2020-01-01' },
            { email: 'bo@example.com', reason: 'complaint', created_at: '2020-01-01' },
            { email: 'nobody@example.com' },
          ],
        },
      });
      await app.api('POST', p.bulkDelete, { json: { stream: 'weekly-digest', items: [{ email: 'nobody@example.com' }] } });
      await app.api('DELETE', p.one(sha256('cy@example.com'), 'marketing'));
      expect(await projectWideAnswers(app, emails)).toEqual(before);

      // Writes without a stream answer as they always did too.
      const removed = await app.api('DELETE', p.one(sha256('ana@example.com')));
      expect(removed.text).toBe(JSON.stringify({ deleted: true, hash: sha256('ana@example.com') }));
      expect(expectSuccess(await app.api('GET', p.check('ana@example.com', 'marketing')), 200)).toMatchObject({ stream: 'marketing' });
      expect((await app.api('GET', p.check('ana@example.com'))).text).toBe('{"email":"ana@example.com","suppressed":false}');
    });

    test('property: writes of any kind to any streams leave every answer without a stream as it was', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      const pool = ['ana@example.com', 'bo@example.com', 'cy@example.com'];
      await add(app, 'ana@example.com');
      await app.api('POST', p.bulk, {
        json: { items: [{ email: 'bo@example.com', reason: 'complaint', created_at: '2025-06-01T10:00:00Z' }], source: 'import' },
      });
      const before = await projectWideAnswers(app, pool);
      const email = fc.constantFrom(...pool);
      const stream = fc.constantFrom('marketing', 'weekly-digest', 'a', 'x-1');
      const write = fc.oneof(
        fc.record({ kind: fc.constant('add' as const), email, stream, source: fc.constantFrom('api', 'import', 'unsubscribe') }),
        fc.record({
          kind: fc.constant('bulk' as const),
          items: fc.array(fc.record({ email, reason: fc.constantFrom('manual', 'hard_bounce', 'complaint') }), { maxLength: 3 }),
          stream,
        }),
        fc.record({ kind: fc.constant('remove' as const), email, stream }),
        fc.record({ kind: fc.constant('bulk-delete' as const), emails: fc.subarray(pool), stream }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 4 }), async (writes) => {
          for (const w of writes) {
            app.clock.advance(1000);
            const answer =
              w.kind === 'add'
                ? await app.api('POST', p.list(), { json: { email: w.email, stream: w.stream, source: w.source } })
                : w.kind === 'bulk'
                  ? await app.api('POST', p.bulk, { json: { items: w.items, stream: w.stream } })
                  : w.kind === 'remove'
                    ? await app.api('DELETE', p.one(sha256(w.email), w.stream))
                    : await app.api('POST', p.bulkDelete, { json: { items: w.emails.map((e) => ({ email: e })), stream: w.stream } });
            expect([200, 201, 404], answer.text).toContain(answer.status);
          }
          expect(await projectWideAnswers(app, pool)).toEqual(before);
        }),
        { numRuns: 10 },
      );
    });
  });
}
