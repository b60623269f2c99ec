import { gunzipSync, gzipSync } from 'node:zlib';
import { bindings, jsonOf, send, startTestApp, type Answer, type TestApp } from '@mailwarden/http-test-suite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createDashboard, dashboardContentSecurityPolicy, dashboardPages } from '../src/index.js';
import { startDashboardApp, type BindingName } from './harness.js';

/** The first-load budget of the issue: gzipped JavaScript and CSS of the dashboard's HTML. */
const FIRST_LOAD_BUDGET = 60 * 1024;

describe.each(Object.keys(bindings) as BindingName[])('the dashboard served by %s', (binding) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startDashboardApp({ binding });
  });
  afterAll(() => app.close());

  test('`{mount}/dashboard` redirects to `dashboard/`, relative, so any mount point works', async () => {
    const answer = await send(`${app.server.baseUrl}/dashboard`);
    expect([answer.status, answer.headers.get('location')]).toStrictEqual([308, 'dashboard/']);
  });

  test('the app and each page answer with the HTML under a strict CSP, revalidated', async () => {
    for (const path of ['', ...dashboardPages]) {
      const answer = await send(`${app.server.baseUrl}/dashboard/${path}`);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(answer.headers.get('cache-control')).toBe('no-cache');
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('x-frame-options')).toBe('DENY');
      const csp = answer.headers.get('content-security-policy') ?? '';
      expect(csp).toBe(dashboardContentSecurityPolicy);
      for (const directive of [
        "script-src 'self'",
        "object-src 'none'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "default-src 'none'",
      ]) {
        expect(csp.split('; ')).toContain(directive);
      }
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(answer.text).toContain('<div id="app"></div>');
    }
  });

  test('the HTML names its assets relatively and has no inline script or style', async () => {
    const { text } = await send(`${app.server.baseUrl}/dashboard/`);
    const references = [...text.matchAll(/(?:src|href)="([^"]*)"/g)].map((match) => match[1]!);
    expect(references.length).toBeGreaterThanOrEqual(3);
    for (const reference of references) expect(reference).toMatch(/^\.\//);
    expect(text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(text).not.toMatch(/<style|\sstyle=/);
  });

  test('hashed assets are immutable; an ETag gives 304; gzip only when accepted', async () => {
    const { text } = await send(`${app.server.baseUrl}/dashboard/`);
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(text)![1]!;
    const plain = await send(`${app.server.baseUrl}/dashboard/${script}`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('content-encoding')).toBeNull();
    const etag = plain.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = await send(`${app.server.baseUrl}/dashboard/${script}`, { headers: { 'if-none-match': etag } });
    expect([again.status, again.text]).toStrictEqual([304, '']);

    const zipped = await fetchRaw(`${app.server.baseUrl}/dashboard/${script}`, { 'accept-encoding': 'gzip, br' });
    expect(zipped.encoding).toBe('gzip');
    expect(gunzipSync(zipped.body).toString()).toBe(plain.text);
    const refused = await fetchRaw(`${app.server.baseUrl}/dashboard/${script}`, { 'accept-encoding': 'gzip;q=0, identity' });
    expect(refused.encoding).toBeUndefined();
  });

  test('HEAD answers the headers without a body; other methods are 405', async () => {
    const head = await send(`${app.server.baseUrl}/dashboard/`, { method: 'HEAD' });
    expect([head.status, head.text, head.headers.get('content-type')]).toStrictEqual([200, '', 'text/html; charset=utf-8']);
    const post = await send(`${app.server.baseUrl}/dashboard/`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect([post.status, errorOf(post).code, post.headers.get('allow')]).toStrictEqual([405, 'method_not_allowed', 'GET, HEAD']);
  });

  test('a path that is no file or page is the API’s 404, never the app', async () => {
    for (const path of ['nope', 'assets/nope.js', 'messages/extra', '../openapi.json/x', 'index.html/x']) {
      const answer = await send(`${app.server.baseUrl}/dashboard/${path}`);
      expect([path, answer.status, errorOf(answer).code]).toStrictEqual([path, 404, 'not_found']);
    }
  });

  test('the first load (HTML, then its scripts and styles) fits the gzip budget', async () => {
    const { text } = await send(`${app.server.baseUrl}/dashboard/`);
    const assets = [...text.matchAll(/(?:src|href)="\.\/(assets\/[^"]+\.(?:js|css))"/g)].map((match) => match[1]!);
    expect(assets.some((asset) => asset.endsWith('.js'))).toBe(true);
    let total = 0;
    for (const asset of assets)
      total += (await fetchRaw(`${app.server.baseUrl}/dashboard/${asset}`, { 'accept-encoding': 'gzip' })).body.length;
    expect(total).toBeLessThanOrEqual(FIRST_LOAD_BUDGET);
  });
});

test('without `dashboard`, the bindings answer 404 and say how to turn it on', async () => {
  const app = await startTestApp({ start: bindings.express5 });
  try {
    const answer = await send(`${app.server.baseUrl}/dashboard/`);
    expect([answer.status, errorOf(answer).code]).toStrictEqual([404, 'not_found']);
    expect(errorOf(answer).message).toContain('dashboard: true');
  } finally {
    await app.close();
  }
});

test('createDashboard serves gzip once computed, and refuses a folder without the app', () => {
  const dashboard = createDashboard();
  const first = dashboard.serve({ path: '/dashboard/', headers: { 'accept-encoding': 'gzip' }, head: false })!;
  const second = dashboard.serve({ path: '/dashboard/', headers: { 'accept-encoding': 'gzip' }, head: false })!;
  expect(second.body).toBe(first.body);
  expect(gunzipSync(first.body as Uint8Array).toString()).toContain('<div id="app">');
  expect(gzipSync('x').length).toBeGreaterThan(0);
  expect(() => createDashboard({ directory: '/nonexistent/mailwarden-dashboard' })).toThrow(/files are missing/);
});

function errorOf(answer: Answer): { code: string; message: string } {
  return (jsonOf(answer) as { error: { code: string; message: string } }).error;
}

/** GET without fetch's transparent decompression: the bytes and the Content-Encoding as sent. */
async function fetchRaw(url: string, headers: Record<string, string>): Promise<{ body: Buffer; encoding: string | undefined }> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    request(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ body: Buffer.concat(chunks), encoding: response.headers['content-encoding'] }));
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}
