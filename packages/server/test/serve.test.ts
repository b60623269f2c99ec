// The standalone service as an operator runs it: configuration, store selection, health, logs,
// graceful shutdown, several instances on one database, and `mailwarden serve --demo` as a process, tried
// as a new user would: the printed curl commands pasted into a shell, the printed dashboard opened in
// Chromium and signed in with the printed key.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { createMailwarden, createMemoryStore, MailwardenError, type Store } from '@mailwarden/core';
import { chromium } from 'playwright-core';
import { afterEach, describe, expect, inject, test } from 'vitest';
import { apiKeyScopes, loadConfig, type ServerConfig } from '../src/config.js';
import type { OpenedStore } from '../src/store-settings.js';
import { openStore, storeKind } from '../src/store.js';
import { redactQuery, startService, type Service } from '../src/service.js';
import { startDemoProcess } from './demo-process.js';

const run = promisify(execFile);
const services: Service[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.close()));
});

function config(overrides: Record<string, unknown> = {}): ServerConfig {
  const directory = mkdtempSync(join(tmpdir(), 'mailwarden-config-'));
  const file = join(directory, 'config.json');
  writeFileSync(file, JSON.stringify({ port: 0, logLevel: 'silent', projects: { acme: { apiKeys: ['acme-key'] } }, ...overrides }));
  return loadConfig({ file, env: {} });
}

function memory(store: Store = createMemoryStore()): OpenedStore {
  return { kind: 'memory', store, close: () => store.close() };
}

async function start(serverConfig: ServerConfig, opened: OpenedStore, logStream?: NodeJS.WritableStream): Promise<Service> {
  const service = await startService(serverConfig, opened, logStream === undefined ? {} : { logStream });
  services.push(service);
  return service;
}

const asAcme = { 'x-api-key': 'acme-key', 'content-type': 'application/json' };

describe('configuration', () => {
  test('a file and environment variables combine; MAILWARDEN_API_KEYS adds project and admin keys', () => {
    const directory = mkdtempSync(join(tmpdir(), 'mailwarden-config-'));
    const file = join(directory, 'config.json');
    writeFileSync(file, JSON.stringify({ projects: { acme: { apiKeys: ['k1'] } } }));
    const loaded = loadConfig({ file, env: { PORT: '8080', MAILWARDEN_API_KEYS: 'acme:k2, beta:k3,*:root' } });
    expect(loaded.port).toBe(8080);
    expect(loaded.host).toBe('127.0.0.1');
    expect(apiKeyScopes(loaded)).toStrictEqual({ k1: ['acme'], k2: ['acme'], k3: ['beta'], root: '*' });
  });

  test('${NAME} in the file is replaced by the environment variable, and a missing one is named', () => {
    const directory = mkdtempSync(join(tmpdir(), 'mailwarden-config-'));
    const file = join(directory, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({ projects: { acme: { apiKeys: ['${ACME_KEY}'], webhooks: { mailgun: { signingKey: 'key-${MG}-x' } } } } }),
    );
    const loaded = loadConfig({ file, env: { ACME_KEY: 'k-from-env', MG: 'abc' } });
    expect(loaded.projects.acme?.apiKeys).toStrictEqual(['k-from-env']);
    expect(loaded.projects.acme?.webhooks?.mailgun?.signingKey).toBe('key-abc-x');
    expect(() => loadConfig({ file, env: { ACME_KEY: 'k' } })).toThrow(/\$\{MG\}.*MG is not set/);
  });

  test('one key may open several projects', () => {
    const loaded = loadConfig({ env: { MAILWARDEN_API_KEYS: 'acme:shared,beta:shared' } });
    expect(apiKeyScopes(loaded)).toStrictEqual({ shared: ['acme', 'beta'] });
  });

  test.each([
    [{ port: 'eighty' }, 'port'],
    [{ projects: { 'bad id!': {} } }, 'projects'],
    [{ projects: { acme: { webhooks: { sendgrid: {} } } } }, 'projects.acme.webhooks.sendgrid.publicKey'],
    [{ projects: { acme: { webhooks: { ses: { topicArns: ['not-an-arn'] } } } } }, 'topicArns'],
    [{ unknownSetting: true }, 'unknownSetting'],
  ])('a wrong configuration fails the start, naming the setting: %j', (bad, named) => {
    const directory = mkdtempSync(join(tmpdir(), 'mailwarden-config-'));
    const file = join(directory, 'config.json');
    writeFileSync(file, JSON.stringify(bad));
    expect(() => loadConfig({ file, env: {} })).toThrow(named);
  });

  test('a missing file, a file that is not JSON, and malformed key pairs are refused', () => {
    expect(() => loadConfig({ file: '/nonexistent/mailwarden.json', env: {} })).toThrow(/Cannot read/);
    const directory = mkdtempSync(join(tmpdir(), 'mailwarden-config-'));
    writeFileSync(join(directory, 'bad.json'), '{ nope');
    expect(() => loadConfig({ file: join(directory, 'bad.json'), env: {} })).toThrow(/not a JSON object/);
    expect(() => loadConfig({ env: { MAILWARDEN_API_KEYS: 'no-colon' } })).toThrow(/project:key/);
  });

  test('the store is memory by default, else chosen by DATABASE_URL, REDIS_URL or MAILWARDEN_STORE', () => {
    expect(storeKind({})).toBe('memory');
    expect(storeKind({ REDIS_URL: 'redis://x' })).toBe('redis');
    expect(storeKind({ DATABASE_URL: 'postgres://x' })).toBe('postgres');
    expect(() => storeKind({ REDIS_URL: 'redis://x', DATABASE_URL: 'postgres://x' })).toThrow(/MAILWARDEN_STORE/);
    expect(storeKind({ REDIS_URL: 'redis://x', DATABASE_URL: 'postgres://x', MAILWARDEN_STORE: 'redis' })).toBe('redis');
    expect(() => storeKind({ MAILWARDEN_STORE: 'mongo' })).toThrow(/memory, redis or postgres/);
  });

  test.each([
    ['MAILWARDEN_STORE_CONNECT_TIMEOUT_MS', 'soon'],
    ['MAILWARDEN_STORE_RECONNECT_DELAY_MS', '0'],
    ['MAILWARDEN_REDIS_COMMAND_TIMEOUT_MS', '1.5'],
    ['MAILWARDEN_PG_POOL_SIZE', '-1'],
  ])('a store connection setting that is not a positive whole number fails the start, naming it: %s=%s', async (name, value) => {
    await expect(openStore({ REDIS_URL: inject('redisUrl'), [name]: value })).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining(name),
    });
    await expect(openStore({ DATABASE_URL: inject('databaseUrl'), [name]: value })).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining(name),
    });
  });
});

describe('the service', () => {
  test('serves the API under basePath, /health, /ready and an OpenAPI document that names basePath', async () => {
    const service = await start(config({ basePath: '/mailwarden' }), memory());
    expect(service.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mailwarden$/);
    const origin = new URL(service.url).origin;
    expect(await (await fetch(`${origin}/health`)).json()).toStrictEqual({ status: 'ok' });
    expect(await (await fetch(`${origin}/ready`)).json()).toStrictEqual({ status: 'ready', store: 'memory' });

    const added = await fetch(`${service.url}/projects/acme/suppressions`, {
      method: 'POST',
      headers: asAcme,
      body: '{"email":"a@example.com"}',
    });
    expect(added.status).toBe(201);
    const check = await fetch(`${service.url}/projects/acme/suppressions/check?email=a%40example.com`, { headers: asAcme });
    expect(await check.json()).toMatchObject({ suppressed: true, reason: 'manual' });
    expect((await fetch(`${service.url}/projects/acme/suppressions`)).status).toBe(401);
    const openapi = (await (await fetch(`${service.url}/openapi.json`)).json()) as { servers: { url: string }[] };
    expect(openapi.servers).toStrictEqual([{ url: '/mailwarden' }]);
  });

  test('serves the suppression lists of streams: add, check, list and remove with a stream; answers without one unchanged', async () => {
    const service = await start(config({ basePath: '/mailwarden' }), memory());
    const api = `${service.url}/projects/acme/suppressions`;
    const added = await fetch(api, {
      method: 'POST',
      headers: asAcme,
      body: '{"email":"a@example.com","stream":"marketing","source":"unsubscribe"}',
    });
    expect(added.status).toBe(201);
    const suppression = (await added.json()) as { hash: string };
    expect(suppression).toMatchObject({ reason: 'manual', source: 'unsubscribe', stream: 'marketing' });
    const check = (query: string) =>
      fetch(`${api}/check?email=a%40example.com${query}`, { headers: asAcme }).then((answer) => answer.text());
    expect(JSON.parse(await check('&stream=marketing'))).toMatchObject({ suppressed: true, stream: 'marketing' });
    expect(await check('')).toBe('{"email":"a@example.com","suppressed":false}');
    expect(await check('&stream=')).toBe('{"email":"a@example.com","suppressed":false}');
    const listed = (await (await fetch(`${api}?stream=marketing`, { headers: asAcme })).json()) as { count: number };
    expect(listed.count).toBe(1);
    const invalid = await fetch(`${api}?stream=Marketing`, { headers: asAcme });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { code: string } }).error.code).toBe('invalid_stream');
    const removed = await fetch(`${api}/${suppression.hash}?stream=marketing`, { method: 'DELETE', headers: asAcme });
    expect(await removed.json()).toStrictEqual({ deleted: true, hash: suppression.hash, stream: 'marketing' });
  });

  test('/ready answers 503 store_unavailable when the store does not', async () => {
    const store = createMemoryStore();
    const down: Store = {
      ...store,
      getSuppression: async () => {
        throw new MailwardenError('store_unavailable', 'down');
      },
    };
    const service = await start(config(), memory(down));
    const ready = await fetch(`${service.url}/ready`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe('5');
    expect(((await ready.json()) as { error: { code: string } }).error.code).toBe('store_unavailable');
  });

  test('/ready answers 503 within a second when the store never answers', async () => {
    const hanging: OpenedStore = { ...memory(), ready: () => new Promise(() => {}) };
    const service = await start(config(), hanging);
    const started = performance.now();
    const ready = await fetch(`${service.url}/ready`);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe('5');
    expect(await ready.json()).toMatchObject({
      error: { code: 'store_unavailable', message: expect.stringMatching(/did not answer within/) },
    });
  });

  test('logs are JSON lines without addresses in clear', async () => {
    const lines: string[] = [];
    const logStream = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    const service = await start(config({ logLevel: 'info' }), memory(), logStream);
    await fetch(`${service.url}/projects/acme/suppressions/check?email=secret.person%40example.com`, { headers: asAcme });
    await fetch(`${service.url}/projects/acme/suppressions`, {
      method: 'POST',
      headers: asAcme,
      body: '{"email":"other.secret@example.com"}',
    });
    await service.close();
    const log = lines.join('');
    expect(log).not.toMatch(/secret/);
    // One line per request, with its method, path, status and time.
    const requests = lines
      .map((line) => JSON.parse(line) as { msg: string; req?: object; res?: object; responseTime?: number })
      .filter((line) => line.req !== undefined);
    expect(requests).toEqual([
      expect.objectContaining({
        msg: 'request completed',
        req: expect.objectContaining({ method: 'GET', url: '/projects/acme/suppressions/check?email=redacted' }),
        res: { statusCode: 200 },
        responseTime: expect.any(Number),
      }),
      expect.objectContaining({
        msg: 'request completed',
        req: expect.objectContaining({ method: 'POST', url: '/projects/acme/suppressions' }),
        res: { statusCode: 201 },
      }),
    ]);
  });

  test('redactQuery replaces every email parameter and keeps the rest', () => {
    expect(redactQuery('/p?email=a%40b.c&limit=5')).toBe('/p?email=redacted&limit=5');
    expect(redactQuery('/p?Email=x&email=y')).toBe('/p?Email=redacted&email=redacted');
    expect(redactQuery('/p')).toBe('/p');
  });

  test('close lets an in-flight request finish, then closes the store', async () => {
    const store = createMemoryStore();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const inside = new Promise<void>((resolve) => (reached = resolve));
    let closed = false;
    const slow: Store = {
      ...store,
      getSuppression: async (projectId, hash) => {
        reached();
        await released;
        return store.getSuppression(projectId, hash);
      },
      close: async () => {
        closed = true;
        await store.close();
      },
    };
    const service = await start(config(), memory(slow));
    const response = fetch(`${service.url}/projects/acme/suppressions/check?email=a%40example.com`, { headers: asAcme });
    await inside;
    const closing = service.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(false);
    release();
    expect((await response).status).toBe(200);
    await closing;
    expect(closed).toBe(true);
  });
});

describe('several instances on one store', () => {
  test.each(['redis', 'postgres'] as const)(
    '%s: what one instance writes, another reads; the store is migrated on start and purged of expired suppressions',
    async (kind) => {
      const env =
        kind === 'redis'
          ? { REDIS_URL: inject('redisUrl'), MAILWARDEN_REDIS_KEY_PREFIX: `serve-${randomUUID()}:` }
          : { DATABASE_URL: inject('databaseUrl'), MAILWARDEN_PG_SCHEMA: `serve_${randomUUID().replaceAll('-', '')}` };
      const [first, second] = await Promise.all([openStore(env), openStore(env)]);
      expect(first.kind).toBe(kind);
      const a = await start(config(), first);
      const b = await start(config(), second);
      const added = await fetch(`${a.url}/projects/acme/suppressions`, {
        method: 'POST',
        headers: asAcme,
        body: '{"email":"shared@example.com"}',
      });
      expect(added.status).toBe(201);
      const again = await fetch(`${b.url}/projects/acme/suppressions`, {
        method: 'POST',
        headers: asAcme,
        body: '{"email":"shared@example.com"}',
      });
      expect(again.status).toBe(200);
      const check = await fetch(`${b.url}/projects/acme/suppressions/check?email=shared%40example.com`, { headers: asAcme });
      expect(await check.json()).toMatchObject({ suppressed: true });
      expect(await (await fetch(`${new URL(b.url).origin}/ready`)).json()).toStrictEqual({ status: 'ready', store: kind });

      // The hourly sweep purges expired suppressions on this store too.
      const brief = await fetch(`${a.url}/projects/acme/suppressions`, {
        method: 'POST',
        headers: asAcme,
        body: '{"email":"brief@example.com","ttl":60}',
      });
      expect(brief.status).toBe(201);
      expect(await first.purgeExpired!(Date.now() + 120_000)).toBeGreaterThanOrEqual(1);
      const stored = await first.store.listSuppressions('acme', { limit: 10 });
      expect(stored.map((record) => record.email)).toStrictEqual(['shared@example.com']);
    },
  );

  test('the memory store keeps retentionDays too: the hourly purge forgets messages past it, suppressions stay', async () => {
    const opened = await openStore({}, { retentionMs: 24 * 60 * 60 * 1000 });
    try {
      expect(opened.purgeExpired).toBeTypeOf('function');
      const at = Date.parse('2026-11-01T00:00:00.000Z');
      const mailwarden = createMailwarden({ store: opened.store });
      await mailwarden.applyEvents('acme', [
        {
          provider: 'sendgrid',
          type: 'bounced',
          bounceClass: 'hard',
          messageId: 'm1',
          recipient: 'gone@example.com',
          trackingId: 't',
          occurredAt: new Date(at),
          eventKey: 'k1',
        },
      ]);
      await opened.purgeExpired!(at + 23 * 60 * 60 * 1000);
      expect((await mailwarden.messages.list('acme')).count).toBe(1);
      await opened.purgeExpired!(at + 25 * 60 * 60 * 1000);
      expect((await mailwarden.messages.list('acme')).count).toBe(0);
      expect(await mailwarden.suppressions.check('acme', 'gone@example.com')).toMatchObject({ suppressed: true, reason: 'hard_bounce' });
    } finally {
      await opened.close();
    }
  });

  test('an unreachable store fails the start with store_unavailable', async () => {
    await expect(openStore({ REDIS_URL: 'redis://127.0.0.1:1' })).rejects.toMatchObject({ code: 'store_unavailable' });
    await expect(openStore({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' })).rejects.toMatchObject({ code: 'store_unavailable' });
  });
});

describe('mailwarden serve --demo, as a process', () => {
  test('prints the base URL, the demo key, curl commands that work when pasted and the dashboard that the key opens; SIGTERM stops it cleanly', async () => {
    const demo = await startDemoProcess();
    const { output, key } = demo;
    try {
      expect(key).toMatch(/^mw_demo_[0-9a-f]{24}$/);
      // Nothing but the banner: no deprecation or other process warning from a dependency's options.
      expect(output).not.toMatch(/Warning|Deprecation|FSTDEP/);
      const commands = output.split('\n').filter((line) => line.trim().startsWith('curl '));
      expect(commands).toHaveLength(6);
      const [check, add, messages, alerts, link, openapi] = await Promise.all(
        commands.map(async (command) => JSON.parse((await run('sh', ['-c', command])).stdout)),
      );
      expect(check).toMatchObject({ email: 'bounced@example.com', suppressed: true, reason: 'hard_bounce' });
      expect(add).toMatchObject({ email: 'someone@example.com', reason: 'manual' });
      expect(messages.items.length).toBeGreaterThan(0);
      expect(alerts).toMatchObject({ window: 1000, bounce: { firing: false }, complaint: { firing: true } });
      // The printed /metrics answers without a token, in the Prometheus text format.
      const metrics = await fetch(/^Metrics for Prometheus: (\S+)$/m.exec(output)![1]!);
      expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(await metrics.text()).toMatch(
        /^mailwarden_http_requests_total\{route="\/projects\/\{projectId\}\/alerts",method="GET",status="200"\} 1$/m,
      );
      expect(openapi.openapi).toBe('3.1.0');
      // The printed key makes a one-click unsubscribe link that works at once: a page, then the unsubscribe.
      expect(link.url.startsWith(`${demo.url}/projects/demo/unsubscribe/`), link.url).toBe(true);
      expect((await fetch(link.url)).headers.get('content-type')).toBe('text/html; charset=utf-8');
      const unsubscribed = await fetch(link.url, { method: 'POST', body: new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }) });
      expect([unsubscribed.status, await unsubscribed.text()]).toStrictEqual([200, expect.stringContaining('You are unsubscribed')]);

      const dashboard = /^Dashboard: (\S+)$/m.exec(output)?.[1];
      expect(dashboard).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/dashboard\/$/);
      const browser = await chromium.connect(inject('browserWsEndpoint'));
      try {
        const page = await browser.newPage();
        await page.goto(dashboard!);
        await page.getByLabel('Project').fill('demo');
        await page.getByLabel('API key').fill(key);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('link', { name: 'Tracking IDs' }).click();
        await expect.poll(() => page.getByRole('row').count()).toBe(1 + 6);
        await page.getByRole('link', { name: 'welcome-2026-11' }).click();
        await page.getByRole('heading', { name: 'Counts for welcome-2026-11' }).waitFor();
      } finally {
        await browser.close();
      }
    } finally {
      expect(await demo.stop()).toBe(0);
    }
  });
});
