// One-click unsubscribe links in process and through the core handler (docs/unsubscribe.md). The HTTP
// conformance suite runs the flow over real sockets through every binding.
import { describe, expect, test } from 'vitest';
import { createHttpHandler, createMailwarden, createMemoryStore, type HttpRequest, type SuppressedNotice } from '../src/index.js';
import { unsubscribePageContentSecurityPolicy } from '../src/http/unsubscribe-page.js';
import { expectMailwardenError } from './expect-mailwarden-error.js';

const BASE_URL = 'https://mail.example.com/mailwarden';
const SECRET = 'unsubscribe-secret-of-32-characters!';
const NOW = Date.UTC(2026, 10, 27, 9);

function setup(options: { secrets?: string[]; baseUrl?: string } = {}) {
  const store = createMemoryStore();
  const suppressed: SuppressedNotice[] = [];
  const mailwarden = createMailwarden({
    store,
    now: () => NOW,
    unsubscribeLinks: { baseUrl: options.baseUrl ?? BASE_URL, secrets: options.secrets ?? [SECRET] },
    on: { suppressed: (notice) => void suppressed.push(notice) },
  });
  const http = createHttpHandler(mailwarden, { apiKeys: { 'acme-key': 'acme' }, logger: { error: () => {} } });
  return { store, mailwarden, http, suppressed };
}

/** The token of a link made for `acme`. */
const tokenOf = (url: string) => url.slice(`${BASE_URL}/projects/acme/unsubscribe/`.length);
const text = (body: string | Uint8Array) => Buffer.from(body).toString();
const codeOf = (body: string | Uint8Array) => (JSON.parse(text(body)) as { error: { code: string } }).error.code;
const linkRequest = (path: string, method: string, body?: string): HttpRequest => ({
  method,
  path,
  query: '',
  headers: body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' },
  ...(body === undefined ? {} : { body: new TextEncoder().encode(body) }),
});

describe('unsubscribeLinks.create', () => {
  test('a link under the base URL, with the two headers of RFC 8058', () => {
    const { mailwarden } = setup({ baseUrl: `${BASE_URL}/` });
    const link = mailwarden.unsubscribeLinks.create('acme', { email: 'Ana@Example.com', stream: 'marketing' });
    expect(link.url).toMatch(/^https:\/\/mail\.example\.com\/mailwarden\/projects\/acme\/unsubscribe\/[A-Za-z0-9_-]+$/);
    expect(link.headers).toStrictEqual({ 'List-Unsubscribe': `<${link.url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
    // Not readable in the URL: the address neither as typed, normalized nor base64url (its local part alone
    // would be chance: lower-cased, a random token holds "ana" in about 1 run of 250).
    for (const form of ['ana@example.com', 'ana%40example.com', Buffer.from('ana@example.com').toString('base64url').toLowerCase()]) {
      expect(link.url.toLowerCase()).not.toContain(form);
    }
    expect(mailwarden.unsubscribeLinks.read('acme', tokenOf(link.url))).toStrictEqual({ email: 'ana@example.com', stream: 'marketing' });
  });

  test('refuses an invalid address, stream or project', async () => {
    const { mailwarden } = setup();
    await expectMailwardenError(() => mailwarden.unsubscribeLinks.create('acme', { email: 'nope' }), 'invalid_email');
    await expectMailwardenError(() => mailwarden.unsubscribeLinks.create('acme', { email: 'a@example.com', stream: '' }), 'invalid_stream');
    await expectMailwardenError(
      () => mailwarden.unsubscribeLinks.create('acme', { email: 'a@example.com', stream: 'Marketing' }),
      'invalid_stream',
    );
    await expectMailwardenError(() => mailwarden.unsubscribeLinks.create('a/b', { email: 'a@example.com' }), 'invalid_request');
  });

  test('without configuration, every call says so', async () => {
    const mailwarden = createMailwarden();
    await expectMailwardenError(
      () => mailwarden.unsubscribeLinks.create('acme', { email: 'a@example.com' }),
      'unsubscribe_links_not_configured',
    );
    await expectMailwardenError(() => mailwarden.unsubscribeLinks.read('acme', 'AQ'), 'unsubscribe_links_not_configured');
    await expectMailwardenError(() => mailwarden.unsubscribeLinks.unsubscribe('acme', 'AQ'), 'unsubscribe_links_not_configured');
  });

  test('refuses a short secret or a base URL that is no URL when mailwarden is made', () => {
    expect(() => setup({ secrets: ['short'] })).toThrow(/at least 32/);
    expect(() => setup({ baseUrl: 'mail.example.com' })).toThrow();
  });
});

describe('unsubscribeLinks.unsubscribe', () => {
  test("suppresses in the link's stream, reason manual, source unsubscribe, once", async () => {
    const { mailwarden, suppressed } = setup();
    const { url } = mailwarden.unsubscribeLinks.create('acme', { email: 'ana@example.com', stream: 'marketing' });
    const first = await mailwarden.unsubscribeLinks.unsubscribe('acme', tokenOf(url));
    expect(first).toStrictEqual({ email: 'ana@example.com', stream: 'marketing', created: true });
    const again = await mailwarden.unsubscribeLinks.unsubscribe('acme', tokenOf(url));
    expect(again.created).toBe(false);
    await mailwarden.hooksSettled();
    expect(suppressed).toHaveLength(1);

    expect(await mailwarden.suppressions.check('acme', 'ana@example.com')).toStrictEqual({ email: 'ana@example.com', suppressed: false });
    expect(await mailwarden.suppressions.check('acme', 'ana@example.com', { stream: 'marketing' })).toMatchObject({
      suppressed: true,
      reason: 'manual',
      created_at: new Date(NOW).toISOString(),
      source: 'unsubscribe',
      cause: null,
      stream: 'marketing',
    });
    expect(await mailwarden.suppressions.check('acme', 'ana@example.com', { stream: 'digest' })).toMatchObject({ suppressed: false });
  });

  test('a link without a stream suppresses project-wide', async () => {
    const { mailwarden } = setup();
    const { url } = mailwarden.unsubscribeLinks.create('acme', { email: 'bo@example.com' });
    await mailwarden.unsubscribeLinks.unsubscribe('acme', tokenOf(url));
    expect(await mailwarden.suppressions.check('acme', 'bo@example.com')).toMatchObject({
      suppressed: true,
      reason: 'manual',
      source: 'unsubscribe',
    });
  });

  test('a token of another project, or under an unknown secret, is refused and writes nothing', async () => {
    const { mailwarden, store } = setup();
    const other = setup({ secrets: ['another-secret-of-32-characters-!!'] }).mailwarden;
    const forAcme = tokenOf(mailwarden.unsubscribeLinks.create('acme', { email: 'ana@example.com' }).url);
    const foreign = tokenOf(other.unsubscribeLinks.create('acme', { email: 'ana@example.com' }).url);
    await expectMailwardenError(() => mailwarden.unsubscribeLinks.unsubscribe('globex', forAcme), 'invalid_unsubscribe_token');
    await expectMailwardenError(() => mailwarden.unsubscribeLinks.unsubscribe('acme', foreign), 'invalid_unsubscribe_token');
    await expectMailwardenError(() => mailwarden.unsubscribeLinks.unsubscribe('acme', `${forAcme}A`), 'invalid_unsubscribe_token');
    for (const projectId of ['acme', 'globex']) expect((await store.listSuppressions(projectId, { limit: 10 })).length).toBe(0);
  });

  test('rotation: a link made before a new secret was put first still works', async () => {
    const before = setup().mailwarden;
    const { url } = before.unsubscribeLinks.create('acme', { email: 'ana@example.com' });
    const { mailwarden } = setup({ secrets: ['the-new-secret-of-32-characters!!', SECRET] });
    expect((await mailwarden.unsubscribeLinks.unsubscribe('acme', tokenOf(url))).created).toBe(true);
  });
});

describe('the link over HTTP (core handler)', () => {
  test('POST /projects/{projectId}/unsubscribe-links with the API key: the link; its errors', async () => {
    const { http } = setup();
    const post = (body: unknown, key = 'acme-key') =>
      http.handle({
        method: 'POST',
        path: '/projects/acme/unsubscribe-links',
        query: '',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: new TextEncoder().encode(JSON.stringify(body)),
      });
    const made = await post({ email: 'ana@example.com', stream: 'marketing' });
    expect(made.status).toBe(200);
    const link = JSON.parse(text(made.body)) as { url: string; headers: Record<string, string> };
    expect(Object.keys(link)).toStrictEqual(['url', 'headers']);
    expect(link.headers).toStrictEqual({ 'List-Unsubscribe': `<${link.url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
    for (const [body, code] of [
      [{ email: 'nope' }, 'invalid_email'],
      [{ email: 'a@example.com', stream: 'Nope' }, 'invalid_stream'],
      [{ stream: 'marketing' }, 'invalid_request'],
    ] as const) {
      const refused = await post(body);
      expect([refused.status, codeOf(refused.body)]).toStrictEqual([400, code]);
    }
    expect((await post({ email: 'a@example.com' }, 'other')).status).toBe(401);
  });

  test('GET shows the page and writes nothing; POST unsubscribes, twice the same; HEAD writes nothing', async () => {
    const { http, mailwarden, store } = setup();
    const { url } = mailwarden.unsubscribeLinks.create('acme', { email: 'ana@example.com', stream: 'marketing' });
    const path = url.slice(BASE_URL.length);

    const page = await http.handle(linkRequest(path, 'GET'));
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(unsubscribePageContentSecurityPolicy);
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(text(page.body)).toContain('<form method="post">');
    expect(text(page.body)).toContain('name="List-Unsubscribe" value="One-Click"');
    expect(text(page.body)).toContain('“marketing” email');
    expect(text(page.body)).not.toContain('ana');
    const head = await http.handle(linkRequest(path, 'HEAD'));
    expect([head.status, head.body]).toStrictEqual([200, '']);
    expect((await store.listSuppressions('acme', { limit: 10, stream: 'marketing' })).length).toBe(0);

    for (let i = 0; i < 2; i++) {
      const done = await http.handle(linkRequest(path, 'POST', 'List-Unsubscribe=One-Click'));
      expect(done.status).toBe(200);
      expect(text(done.body)).toContain('You are unsubscribed');
    }
    const listed = await store.listSuppressions('acme', { limit: 10, stream: 'marketing' });
    expect(listed.map((record) => [record.email, record.reason, record.provenance?.source])).toStrictEqual([
      ['ana@example.com', 'manual', 'unsubscribe'],
    ]);
  });

  test("POST works when the host app's form parser read the body first", async () => {
    const { http, mailwarden, store } = setup();
    const { url } = mailwarden.unsubscribeLinks.create('acme', { email: 'ana@example.com' });
    const done = await http.handle({
      method: 'POST',
      path: url.slice(BASE_URL.length),
      query: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '26' },
      parsedBody: { 'List-Unsubscribe': 'One-Click' },
    });
    expect(done.status).toBe(200);
    expect((await store.listSuppressions('acme', { limit: 10 })).length).toBe(1);
  });

  test('a tampered token, or a token of another project: 400 with the error body, nothing written', async () => {
    const { http, mailwarden, store } = setup();
    const { url } = mailwarden.unsubscribeLinks.create('acme', { email: 'ana@example.com' });
    const token = tokenOf(url);
    const tampered = `${token.slice(0, 10)}${token[10] === 'A' ? 'B' : 'A'}${token.slice(11)}`;
    for (const path of [
      `/projects/acme/unsubscribe/${tampered}`,
      `/projects/globex/unsubscribe/${token}`,
      '/projects/acme/unsubscribe/x',
    ]) {
      for (const method of ['GET', 'POST']) {
        const answer = await http.handle(linkRequest(path, method, method === 'POST' ? 'List-Unsubscribe=One-Click' : undefined));
        expect([answer.status, codeOf(answer.body)], `${method} ${path}`).toStrictEqual([400, 'invalid_unsubscribe_token']);
        expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      }
    }
    for (const projectId of ['acme', 'globex']) expect((await store.listSuppressions(projectId, { limit: 10 })).length).toBe(0);
  });

  test('without configuration, the link and the API answer 404 unsubscribe_links_not_configured', async () => {
    const http = createHttpHandler(createMailwarden(), { apiKeys: { k: 'acme' }, logger: { error: () => {} } });
    const page = await http.handle(linkRequest('/projects/acme/unsubscribe/AQ', 'GET'));
    expect([page.status, codeOf(page.body)]).toStrictEqual([404, 'unsubscribe_links_not_configured']);
    const made = await http.handle({
      method: 'POST',
      path: '/projects/acme/unsubscribe-links',
      query: '',
      headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
      body: new TextEncoder().encode('{"email":"a@example.com"}'),
    });
    expect([made.status, codeOf(made.body)]).toStrictEqual([404, 'unsubscribe_links_not_configured']);
  });
});
