import { allowlistEntrySchema, applyEventsResultSchema, listAllowlistResponseSchema, suppressionSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { CLOCK_START } from './clock.js';
import { expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import { TRACKING_ID, sendgridEvents } from './provider-requests.js';
import type { TestApp } from './test-app.js';

const iso = (ms: number) => new Date(ms).toISOString();

const allowlistPath = (projectId: string, entry?: string) =>
  `/projects/${projectId}/allowlist${entry === undefined ? '' : `/${encodeURIComponent(entry)}`}`;

async function check(app: TestApp, email: string): Promise<unknown> {
  return expectSuccess(await app.api('GET', `/projects/${app.projects.acme}/suppressions/check?${new URLSearchParams({ email })}`), 200);
}

/** docs/http.md, "Allowlist": addresses and domains that automatic rules never suppress. */
export function describeAllowlistTests(open: OpenApp): void {
  describe('allowlist', () => {
    test('add answers 201 with the entry, then 200 with the same bytes; a page in code-point order; remove 204, then 404', async () => {
      const app = await open();
      const { acme, globex } = app.projects;
      const first = await app.api('POST', allowlistPath(acme), { json: { entry: ' Seed@Example.COM ' } });
      expect(expectSuccess(first, 201, allowlistEntrySchema)).toEqual({
        entry: 'seed@example.com',
        kind: 'address',
        created_at: iso(CLOCK_START),
      });
      app.clock.advance(1000);
      expect((await app.api('POST', allowlistPath(acme), { json: { entry: 'seed@example.com' } })).text).toBe(first.text);
      const domain = await app.api('POST', allowlistPath(acme), { json: { entry: '@Example.COM' } });
      expect(expectSuccess(domain, 201, allowlistEntrySchema)).toEqual({
        entry: '@example.com',
        kind: 'domain',
        created_at: iso(CLOCK_START + 1000),
      });

      const page = expectSuccess(await app.api('GET', `${allowlistPath(acme)}?limit=1`), 200, listAllowlistResponseSchema);
      expect(page.items.map((item) => item.entry)).toEqual(['@example.com']);
      const next = await app.api('GET', `${allowlistPath(acme)}?${new URLSearchParams({ limit: '1', cursor: page.next_cursor ?? '' })}`);
      expect(expectSuccess(next, 200, listAllowlistResponseSchema)).toEqual({
        items: [{ entry: 'seed@example.com', kind: 'address', created_at: iso(CLOCK_START) }],
        next_cursor: null,
        count: 1,
      });
      // Another project's allowlist is another list.
      expect(JSON.parse((await app.api('GET', allowlistPath(globex), { key: 'globex' })).text)).toEqual({
        items: [],
        next_cursor: null,
        count: 0,
      });

      const removed = await app.api('DELETE', allowlistPath(acme, '@example.com'));
      expect({ status: removed.status, text: removed.text }).toEqual({ status: 204, text: '' });
      expectError(await app.api('DELETE', allowlistPath(acme, '@example.com')), 404, 'allowlist_entry_not_found');
      // Named as it was added: normalized the same way.
      expect((await app.api('DELETE', allowlistPath(acme, 'SEED@example.com'))).status).toBe(204);
      expect(expectSuccess(await app.api('GET', allowlistPath(acme)), 200, listAllowlistResponseSchema).count).toBe(0);
    });

    test('refusals: invalid_email for what is neither an address nor @domain, invalid_request, invalid_cursor, forbidden', async () => {
      const app = await open();
      const { acme } = app.projects;
      for (const entry of ['not-an-address', '@', 'ana@localhost', '@@example.com', '']) {
        expectError(await app.api('POST', allowlistPath(acme), { json: { entry } }), 400, 'invalid_email');
      }
      for (const json of [{}, { entry: 42 }, { entry: null }, ['ana@example.com']]) {
        expectError(await app.api('POST', allowlistPath(acme), { json }), 400, 'invalid_request');
      }
      expectError(await app.api('DELETE', allowlistPath(acme, 'not-an-address')), 400, 'invalid_email');
      expectError(await app.api('GET', `${allowlistPath(acme)}?limit=0`), 400, 'invalid_request');
      expectError(await app.api('GET', `${allowlistPath(acme)}?cursor=nope`), 400, 'invalid_cursor');
      expectError(await app.api('POST', allowlistPath(acme), { key: 'globex', json: { entry: 'ana@example.com' } }), 403, 'forbidden');
      expectError(await app.api('GET', allowlistPath(acme), { key: null }), 401, 'missing_api_key');
    });

    test('an allowlisted address or domain that hard-bounces is recorded, not suppressed; added by hand, it is, marked allowlisted', async () => {
      const app = await open();
      const { acme } = app.projects;
      for (const entry of ['ana@example.com', '@example.org']) await app.api('POST', allowlistPath(acme), { json: { entry } });
      const recipients = ['ana@example.com', 'bo@example.org', 'cy@example.net'];
      const answer = await app.webhook('sendgrid', acme, sendgridEvents(app.secrets.acme, recipients, 'bounce', TRACKING_ID));
      expect(expectSuccess(answer, 200, applyEventsResultSchema)).toMatchObject({ accepted: 3, skipped: 0 });
      const messages = JSON.parse((await app.api('GET', `/projects/${acme}/messages`)).text) as { items: { recipient: string }[] };
      expect(messages.items.map((message) => message.recipient).sort()).toEqual(recipients);
      expect(await check(app, 'ana@example.com')).toEqual({ email: 'ana@example.com', suppressed: false });
      expect(await check(app, 'bo@example.org')).toEqual({ email: 'bo@example.org', suppressed: false });
      expect(await check(app, 'cy@example.net')).toMatchObject({ suppressed: true, reason: 'hard_bounce', source: 'webhook' });
      expect(await check(app, 'cy@example.net')).not.toHaveProperty('allowlisted');

      const added = await app.api('POST', `/projects/${acme}/suppressions`, { json: { email: 'bo@example.org' } });
      expect(expectSuccess(added, 201, suppressionSchema)).toMatchObject({ source: 'api', allowlisted: true });
      expect(await check(app, 'bo@example.org')).toMatchObject({ suppressed: true, reason: 'manual', allowlisted: true });
    });
  });
}
