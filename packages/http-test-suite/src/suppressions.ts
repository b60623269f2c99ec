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
import { describe, expect, test } from 'vitest';
import { CLOCK_START } from './clock.js';
import { TIMESTAMP, expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import type { TestApp } from './test-app.js';

/** The default hash: SHA-256 of the normalized address, in lower-case hex, so clients can compute it. */
const sha256 = (normalized: string) => createHash('sha256').update(normalized).digest('hex');
const iso = (ms: number) => new Date(ms).toISOString();

function paths(projectId: string) {
  const base = `/projects/${projectId}/suppressions`;
  return {
    list: (query = '') => `${base}${query === '' ? '' : `?${query}`}`,
    check: (email: string) => `${base}/check?${new URLSearchParams({ email })}`,
    batch: `${base}/check`,
    bulkCheck: `${base}/bulk-check`,
    one: (hash: string) => `${base}/${hash}`,
  };
}

/** Adds an address to a project's list with that project's own key; expects it to be new. */
async function add(app: TestApp, email: string, project: 'acme' | 'globex' = 'acme'): Promise<Suppression> {
  const answer = await app.api('POST', paths(app.projects[project]).list(), { key: project, json: { email } });
  return expectSuccess(answer, 201, suppressionSchema);
}

/** Walks the suppression list with `limit`, checking each page's shape; returns the pages. */
async function walk(app: TestApp, projectId: string, limit: number): Promise<SuppressionPage[]> {
  const pages: SuppressionPage[] = [];
  let cursor: string | null | undefined;
  do {
    const query = new URLSearchParams({ limit: String(limit), ...(cursor == null ? {} : { cursor }) });
    const page = expectSuccess(await app.api('GET', paths(projectId).list(query.toString())), 200, listSuppressionsResponseSchema);
    expect(page.count).toBe(page.items.length);
    expect(page.items.length).toBeLessThanOrEqual(limit);
    pages.push(page);
    cursor = page.next_cursor;
    if (pages.length > 100) throw new Error('the walk does not end');
  } while (cursor !== null);
  return pages;
}

export function describeSuppressionTests(open: OpenApp): void {
  describe('suppressions', () => {
    test('add answers 201 with the record, then 200 with the very same record (created_at unchanged)', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      const first = await app.api('POST', p.list(), { json: { email: '  Ana.Smith+news@Example.COM ' } });
      const created = expectSuccess(first, 201, suppressionSchema);
      expect(created).toEqual({
        hash: sha256('ana.smith+news@example.com'),
        email: 'ana.smith+news@example.com',
        reason: 'manual',
        created_at: iso(CLOCK_START),
        source: 'api',
        cause: null,
      });
      // The spec's fields, and provenance beside them.
      expect(Object.keys(created).sort()).toEqual(['cause', 'created_at', 'email', 'hash', 'reason', 'source']);
      app.clock.advance(60_000);
      const again = await app.api('POST', p.list(), { json: { email: 'ana.smith+news@example.com' } });
      expect(again.text).toBe(first.text);
      expectSuccess(again, 200, suppressionSchema);
    });

    test('add refuses an invalid address (400 invalid_email) and a body without a string email (400 invalid_request)', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      for (const email of ['not-an-address', 'ana@localhost', '@example.com', 'ana@', '', `${'a'.repeat(65)}@example.com`]) {
        expectError(await app.api('POST', p.list(), { json: { email } }), 400, 'invalid_email');
      }
      for (const json of [{}, { email: 42 }, { email: null }, { emails: ['ana@example.com'] }, [], 'ana@example.com', null]) {
        expectError(await app.api('POST', p.list(), { json }), 400, 'invalid_request');
      }
      expect(expectSuccess(await app.api('GET', p.list()), 200, listSuppressionsResponseSchema).count).toBe(0);
    });

    test('check echoes the address as sent: suppressed with reason and created_at, or only email and suppressed', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      await add(app, 'ana@example.com');
      const suppressed = expectSuccess(await app.api('GET', p.check(' ANA@Example.com')), 200, checkSuppressionResponseSchema);
      expect(suppressed).toEqual({
        email: ' ANA@Example.com',
        suppressed: true,
        reason: 'manual',
        created_at: iso(CLOCK_START),
        source: 'api',
        cause: null,
      });
      expect((suppressed as { created_at: string }).created_at).toMatch(TIMESTAMP);
      const free = await app.api('GET', p.check('Bo+x@Example.com'));
      expect(free.text).toBe(JSON.stringify({ email: 'Bo+x@Example.com', suppressed: false }));
      // Another project's list is another list.
      expect(expectSuccess(await app.api('GET', paths(app.projects.globex).check('ana@example.com'), { key: 'globex' }), 200)).toEqual({
        email: 'ana@example.com',
        suppressed: false,
      });
    });

    test('a + in a query email must be sent as %2B: a raw + is a space (form encoding), so invalid_email', async () => {
      const app = await open();
      const base = `/projects/${app.projects.acme}/suppressions/check`;
      await add(app, 'ana+news@example.com');
      expect(expectSuccess(await app.api('GET', `${base}?email=ana%2Bnews%40example.com`), 200)).toMatchObject({
        email: 'ana+news@example.com',
        suppressed: true,
      });
      expectError(await app.api('GET', `${base}?email=ana+news@example.com`), 400, 'invalid_email');
    });

    test('check without an email is 400 invalid_request; with an invalid one, 400 invalid_email', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      expectError(await app.api('GET', `/projects/${app.projects.acme}/suppressions/check`), 400, 'invalid_request');
      expectError(await app.api('GET', p.check('no-at-sign')), 400, 'invalid_email');
      expectError(await app.api('GET', p.check('')), 400, 'invalid_email');
    });

    test('batch check answers one result per entry, in order, duplicates included, echoing each address', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      await add(app, 'ana@example.com');
      const emails = ['Ana@Example.com', 'bo@example.com', 'ana@example.com', 'Bo@example.com', 'ana@example.com'];
      const body = expectSuccess(await app.api('POST', p.batch, { json: { emails } }), 200, batchCheckResponseSchema);
      expect(body).toEqual({
        results: [
          { email: 'Ana@Example.com', suppressed: true, reason: 'manual' },
          { email: 'bo@example.com', suppressed: false },
          { email: 'ana@example.com', suppressed: true, reason: 'manual' },
          { email: 'Bo@example.com', suppressed: false },
          { email: 'ana@example.com', suppressed: true, reason: 'manual' },
        ],
      });
    });

    test('batch check takes 0 and 100 entries; 101 is 400 batch_too_large', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      expect(expectSuccess(await app.api('POST', p.batch, { json: { emails: [] } }), 200)).toEqual({ results: [] });
      const hundred = Array.from({ length: 100 }, (_, i) => `user${i}@example.com`);
      const full = expectSuccess(await app.api('POST', p.batch, { json: { emails: hundred } }), 200, batchCheckResponseSchema);
      expect(full.results.map((result) => result.email)).toEqual(hundred);
      const error = expectError(
        await app.api('POST', p.batch, { json: { emails: [...hundred, 'one-more@example.com'] } }),
        400,
        'batch_too_large',
      );
      expect(error.details).toEqual({ max: 100, received: 101 });
      // Size is checked before content: 101 invalid entries are still too many.
      expectError(await app.api('POST', p.batch, { json: { emails: Array.from({ length: 101 }, () => 'bad') } }), 400, 'batch_too_large');
    });

    test('bulk check: the batch check for up to 1 000 entries (1 001 is 400 batch_too_large), same answers', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      await add(app, 'user7@example.com');
      const thousand = Array.from({ length: 1000 }, (_, i) => `User${i}@Example.com`);
      const full = expectSuccess(await app.api('POST', p.bulkCheck, { json: { emails: thousand } }), 200, batchCheckResponseSchema);
      expect(full.results.map((result) => result.email)).toEqual(thousand);
      expect(full.results.filter((result) => result.suppressed)).toEqual([
        { email: 'User7@Example.com', suppressed: true, reason: 'manual' },
      ]);
      // What the batch check answers, entry for entry.
      const few = ['user7@example.com', 'nobody@example.com', 'USER7@example.com'];
      const batch = expectSuccess(await app.api('POST', p.batch, { json: { emails: few } }), 200, batchCheckResponseSchema);
      expect(expectSuccess(await app.api('POST', p.bulkCheck, { json: { emails: few } }), 200, batchCheckResponseSchema)).toEqual(batch);
      const error = expectError(
        await app.api('POST', p.bulkCheck, { json: { emails: [...thousand, 'one-more@example.com'] } }),
        400,
        'batch_too_large',
      );
      expect(error.details).toEqual({ max: 1000, received: 1001 });
      const invalid = expectError(
        await app.api('POST', p.bulkCheck, { json: { emails: ['ok@example.com', 'no-at-sign'] } }),
        400,
        'invalid_email',
      );
      expect(invalid.details).toMatchObject([{ index: 1, email: 'no-at-sign' }]);
      expectError(await app.api('POST', p.bulkCheck, { json: { emails: 'a@example.com' } }), 400, 'invalid_request');
    });

    test('batch check with invalid entries is 400 invalid_email listing each as { index, email }', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      const error = expectError(
        await app.api('POST', p.batch, { json: { emails: ['ok@example.com', 'nope', 'fine@example.com', 42, '', { a: 1 }] } }),
        400,
        'invalid_email',
      );
      expect(error.details).toEqual([
        { index: 1, email: 'nope', reason: expect.any(String) },
        { index: 3, email: 42, reason: expect.any(String) },
        { index: 4, email: '', reason: expect.any(String) },
        { index: 5, email: null, reason: 'not a string (an object)' },
      ]);
      // An entry nested deeper than any serializer recurses is refused like any other, not a 500.
      const deep = `{"emails":["ok@example.com",${'['.repeat(20_000)}${']'.repeat(20_000)}]}`;
      const refused = expectError(
        await app.api('POST', p.batch, { body: deep, headers: { 'content-type': 'application/json' } }),
        400,
        'invalid_email',
      );
      expect(refused.details).toEqual([{ index: 1, email: null, reason: 'not a string (an array)' }]);
      for (const json of [{}, { emails: 'ok@example.com' }, { emails: null }, [], { email: 'ok@example.com' }]) {
        expectError(await app.api('POST', p.batch, { json }), 400, 'invalid_request');
      }
    });

    test('remove answers 200 { deleted, hash }, then 404 suppression_not_found; the address is free again', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      const { hash } = await add(app, 'ana@example.com');
      const removed = expectSuccess(await app.api('DELETE', p.one(hash)), 200, removeSuppressionResponseSchema);
      expect(removed).toEqual({ deleted: true, hash });
      const error = expectError(await app.api('DELETE', p.one(hash)), 404, 'suppression_not_found');
      expect(error.details).toEqual({ hash });
      expect(expectSuccess(await app.api('GET', p.check('ana@example.com')), 200)).toEqual({ email: 'ana@example.com', suppressed: false });
      // Added again, it is a new suppression: 201 and the current time.
      app.clock.advance(1000);
      expect((await add(app, 'ana@example.com')).created_at).toBe(iso(CLOCK_START + 1000));
    });

    test('remove takes the hash in any case and answers it in lower case; a malformed hash is 400 invalid_request', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      const { hash } = await add(app, 'ana@example.com');
      expect(expectSuccess(await app.api('DELETE', p.one(hash.toUpperCase())), 200)).toEqual({ deleted: true, hash });
      for (const malformed of ['xyz', hash.slice(1), `${hash}0`, 'g'.repeat(64), 'ana%40example.com']) {
        expectError(await app.api('DELETE', p.one(malformed)), 400, 'invalid_request');
      }
    });

    test('list walks every suppression once, newest first (ties by hash), next_cursor null on the last page', async () => {
      const app = await open();
      const added: Suppression[] = [];
      for (let i = 0; i < 7; i++) {
        app.clock.advance(1000);
        added.push(await add(app, `user${i}@example.com`));
      }
      // Two at the same millisecond: ordered by hash.
      added.push(await add(app, 'same-a@example.com'), await add(app, 'same-b@example.com'));
      const expected = [...added].sort((a, b) => b.created_at.localeCompare(a.created_at) || (a.hash < b.hash ? -1 : 1));

      const byThree = await walk(app, app.projects.acme, 3);
      expect(byThree.map((page) => page.count)).toEqual([3, 3, 3]);
      expect(byThree.flatMap((page) => page.items)).toEqual(expected);
      for (const item of expected) expect(Object.keys(item).sort()).toEqual(['cause', 'created_at', 'email', 'hash', 'reason', 'source']);

      expect((await walk(app, app.projects.acme, 4)).map((page) => page.count)).toEqual([4, 4, 1]);
      // The default page (50) holds them all.
      const all = expectSuccess(await app.api('GET', paths(app.projects.acme).list()), 200, listSuppressionsResponseSchema);
      expect(all).toEqual({ items: expected, next_cursor: null, count: 9 });
      expect(expectSuccess(await app.api('GET', paths(app.projects.acme).list('limit=100')), 200)).toEqual(all);
    });

    test('list refuses limit 0, 101, abc, 1.5, -1 and an empty limit with 400 invalid_request', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      for (const limit of ['0', '101', 'abc', '1.5', '-1', '', '1e2', '0x10']) {
        expectError(await app.api('GET', p.list(`limit=${limit}`)), 400, 'invalid_request');
      }
      expectSuccess(await app.api('GET', p.list('limit=1')), 200, listSuppressionsResponseSchema);
    });

    test('list refuses a garbage cursor, and a cursor of another project or listing, with 400 invalid_cursor', async () => {
      const app = await open();
      const { acme, globex } = app.projects;
      await add(app, 'ana@example.com');
      await add(app, 'bo@example.com');
      await add(app, 'ana@example.com', 'globex');
      await add(app, 'bo@example.com', 'globex');
      const page = expectSuccess(await app.api('GET', paths(acme).list('limit=1')), 200, listSuppressionsResponseSchema);
      const cursor = page.next_cursor!;
      expect(cursor).toEqual(expect.any(String));
      for (const garbage of ['garbage', 'not a cursor', '%%%', cursor.slice(0, -2), 'eyJ9', 'a'.repeat(3000)]) {
        expectError(await app.api('GET', paths(acme).list(new URLSearchParams({ cursor: garbage }).toString())), 400, 'invalid_cursor');
      }
      // The same cursor in globex's list, with a key that opens both projects.
      expectError(
        await app.api('GET', paths(globex).list(new URLSearchParams({ cursor, limit: '1' }).toString()), { key: 'both' }),
        400,
        'invalid_cursor',
      );
      // Or in another listing of the same project.
      expectError(await app.api('GET', `/projects/${acme}/messages?${new URLSearchParams({ cursor })}`), 400, 'invalid_cursor');
      // It still works where it belongs.
      const next = expectSuccess(
        await app.api('GET', paths(acme).list(new URLSearchParams({ cursor, limit: '1' }).toString())),
        200,
        listSuppressionsResponseSchema,
      );
      expect(next.count).toBe(1);
    });

    test('bulk add: a result per item in order, reasons and times kept, stronger reasons upgrade, invalid items reported', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      await add(app, 'manual@example.com');
      const items = [
        { email: 'Gone@Example.com', reason: 'hard_bounce', created_at: '2025-06-01T10:00:00Z' },
        { email: 'manual@example.com', reason: 'complaint', created_at: '2025-01-01' },
        { email: 'gone@example.com' }, // already there, stronger: present
        { email: 'no-at-sign' },
        { email: 'x@example.com', reason: 'bounced' },
        { email: 'x@example.com', created_at: '2999-01-01T00:00:00Z' },
        42,
      ];
      const answer = expectSuccess(
        await app.api('POST', `${p.list()}/bulk`, { json: { items, source: 'import' } }),
        200,
        bulkAddResponseSchema,
      );
      expect(answer.results.map((result) => [result.email, result.status])).toStrictEqual([
        ['Gone@Example.com', 'created'],
        ['manual@example.com', 'upgraded'],
        ['gone@example.com', 'present'],
        ['no-at-sign', 'invalid'],
        ['x@example.com', 'invalid'],
        ['x@example.com', 'invalid'],
        [null, 'invalid'],
      ]);
      expect(answer.results[1]).toMatchObject({ previous_reason: 'manual', hash: sha256('manual@example.com') });
      expect(answer.results.slice(3).map((result) => (result.status === 'invalid' ? result.error.code : null))).toStrictEqual([
        'invalid_email',
        'invalid_request',
        'invalid_request',
        'invalid_request',
      ]);
      const listed = expectSuccess(await app.api('GET', p.list()), 200, listSuppressionsResponseSchema).items;
      expect(listed.map((item) => [item.email, item.reason, item.created_at, item.source])).toStrictEqual([
        ['gone@example.com', 'hard_bounce', '2025-06-01T10:00:00.000Z', 'import'],
        // Upgraded by the import: its reason and cause are the import's, its time the earliest.
        ['manual@example.com', 'complaint', '2025-01-01T00:00:00.000Z', 'import'],
      ]);
    });

    test('bulk add and remove take at most 1 000 items (400 batch_too_large), and a body of items', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      const many = Array.from({ length: 1001 }, (_, i) => ({ email: `u${i}@example.com` }));
      expectError(await app.api('POST', `${p.list()}/bulk`, { json: { items: many } }), 400, 'batch_too_large');
      expectError(await app.api('POST', `${p.list()}/bulk-delete`, { json: { items: many } }), 400, 'batch_too_large');
      for (const json of [{}, { items: 'a@example.com' }, { items: [], source: 'webhook' }, [], null]) {
        expectError(await app.api('POST', `${p.list()}/bulk`, { json }), 400, 'invalid_request');
      }
      const full = expectSuccess(
        await app.api('POST', `${p.list()}/bulk`, { json: { items: many.slice(0, 1000) } }),
        200,
        bulkAddResponseSchema,
      );
      expect(full.results.every((result) => result.status === 'created')).toBe(true);
      expect(expectSuccess(await app.api('GET', p.check('u999@example.com')), 200, checkSuppressionResponseSchema)).toMatchObject({
        suppressed: true,
        reason: 'manual',
        source: 'api',
      });
    });

    test('bulk remove: by address or hash, deleted false when absent or removed by an earlier item', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      const ana = await add(app, 'ana@example.com');
      await add(app, 'bob@example.com');
      const answer = expectSuccess(
        await app.api('POST', `${p.list()}/bulk-delete`, {
          json: {
            items: [
              { hash: ana.hash.toUpperCase() },
              { email: 'BOB@example.com' },
              { email: 'ana@example.com' },
              { email: 'nobody@example.com' },
              { hash: 'xyz' },
              { email: 'a@example.com', hash: ana.hash },
            ],
          },
        }),
        200,
        bulkRemoveResponseSchema,
      );
      expect(answer.results).toStrictEqual([
        { hash: ana.hash, deleted: true },
        { hash: sha256('bob@example.com'), deleted: true },
        { hash: ana.hash, deleted: false },
        { hash: sha256('nobody@example.com'), deleted: false },
        { status: 'invalid', error: { code: 'invalid_request', message: expect.any(String) } },
        { status: 'invalid', error: { code: 'invalid_request', message: expect.any(String) } },
      ]);
      expect(expectSuccess(await app.api('GET', p.list()), 200, listSuppressionsResponseSchema).count).toBe(0);
    });
  });
}
