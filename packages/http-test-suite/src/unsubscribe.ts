import { describe, expect, test } from 'vitest';
import { expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import { jsonOf } from './http.js';
import { UNSUBSCRIBE_LINK_BASE } from './mailwarden-host.js';
import type { TestApp } from './test-app.js';

/** The RFC 8058 request a mail client sends: a form body, no API key. */
const ONE_CLICK = { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' };

interface Link {
  url: string;
  headers: Record<string, string>;
}

/** Makes a link with the project's API key; checks its shape. */
async function makeLink(app: TestApp, projectId: string, body: { email: string; stream?: string }): Promise<Link> {
  const link = expectSuccess(await app.api('POST', `/projects/${projectId}/unsubscribe-links`, { json: body, key: 'admin' }), 200) as Link;
  expect(Object.keys(link)).toStrictEqual(['url', 'headers']);
  expect(link.url.startsWith(`${UNSUBSCRIBE_LINK_BASE}/projects/${projectId}/unsubscribe/`), link.url).toBe(true);
  expect(link.headers).toStrictEqual({ 'List-Unsubscribe': `<${link.url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
  return link;
}

/** The link's path below the mount point: the public URL is a proxy's in front of the app. */
const pathOf = (link: Link) => link.url.slice(UNSUBSCRIBE_LINK_BASE.length);

/** Every suppression of a project's list (the project-wide one, or a stream's), as listed over the API. */
async function listed(app: TestApp, projectId: string, stream?: string): Promise<unknown[]> {
  const query = stream === undefined ? '' : `?stream=${stream}`;
  return (jsonOf(await app.api('GET', `/projects/${projectId}/suppressions${query}`, { key: 'admin' })) as { items: unknown[] }).items;
}

/** One-click unsubscribe (RFC 8058; docs/unsubscribe.md): a link made by the API, used without a key. */
export function describeUnsubscribeTests(open: OpenApp): void {
  describe('one-click unsubscribe', () => {
    test('a link made by the API works at once: GET shows a page and writes nothing, POST unsubscribes in its stream', async () => {
      const app = await open();
      const { acme } = app.projects;
      const link = await makeLink(app, acme, { email: 'Ana@Example.com', stream: 'marketing' });
      // The address is unreadable in the URL: neither as typed, normalized, URL-encoded nor base64url. (Not
      // its local part alone: lower-cased, a random token of ~120 characters holds "ana" in about 1 run of 250.)
      const url = link.url.toLowerCase();
      for (const form of ['ana@example.com', 'ana%40example.com', Buffer.from('ana@example.com').toString('base64url').toLowerCase()]) {
        expect(url).not.toContain(form);
      }

      for (const method of ['GET', 'HEAD']) {
        const page = await app.request(pathOf(link), { method });
        expect(page.status, page.text).toBe(200);
        expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(page.headers.get('content-security-policy')).toContain("form-action 'self'");
        expect(page.headers.get('cache-control')).toBe('no-store');
        if (method === 'GET') expect(page.text).toContain('<form method="post">');
      }
      expect(await listed(app, acme, 'marketing')).toStrictEqual([]);

      const done = await app.request(pathOf(link), { method: 'POST', ...ONE_CLICK });
      expect(done.status, done.text).toBe(200);
      expect(done.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const check = (stream?: string) =>
        app.api('GET', `/projects/${acme}/suppressions/check?email=ana%40example.com${stream === undefined ? '' : `&stream=${stream}`}`);
      expect(jsonOf(await check('marketing'))).toStrictEqual({
        email: 'ana@example.com',
        suppressed: true,
        reason: 'manual',
        created_at: new Date(app.clock.now()).toISOString(),
        source: 'unsubscribe',
        cause: null,
        stream: 'marketing',
      });
      expect(jsonOf(await check())).toStrictEqual({ email: 'ana@example.com', suppressed: false });
      expect(jsonOf(await check('weekly-digest'))).toStrictEqual({ email: 'ana@example.com', suppressed: false });
    });

    test('a second POST changes nothing; a link without a stream unsubscribes from everything', async () => {
      const app = await open();
      const { acme } = app.projects;
      const link = await makeLink(app, acme, { email: 'bo@example.com', stream: 'marketing' });
      expect((await app.request(pathOf(link), { method: 'POST', ...ONE_CLICK })).status).toBe(200);
      const first = await listed(app, acme, 'marketing');
      app.clock.advance(60_000);
      const again = await app.request(pathOf(link), { method: 'POST', ...ONE_CLICK });
      expect(again.status).toBe(200);
      expect(await listed(app, acme, 'marketing')).toStrictEqual(first);
      expect(first).toHaveLength(1);

      const everything = await makeLink(app, acme, { email: 'bo@example.com' });
      // A browser's form post of the page's button is the same request.
      expect((await app.request(pathOf(everything), { method: 'POST', ...ONE_CLICK })).status).toBe(200);
      expect(await listed(app, acme)).toMatchObject([{ email: 'bo@example.com', reason: 'manual', source: 'unsubscribe', cause: null }]);
      expect(Object.keys((await listed(app, acme))[0] as object)).not.toContain('stream');
    });

    test('a tampered token, or a token of another project: 400 invalid_unsubscribe_token, nothing written', async () => {
      const app = await open();
      const { acme, globex } = app.projects;
      const link = await makeLink(app, acme, { email: 'cy@example.com', stream: 'marketing' });
      const token = pathOf(link).split('/').pop()!;
      const flipped = `${token.slice(0, 20)}${token[20] === 'A' ? 'B' : 'A'}${token.slice(21)}`;
      for (const path of [
        `/projects/${acme}/unsubscribe/${flipped}`,
        `/projects/${acme}/unsubscribe/${token.slice(0, -2)}`,
        `/projects/${globex}/unsubscribe/${token}`,
        `/projects/${acme}/unsubscribe/not-a-token`,
      ]) {
        expectError(await app.request(path), 400, 'invalid_unsubscribe_token');
        expectError(await app.request(path, { method: 'POST', ...ONE_CLICK }), 400, 'invalid_unsubscribe_token');
      }
      for (const projectId of [acme, globex]) {
        expect(await listed(app, projectId)).toStrictEqual([]);
        expect(await listed(app, projectId, 'marketing')).toStrictEqual([]);
      }
    });

    test('making a link takes the API key of the project, a valid address and stream', async () => {
      const app = await open();
      const { acme, globex } = app.projects;
      const path = `/projects/${acme}/unsubscribe-links`;
      expectError(await app.api('POST', path, { json: { email: 'a@example.com' }, key: null }), 401, 'missing_api_key');
      expectError(await app.api('POST', path, { json: { email: 'a@example.com' }, key: 'globex' }), 403, 'forbidden');
      expectError(await app.api('POST', path, { json: { email: 'nope' } }), 400, 'invalid_email');
      expectError(await app.api('POST', path, { json: { email: 'a@example.com', stream: 'Marketing' } }), 400, 'invalid_stream');
      expectError(await app.api('POST', path, { json: { email: 'a@example.com', stream: '' } }), 400, 'invalid_stream');
      expectError(await app.api('POST', path, { json: {} }), 400, 'invalid_request');
      // A link is stateless: making one writes nothing.
      await makeLink(app, globex, { email: 'a@example.com' });
      expect(await listed(app, globex)).toStrictEqual([]);
    });
  });
}
