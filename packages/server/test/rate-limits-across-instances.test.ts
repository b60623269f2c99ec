// Rate limits across instances (issue 27, "Proven"): three services share one Redis or PostgreSQL store;
// one client spreads its requests over the three and gets about its limit of 200s in all, the rest 429,
// never a 5xx, while another client is still served. Windows are fixed and real time runs, so a burst
// may straddle a window's end: twice the limit then. Each instance answers from its own view and sends
// its hits in the background (docs/decisions.md, "Rate limits off the request path"), so it may also pass
// the hits the others have not sent yet: a sync's worth each (`rateSyncSize`, 1 for this limit).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rateSyncSize } from '@mailwarden/core';
import { describe, expect, inject, test } from 'vitest';
import { loadConfig, type ServerConfig } from '../src/config.js';
import { startService, type Service } from '../src/service.js';
import { openStore } from '../src/store.js';

const INSTANCES = 3;
const LIMIT = 20;
const REQUESTS = 90;

function configFile(content: object): string {
  const file = join(mkdtempSync(join(tmpdir(), 'mailwarden-rate-limits-')), 'config.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

test('rateLimits: on with the defaults, false turns them off, a bad value fails the start', () => {
  const load = (rateLimits?: unknown) =>
    loadConfig({ file: configFile({ projects: {}, ...(rateLimits === undefined ? {} : { rateLimits }) }), env: {} }).rateLimits;
  expect(load()).toStrictEqual({});
  expect(load(false)).toBe(false);
  expect(load({ perKey: 0, windowSeconds: 10 })).toStrictEqual({ perKey: 0, windowSeconds: 10 });
  for (const bad of [{ windowSeconds: 0 }, { perClient: -1 }, { perClient: 1.5 }, { burst: 10 }, true]) {
    expect(() => load(bad), JSON.stringify(bad)).toThrow(/rateLimits/);
  }
});

function config(): ServerConfig {
  const file = configFile({
    port: 0,
    logLevel: 'silent',
    dashboard: false,
    metrics: { enabled: false },
    // The client's address comes from X-Forwarded-For, so one test process can be several clients.
    trustProxy: true,
    rateLimits: { perClient: LIMIT, perKey: 0 },
    projects: { acme: { apiKeys: ['acme-key'] } },
  });
  return loadConfig({ file, env: {} });
}

const check = (service: Service, client: string) =>
  fetch(`${service.url}/projects/acme/suppressions/check?email=reader%40example.com`, {
    headers: { 'x-api-key': 'acme-key', 'x-forwarded-for': client },
  });

describe('rate limits across instances sharing a store', () => {
  test.each(['redis', 'postgres'] as const)('%s: one client gets about its limit in all', { timeout: 60_000 }, async (kind) => {
    const env =
      kind === 'redis'
        ? { REDIS_URL: inject('redisUrl'), MAILWARDEN_REDIS_KEY_PREFIX: `rate-${randomUUID()}:` }
        : { DATABASE_URL: inject('databaseUrl'), MAILWARDEN_PG_SCHEMA: `rate_${randomUUID().replaceAll('-', '')}` };
    const serverConfig = config();
    const services: Service[] = [];
    try {
      for (let i = 0; i < INSTANCES; i++) services.push(await startService(serverConfig, await openStore(env)));
      const client = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
      // Each instance gets a third of the burst, the three at once.
      const statuses = (
        await Promise.all(
          services.map(async (service) => {
            const mine: number[] = [];
            for (let i = 0; i < REQUESTS / INSTANCES; i++) {
              const response = await check(service, client);
              await response.arrayBuffer();
              mine.push(response.status);
              if (response.status === 429) expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
            }
            return mine;
          }),
        )
      ).flat();
      expect(statuses.filter((status) => status !== 200 && status !== 429)).toStrictEqual([]);
      const served = statuses.filter((status) => status === 200).length;
      expect(served).toBeGreaterThanOrEqual(LIMIT);
      expect(served).toBeLessThanOrEqual(2 * LIMIT + INSTANCES * rateSyncSize(LIMIT));
      // Another client is served by every instance meanwhile.
      for (const service of services) expect((await check(service, '203.0.113.7')).status).toBe(200);
    } finally {
      await Promise.all(services.map((service) => service.close()));
    }
  });
});
