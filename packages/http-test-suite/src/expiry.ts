import { createHash } from 'node:crypto';
import {
  batchCheckResponseSchema,
  bulkAddResponseSchema,
  checkSuppressionResponseSchema,
  listSuppressionsResponseSchema,
  suppressionSchema,
} from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { CLOCK_START } from './clock.js';
import { expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import type { TestApp } from './test-app.js';

const sha256 = (normalized: string) => createHash('sha256').update(normalized).digest('hex');
const iso = (ms: number) => new Date(ms).toISOString();
const HOUR = 3_600_000;

function paths(projectId: string) {
  const base = `/projects/${projectId}/suppressions`;
  return {
    list: (query = '') => `${base}${query === '' ? '' : `?${query}`}`,
    check: (email: string) => `${base}/check?${new URLSearchParams({ email })}`,
    batch: `${base}/check`,
    bulk: `${base}/bulk`,
  };
}

async function listedEmails(app: TestApp, query = ''): Promise<string[]> {
  const page = expectSuccess(await app.api('GET', paths(app.projects.acme).list(query)), 200, listSuppressionsResponseSchema);
  return page.items.map((item) => item.email).sort();
}

/** docs/http.md, "Suppressions that expire": `expires_at` or `ttl` on adds, the clock the service is given, `?expiring=`. */
export function describeExpiryTests(open: OpenApp): void {
  describe('suppressions that expire', () => {
    test('add with ttl or expires_at answers expires_at; the entry suppresses until exactly then, then is gone and can be added again', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      const ana = expectSuccess(await app.api('POST', p.list(), { json: { email: 'ana@example.com', ttl: 3600 } }), 201, suppressionSchema);
      expect(ana).toEqual({
        hash: sha256('ana@example.com'),
        email: 'ana@example.com',
        reason: 'manual',
        created_at: iso(CLOCK_START),
        source: 'api',
        cause: null,
        expires_at: iso(CLOCK_START + HOUR),
      });
      // An offset is read as such; the answer is UTC with milliseconds, as every time of the API.
      const bo = await app.api('POST', p.list(), { json: { email: 'bo@example.com', expires_at: '2026-04-02T13:00:00+01:00' } });
      expect(expectSuccess(bo, 201, suppressionSchema).expires_at).toBe(iso(CLOCK_START + 2 * HOUR));
      await app.api('POST', p.list(), { json: { email: 'cy@example.com' } });

      expect(await listedEmails(app, 'expiring=true')).toEqual(['ana@example.com', 'bo@example.com']);
      expect(await listedEmails(app, 'expiring=false')).toEqual(['cy@example.com']);
      const batch = await app.api('POST', p.batch, { json: { emails: ['Ana@example.com', 'cy@example.com'] } });
      expect(expectSuccess(batch, 200, batchCheckResponseSchema).results).toEqual([
        { email: 'Ana@example.com', suppressed: true, reason: 'manual', expires_at: iso(CLOCK_START + HOUR) },
        { email: 'cy@example.com', suppressed: true, reason: 'manual' },
      ]);

      app.clock.advance(HOUR - 1);
      expect(expectSuccess(await app.api('GET', p.check('ana@example.com')), 200, checkSuppressionResponseSchema)).toMatchObject({
        suppressed: true,
        expires_at: iso(CLOCK_START + HOUR),
      });
      app.clock.advance(1);
      expect((await app.api('GET', p.check('ana@example.com'))).text).toBe(JSON.stringify({ email: 'ana@example.com', suppressed: false }));
      expect(await listedEmails(app)).toEqual(['bo@example.com', 'cy@example.com']);
      // An expired entry counts as absent: adding the address again makes a new suppression, now without expiry.
      const again = expectSuccess(await app.api('POST', p.list(), { json: { email: 'ana@example.com' } }), 201, suppressionSchema);
      expect(again).toEqual({ ...ana, created_at: iso(CLOCK_START + HOUR), expires_at: undefined });
      expect(Object.keys(again)).not.toContain('expires_at');
    });

    test('refusals are 400 invalid_request and write nothing: both, not after now, a bad ttl or time, a bad expiring', async () => {
      const app = await open();
      const p = paths(app.projects.acme);
      const email = 'ana@example.com';
      for (const json of [
        { email, ttl: 60, expires_at: iso(CLOCK_START + HOUR) },
        { email, expires_at: iso(CLOCK_START) },
        { email, expires_at: '2026-04-01' },
        { email, ttl: 0 },
        { email, ttl: 1.5 },
        { email, ttl: '60' },
        { email, expires_at: 'tomorrow' },
        { email, expires_at: CLOCK_START + HOUR },
      ]) {
        expectError(await app.api('POST', p.list(), { json }), 400, 'invalid_request');
      }
      expectError(await app.api('GET', p.list('expiring=yes')), 400, 'invalid_request');
      expect(await listedEmails(app)).toEqual([]);

      // A bulk add judges each item: the valid ones are written.
      const bulk = await app.api('POST', p.bulk, {
        json: {
          items: [
            { email: 'ana@example.com', ttl: 60 },
            { email: 'bo@example.com', ttl: 60, expires_at: iso(CLOCK_START + HOUR) },
            { email: 'cy@example.com', expires_at: iso(CLOCK_START - 1) },
            { email: 'dee@example.com', ttl: 0 },
          ],
        },
      });
      const { results } = expectSuccess(bulk, 200, bulkAddResponseSchema);
      expect(results.map((result) => result.status)).toEqual(['created', 'invalid', 'invalid', 'invalid']);
      for (const result of results.slice(1)) expect(result).toMatchObject({ error: { code: 'invalid_request' } });
      expect(expectSuccess(await app.api('GET', p.check('ana@example.com')), 200)).toMatchObject({ expires_at: iso(CLOCK_START + 60_000) });
      expect(await listedEmails(app)).toEqual(['ana@example.com']);
    });
  });
}
