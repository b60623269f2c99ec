// The service's change feed, alerts, outbound webhooks and metrics as configured: which settings turn
// the feed on, mistakes named by their field at start, the feed through the API, and `/metrics` at the
// origin, behind its token, or on a listener of its own.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { unnamedKeyName } from '@mailwarden/core';
import { changeFeedOf, loadConfig, outboundOf, type ServerConfig } from '../src/config.js';
import type { ServiceMetrics } from '../src/metrics.js';
import { startService, type Service } from '../src/service.js';
import { openStore } from '../src/store.js';

const services: Service[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.close()));
});

function configOf(settings: Record<string, unknown>): ServerConfig {
  const file = join(mkdtempSync(join(tmpdir(), 'mailwarden-config-')), 'config.json');
  writeFileSync(file, JSON.stringify({ port: 0, logLevel: 'silent', dashboard: false, ...settings }));
  return loadConfig({ file, env: {} });
}

const acme = (project: Record<string, unknown> = {}) => ({ projects: { acme: { apiKeys: ['acme-key'], ...project } } });
const endpoint = { id: 'crm', url: 'https://crm.example.com/hooks', secrets: ['whsec_c2VjcmV0LWtleQ=='] };
const asAcme = { 'x-api-key': 'acme-key', 'content-type': 'application/json' };

/** A stand-in for the Prometheus registry: records nothing, serves a fixed text, and counts how often it was asked. */
function fakeMetrics(): ServiceMetrics & { scrapes: number } {
  const ignore = () => {};
  return {
    httpRequest: ignore,
    eventsReceived: ignore,
    webhookVerificationFailed: ignore,
    suppressionsAdded: ignore,
    suppressionsRemoved: ignore,
    storeOperation: ignore,
    hookCallsDropped: ignore,
    outboundDelivery: ignore,
    outboundLag: ignore,
    alertRates: ignore,
    contentType: 'text/plain; version=0.0.4; charset=utf-8',
    scrapes: 0,
    async text() {
      this.scrapes++;
      return '# HELP up 1\nup 1\n';
    },
  };
}

async function start(config: ServerConfig, metrics?: ServiceMetrics): Promise<Service> {
  const opened = await openStore({}, { changes: changeFeedOf(config) });
  const service = await startService(config, opened, metrics === undefined ? {} : { metrics });
  services.push(service);
  return service;
}

describe('the change feed, as configured', () => {
  test('off by default; on with `changes`, or with a project’s alerts or outbound webhooks; `false` keeps it off', () => {
    expect(changeFeedOf(configOf(acme()))).toBeUndefined();
    expect(changeFeedOf(configOf({ ...acme(), changes: {} }))).toStrictEqual({});
    expect(changeFeedOf(configOf({ ...acme(), changes: { maxAgeDays: 1.5, maxLength: 5000 } }))).toStrictEqual({
      maxAgeMs: 36 * 60 * 60 * 1000,
      maxLength: 5000,
    });
    expect(changeFeedOf(configOf(acme({ alerts: {} })))).toStrictEqual({});
    expect(changeFeedOf(configOf(acme({ outboundWebhooks: [endpoint] })))).toStrictEqual({});
    expect(changeFeedOf(configOf({ ...acme({ alerts: {} }), changes: false }))).toBeUndefined();
  });

  test('the endpoints go to createMailwarden with the tuning; none configured, no outbound at all', () => {
    expect(outboundOf(configOf(acme()))).toBeUndefined();
    expect(outboundOf(configOf({ ...acme({ outboundWebhooks: [endpoint] }), outbound: { schedule: [1000, 60_000] } }))).toStrictEqual({
      schedule: [1000, 60_000],
      endpoints: { acme: [endpoint] },
    });
  });

  test.each([
    [{ changes: { maxAgeDays: 0 } }, 'changes'],
    [{ changes: { maxLength: 2.5 } }, 'changes'],
    [{ ...acme({ outboundWebhooks: [endpoint] }), changes: false }, 'changes: outbound webhooks deliver the change feed'],
    [acme({ alerts: { bounceRate: 0 } }), 'projects.acme.alerts.bounceRate: must be a percentage from 0.0001 to 100'],
    [acme({ alerts: { window: 5 } }), 'projects.acme.alerts.window: must be an integer from 10 to 100000'],
    [acme({ alerts: { pauseStreams: ['Not A Stream'] } }), 'projects.acme.alerts.pauseStreams[0]: must be a stream name'],
    [acme({ alerts: { bounceRates: 5 } }), 'Unrecognized key: "bounceRates"'],
    [acme({ outboundWebhooks: [{ ...endpoint, id: 'CRM!' }] }), 'projects.acme.outboundWebhooks.0.id: must be 1 to 64'],
    [acme({ outboundWebhooks: [{ ...endpoint, url: 'ftp://crm.example.com' }] }), 'projects.acme.outboundWebhooks.0.url: must be an http'],
    [acme({ outboundWebhooks: [{ ...endpoint, secrets: ['hunter2'] }] }), 'projects.acme.outboundWebhooks.0.secrets.0: must be "whsec_"'],
    [acme({ outboundWebhooks: [{ ...endpoint, kinds: ['suppression.deleted'] }] }), 'projects.acme.outboundWebhooks.0.kinds: Invalid kind'],
    [acme({ outboundWebhooks: [endpoint, endpoint] }), 'projects.acme.outboundWebhooks.1.id: "crm" is used twice'],
    [{ ...acme({ outboundWebhooks: [endpoint] }), outbound: { leaseMs: 1000, timeoutMs: 5000 } }, 'outbound.leaseMs: must exceed'],
    [{ metrics: { listen: { port: 'nine' } } }, 'metrics.listen.port'],
    [{ metrics: { token: '' } }, 'metrics.token'],
  ])('a mistake fails the start, named: %j', (settings, named) => {
    expect(() => configOf(settings)).toThrow(named);
  });

  test('changes made through the API are read back from GET /changes, in order', async () => {
    const service = await start(configOf({ ...acme(), changes: {} }));
    for (const email of ['one@example.com', 'two@example.com']) {
      const added = await fetch(`${service.url}/projects/acme/suppressions`, {
        method: 'POST',
        headers: asAcme,
        body: JSON.stringify({ email }),
      });
      expect(added.status).toBe(201);
    }
    const page = (await (await fetch(`${service.url}/projects/acme/changes?kind=suppression`, { headers: asAcme })).json()) as {
      items: unknown[];
    };
    // The service's key sync at start appends `key.added` too, before or between these (docs/server.md, "API keys").
    expect(page).toMatchObject({
      items: [
        { kind: 'suppression.added', actor: `key:${unnamedKeyName('acme-key')}`, suppression: { email: 'one@example.com' } },
        { kind: 'suppression.added', actor: `key:${unnamedKeyName('acme-key')}`, suppression: { email: 'two@example.com' } },
      ],
      latest: 3,
    });
    const [one, two] = page.items as { id: string; seq: number }[];
    expect([one!.id, two!.id]).toEqual([`acme:${one!.seq}`, `acme:${two!.seq}`]);
    expect(two!.seq).toBeGreaterThan(one!.seq);
    const keys = (await (await fetch(`${service.url}/projects/acme/changes?kind=key`, { headers: asAcme })).json()) as { items: unknown[] };
    expect(keys.items).toMatchObject([{ kind: 'key.added', actor: 'config', key: { name: unnamedKeyName('acme-key') } }]);
  });

  test('without the feed, GET /changes answers change_feed_not_configured', async () => {
    const service = await start(configOf(acme()));
    const response = await fetch(`${service.url}/projects/acme/changes`, { headers: asAcme });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: 'change_feed_not_configured' } });
  });
});

describe('GET /metrics', () => {
  test('at the origin, whatever basePath is, with the exposition’s content type and no key', async () => {
    const metrics = fakeMetrics();
    const service = await start(configOf({ ...acme(), basePath: '/mailwarden' }), metrics);
    const origin = new URL(service.url).origin;
    const response = await fetch(`${origin}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(metrics.contentType);
    expect(await response.text()).toBe('# HELP up 1\nup 1\n');
    expect((await fetch(`${service.url}/metrics`)).status).toBe(404);
    expect(service.metricsUrl).toBeUndefined();
  });

  test('with a token: 401 and the error body without it or with another, the text with it', async () => {
    const metrics = fakeMetrics();
    const service = await start(configOf({ ...acme(), metrics: { token: 'scrape-token-0123456789' } }), metrics);
    const missing = await fetch(`${service.url}/metrics`);
    expect([missing.status, missing.headers.get('www-authenticate')]).toStrictEqual([401, 'Bearer']);
    expect(await missing.json()).toMatchObject({ error: { code: 'missing_api_key' } });
    const wrong = await fetch(`${service.url}/metrics`, { headers: { authorization: 'Bearer scrape-token-0123456780' } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: { code: 'invalid_api_key' } });
    expect(metrics.scrapes).toBe(0);
    const right = await fetch(`${service.url}/metrics`, { headers: { authorization: 'Bearer scrape-token-0123456789' } });
    expect([right.status, await right.text()]).toStrictEqual([200, '# HELP up 1\nup 1\n']);
  });

  test('with `listen`, only on a listener of its own; the API’s port answers 404 there', async () => {
    const metrics = fakeMetrics();
    const service = await start(configOf({ ...acme(), metrics: { listen: { port: 0 } } }), metrics);
    expect(service.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(service.metricsUrl!).port).not.toBe(new URL(service.url).port);
    expect(await (await fetch(service.metricsUrl!)).text()).toBe('# HELP up 1\nup 1\n');
    expect((await fetch(`${service.url}/metrics`)).status).toBe(404);
    const elsewhere = await fetch(new URL('/health', service.metricsUrl));
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  test('`enabled: false` serves nothing at /metrics', async () => {
    const service = await start(configOf({ ...acme(), metrics: { enabled: false } }), fakeMetrics());
    expect((await fetch(`${service.url}/metrics`)).status).toBe(404);
  });

  test('without `changes`, alerts or endpoints, the store keeps no feed', async () => {
    const service = await start(configOf(acme()));
    expect(service.mailwarden.store.changes).toBeUndefined();
  });
});
