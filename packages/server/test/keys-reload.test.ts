// Keys at rest and reloads (docs/server.md, "API keys" and "Reloading the configuration"): key items in
// the configuration, `mailwarden keys new`, reloads under load through SIGHUP, key sync to the feed from
// two instances, and the route × scope table through the service.
import { execFile, spawn } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { apiScopes, createMailwarden, createMemoryStore, routes, unsubscribeRoutes, type Route } from '@mailwarden/core';
import type { KeyChange } from '@mailwarden/core/store';
import { afterEach, describe, expect, test } from 'vitest';
import { loadConfig, type ServerConfig } from '../src/config.js';
import { apiKeyHash as keyHash } from '@mailwarden/core';
import { restartNeeded } from '../src/reload.js';
import { startService, type Service } from '../src/service.js';
import { importSuppressions } from '../src/suppressions-file/import.js';
import type { OpenedStore } from '../src/store-settings.js';
import { cleanEnv, cliCommand } from './demo-process.js';

const run = promisify(execFile);
const services: Service[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.close()));
});

function configFile(content: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'mailwarden-keys-')), 'config.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

const configOf = (content: Record<string, unknown>): ServerConfig =>
  loadConfig({ file: configFile({ port: 0, logLevel: 'silent', ...content }), env: {} });

/** A store shared by several services: closing one leaves it open for the others. */
function shared(store = createMemoryStore({ changes: {} })): OpenedStore {
  return { kind: 'memory', store, close: async () => {} };
}

async function start(config: ServerConfig, opened: OpenedStore = shared()): Promise<Service> {
  const service = await startService(config, opened);
  services.push(service);
  return service;
}

describe('key items in the configuration', () => {
  test('a string, a named key, a hashed key with scopes; names and projects as the handler sees them', () => {
    const hash = keyHash('mw_x');
    const config = configOf({
      adminApiKeys: [{ name: 'ops', hash, scopes: ['admin', 'read'] }],
      projects: { acme: { apiKeys: ['plain', { name: 'sender', key: 'k-sender', scopes: ['check'] }] } },
    });
    expect(config.adminApiKeys).toEqual([{ name: 'ops', hash, scopes: ['admin', 'read'] }]);
  });

  test.each([
    [{ projects: { acme: { apiKeys: [{ name: 'a', hash: 'sha256:abc' }] } } }, 'projects.acme.apiKeys.0'],
    [{ projects: { acme: { apiKeys: [{ name: 'a', key: 'k', hash: keyHash('k') }] } } }, 'one of them'],
    [{ projects: { acme: { apiKeys: [{ name: 'a' }] } } }, 'one of them'],
    [{ projects: { acme: { apiKeys: [{ name: 'a', key: 'k', scopes: ['send'] }] } } }, 'scopes'],
    [{ projects: { acme: { apiKeys: [{ name: 'bad name', key: 'k' }] } } }, 'a key name'],
    [
      {
        projects: {
          acme: {
            apiKeys: [
              { name: 'a', key: 'k1' },
              { name: 'a', key: 'k2' },
            ],
          },
        },
      },
      'projects.acme.apiKeys.1.name: the name a is taken',
    ],
    [{ adminApiKeys: [{ name: 'a', key: 'k1' }], projects: { acme: { apiKeys: [{ name: 'a', key: 'k2' }] } } }, 'or an admin key'],
    [
      { projects: { acme: { apiKeys: [{ name: 'a', key: 'k' }] }, beta: { apiKeys: [{ name: 'b', hash: keyHash('k') }] } } },
      'configured elsewhere as a',
    ],
  ])('%j is refused, naming %s', (content, named) => {
    expect(() => configOf(content)).toThrow(named);
  });

  test('a reload may change keys, webhook secrets and unsubscribe secrets; anything else is named as needing a restart', () => {
    const before = configOf({ projects: { acme: { apiKeys: ['k1'] } } });
    const keysOnly = configOf({
      projects: { acme: { apiKeys: ['k2'], webhooks: { mailgun: { signingKey: 's' } } }, beta: { apiKeys: ['k3'] } },
    });
    expect(restartNeeded(before, keysOnly)).toEqual([]);
    const moved = configOf({
      port: 8080,
      basePath: '/mw',
      projects: { acme: { apiKeys: ['k1'], rules: { softBounces: { bounces: 3, days: 7 } } } },
    });
    expect(restartNeeded(before, moved)).toEqual(['basePath', 'port', 'projects.acme.rules']);
  });
});

test('keys new prints a key once and the item to paste; the item opens the service to that key with its scopes', async () => {
  const { stdout } = await run(
    cliCommand[0],
    [...cliCommand.slice(1), 'keys', 'new', '--scopes', 'read,check', '--name', 'sender', '--project', 'acme'],
    {
      env: cleanEnv,
    },
  );
  const key = /^\s+(mw_[A-Za-z0-9_-]{43})$/m.exec(stdout)?.[1];
  const item = JSON.parse(/^\s+(\{.*\})$/m.exec(stdout)?.[1] ?? 'null') as { name: string; hash: string; scopes: string[] };
  expect(key, stdout).toBeDefined();
  expect(item).toEqual({ name: 'sender', hash: keyHash(key!), scopes: ['check', 'read'] });
  expect(stdout).toContain('"projects.acme.apiKeys"');
  expect(stdout.split(key!)).toHaveLength(2);

  const service = await start(configOf({ projects: { acme: { apiKeys: [item] } } }));
  const answer = await fetch(`${service.url}/projects/acme/api-key`, { headers: { 'x-api-key': key! } });
  expect(await answer.json()).toEqual({ name: 'sender', scopes: ['check', 'read'] });
  const write = await fetch(`${service.url}/projects/acme/suppressions`, {
    method: 'POST',
    headers: { 'x-api-key': key!, 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'a@example.com' }),
  });
  expect(write.status).toBe(403);
  // The hash is no key.
  expect((await fetch(`${service.url}/projects/acme/api-key`, { headers: { 'x-api-key': item.hash } })).status).toBe(401);
});

describe('key sync', () => {
  test('two instances on one store record each key change once, as config', async () => {
    const opened = shared();
    const keys = (apiKeys: unknown[]) =>
      configOf({ changes: {}, adminApiKeys: [{ name: 'ops', key: 'k-ops', scopes: ['admin'] }], projects: { acme: { apiKeys } } });
    const first = keys(['k-plain', { name: 'sender', hash: keyHash('k-sender'), scopes: ['check'] }]);
    const [a, b] = [await start(first, opened), await start(first, opened)];
    const second = keys([{ name: 'sender', hash: keyHash('k-sender-2'), scopes: ['check'] }]);
    expect(await a.reload(second)).toBe(true);
    expect(await b.reload(second)).toBe(true);
    const { changes } = await opened.store.listChanges('acme', { after: 0, limit: 100 });
    const summary = (changes as KeyChange[]).map(({ kind, key, actor }) => `${kind} ${key.name} ${key.scopes.join(',')} ${actor}`);
    const plain = `key-${createHash('sha256').update('k-plain').digest('hex').slice(0, 8)}`;
    expect(summary).toEqual([
      `key.added ${plain} check,read,write,admin config`,
      'key.added ops admin config',
      'key.added sender check config',
      `key.removed ${plain} check,read,write,admin config`,
      'key.updated sender check config',
    ]);
  });

  test('a store that cannot record keys is logged; the service runs on', async () => {
    const store = createMemoryStore({ changes: {} });
    store.syncApiKeys = async () => {
      throw new Error('store down');
    };
    const lines: string[] = [];
    const service = await startService(configOf({ logLevel: 'error', projects: { acme: { apiKeys: ['k'] } } }), shared(store), {
      logStream: { write: (line) => lines.push(line) },
    });
    services.push(service);
    expect(await service.reload(configOf({ logLevel: 'error', projects: { acme: { apiKeys: ['k', 'k2'] } } }))).toBe(true);
    expect(lines.join('')).toContain('recording the API keys in the change feed failed');
    expect((await fetch(`${service.url}/projects/acme/api-key`, { headers: { 'x-api-key': 'k2' } })).status).toBe(200);
  });
});

test('the route × scope table through the service: 403 insufficient_scope exactly when the route needs another scope', async () => {
  const service = await start(
    configOf({
      publicUrl: 'https://mail.example.com',
      unsubscribeSecrets: ['s'.repeat(32)],
      projects: { acme: { apiKeys: apiScopes.map((scope) => ({ name: `only-${scope}`, key: `k-${scope}`, scopes: [scope] })) } },
    }),
  );
  const params: Record<string, string> = { projectId: 'acme', hash: '0'.repeat(64), id: '0'.repeat(32), entry: '%40example.com' };
  const apiKeyRoutes: Route[] = [...routes, ...unsubscribeRoutes].filter((route) => route.auth === 'api_key');
  expect(apiKeyRoutes.length).toBeGreaterThan(20);
  for (const route of apiKeyRoutes) {
    const path = route.path.replace(/\{([^}]+)\}/g, (_match, name: string) => params[name] ?? 'scope-test');
    for (const scope of apiScopes) {
      const answer = await fetch(`${service.url}${path}`, {
        method: route.method,
        headers: { 'x-api-key': `k-${scope}`, ...(route.requestBody === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(route.requestBody === undefined ? {} : { body: '{}' }),
      });
      const text = await answer.text();
      const title = `${route.method} ${route.path} with a ${scope} key: ${text}`;
      if (route.scope === undefined || route.scope === scope) expect([401, 403], title).not.toContain(answer.status);
      else {
        expect(answer.status, title).toBe(403);
        expect(JSON.parse(text).error, title).toMatchObject({
          code: 'insufficient_scope',
          details: { required: route.scope, scopes: [scope] },
        });
      }
    }
  }
});

test('a reload swaps unsubscribe secrets and webhook secrets: links of a secret still listed open, of a removed one not', async () => {
  const [first, second] = ['a'.repeat(32), 'b'.repeat(32)];
  const settings = (secrets: string[], signingKey: string) =>
    configOf({
      publicUrl: 'https://mail.example.com',
      unsubscribeSecrets: secrets,
      projects: { acme: { apiKeys: ['k'], webhooks: { mailgun: { signingKey } } } },
    });
  const service = await start(settings([first], 'mg-1'));
  const link = async () => {
    const answer = await fetch(`${service.url}/projects/acme/unsubscribe-links`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'reader@example.com' }),
    });
    return new URL(((await answer.json()) as { url: string }).url).pathname;
  };
  const page = async (path: string) => (await fetch(`${service.url}${path}`)).status;
  const sealedByFirst = await link();
  expect(await service.reload(settings([second, first], 'mg-2'))).toBe(true);
  const sealedBySecond = await link();
  expect([await page(sealedByFirst), await page(sealedBySecond)]).toEqual([200, 200]);
  expect(await service.reload(settings([second], 'mg-2'))).toBe(true);
  expect([await page(sealedByFirst), await page(sealedBySecond)]).toEqual([400, 200]);
  // Mailgun's signature: HMAC-SHA256 of timestamp and token with the signing key. Only the new key's opens intake.
  const mailgun = async (signingKey: string) => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const token = 'a'.repeat(50);
    const signature = createHmac('sha256', signingKey)
      .update(timestamp + token)
      .digest('hex');
    const answer = await fetch(`${service.url}/projects/acme/webhooks/mailgun`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': { event: 'delivered' } }),
    });
    return answer.status;
  };
  expect(await mailgun('mg-1')).toBe(401);
  expect(await mailgun('mg-2')).not.toBe(401);
});

describe('the actor of an import', () => {
  test('every write of a run is its actor; the CLI prints the run in its summary', async () => {
    const store = createMemoryStore({ changes: {} });
    const file = join(mkdtempSync(join(tmpdir(), 'mailwarden-import-')), 'list.csv');
    writeFileSync(file, 'email,reason\na@example.com,complaint\nb@example.com,hard_bounce\n');
    await importSuppressions(createMailwarden({ store }), { projectId: 'acme', file, checkpoint: false, actor: 'import:run-1' });
    const { changes } = await store.listChanges('acme', { after: 0, limit: 10 });
    expect(changes.map((change) => change.actor)).toEqual(['import:run-1', 'import:run-1']);

    const { stdout } = await run(cliCommand[0], [...cliCommand.slice(1), 'suppressions', 'import', file, '--project', 'acme'], {
      env: cleanEnv,
    });
    expect((JSON.parse(stdout) as { run: string }).run).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{6}$/);
  });
});

describe('reload under load', () => {
  const OLD = 'mw_old-key-of-the-sending-app';
  const NEW = 'mw_new-key-of-the-sending-app';
  const oldItem = { name: 'old', key: OLD, scopes: ['read'] };
  const newItem = { name: 'new', hash: keyHash(NEW), scopes: ['read'] };
  const base = { port: 0, logLevel: 'info', projects: {} };
  const withKeys = (...apiKeys: unknown[]) => JSON.stringify({ ...base, projects: { acme: { apiKeys } } });

  interface Exchange {
    key: 'old' | 'new';
    status: number | string;
    start: number;
    end: number;
  }

  test('SIGHUP and rewrites swap keys with no failed request; a broken or restart-needing config keeps the old keys', async () => {
    const file = configFile(withKeys(oldItem));
    const child = spawn(cliCommand[0], [...cliCommand.slice(1), 'serve', '--config', file], {
      env: cleanEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += String(chunk)));
    child.stderr.on('data', (chunk) => (output += String(chunk)));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const logged = () =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown> & { msg: string });
    const until = async (condition: () => boolean) => {
      while (!condition()) {
        if (child.exitCode !== null) throw new Error(`the service exited:\n${output}`);
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const exchanges: Exchange[] = [];
    let loading = true;
    try {
      await until(() => logged().some((line) => line.msg.startsWith('reloading on SIGHUP')));
      const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)![1]!;
      const load = (['old', 'new'] as const).map(async (key) => {
        while (loading) {
          const start = performance.now();
          const status = await fetch(`${url}/projects/acme/api-key`, { headers: { 'x-api-key': key === 'old' ? OLD : NEW } }).then(
            async (answer) => (await answer.arrayBuffer(), answer.status),
            (error: Error) => error.message,
          );
          exchanges.push({ key, status, start, end: performance.now() });
        }
      });
      /** Rewrites the file as an editor does (a new file renamed over it), sends SIGHUP, waits for the outcome. */
      const phases: {
        content: string;
        outcome: (line: { msg: string; keys?: { added: string[]; removed: string[] }; settings?: string[] }) => boolean;
        open: ('old' | 'new')[];
      }[] = [
        { content: withKeys(oldItem, newItem), outcome: (line) => line.keys?.added.includes('acme/new') === true, open: ['old', 'new'] },
        { content: withKeys(newItem), outcome: (line) => line.keys?.removed.includes('acme/old') === true, open: ['new'] },
        { content: '{ "projects": ', outcome: (line) => line.msg.includes('it is not valid'), open: ['new'] },
        {
          content: JSON.stringify({ ...JSON.parse(withKeys(oldItem, newItem)), port: 1 }),
          outcome: (line) => line.settings?.includes('port') === true,
          open: ['new'],
        },
        { content: withKeys(oldItem, newItem), outcome: (line) => line.keys?.added.includes('acme/old') === true, open: ['old', 'new'] },
      ];
      const windows: { from: number; to: number; open: ('old' | 'new')[] }[] = [];
      let from = performance.now();
      let open: ('old' | 'new')[] = ['old'];
      for (const phase of phases) {
        // Enough requests of both keys in this phase's steady state before the next change.
        await until(() => (['old', 'new'] as const).every((key) => exchanges.filter((e) => e.key === key && e.start >= from).length >= 5));
        const to = performance.now();
        windows.push({ from, to, open });
        const seen = logged().length;
        const temporary = `${file}.tmp`;
        writeFileSync(temporary, phase.content);
        renameSync(temporary, file);
        child.kill('SIGHUP');
        await until(() => logged().slice(seen).some(phase.outcome));
        from = performance.now();
        open = phase.open;
      }
      await until(() => (['old', 'new'] as const).every((key) => exchanges.filter((e) => e.key === key && e.start >= from).length >= 5));
      windows.push({ from, to: performance.now(), open });
      loading = false;
      await Promise.all(load);

      // No request failed: each was answered 200 or 401, and in a steady window exactly as its keys say.
      expect(exchanges.filter((e) => e.status !== 200 && e.status !== 401)).toEqual([]);
      for (const window of windows) {
        const inside = exchanges.filter((e) => e.start >= window.from && e.end <= window.to);
        for (const e of inside)
          expect(e.status, `${e.key} with ${window.open.join(',')} open`).toBe(window.open.includes(e.key) ? 200 : 401);
      }
      expect(logged().some((line) => line.msg.includes('not valid') && line.level === 50)).toBe(true);
      expect(output).not.toContain(OLD);
      expect(output).not.toContain(NEW);
    } finally {
      loading = false;
      child.kill('SIGTERM');
      await exited;
    }
  });
});
