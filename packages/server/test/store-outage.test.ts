// The service while its store goes away and comes back, as an operator sees it. A Redis and a
// PostgreSQL of the test's own are killed (SIGKILL) under load and started again on the same port and
// data: every request meanwhile is answered 503 store_unavailable with Retry-After within a second, the
// service answers 200 within a second of the store accepting connections again, /ready never takes a
// second and says ready only once invalidations reach the instance again, and webhook events retried
// through the outage by their sender are each stored exactly once.
import { randomUUID } from 'node:crypto';
import { attachPostmarkTrackingId } from '@mailwarden/core';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { afterEach, describe, expect, inject, test } from 'vitest';
import { loadConfig, type ServerConfig } from '../src/config.js';
import { startService, type Service } from '../src/service.js';
import type { StoreEnvironment } from '../src/store-settings.js';
import { openStore } from '../src/store.js';
import { startPostgresServer, startRedisServer, type StoreServer } from './store-servers.js';

/** The goal: no request waits longer, and the service answers 200 this soon after the store is back. */
const BOUND_MS = 1000;
const TRACKING_ID = 'outage-2026';
const POSTMARK = { username: 'postmark', password: 'outage-test-secret' };
const asAcme = { 'x-api-key': 'acme-key', 'content-type': 'application/json' };

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const serverConfig: ServerConfig = {
  ...loadConfig({ env: {} }),
  port: 0,
  logLevel: 'silent',
  dashboard: false,
  // A limiter's count in the background needs a connection of its own, which the locked role of the
  // listener test cannot open: these tests are about the store's outages, not the limiter's.
  rateLimits: false,
  projects: { acme: { apiKeys: ['acme-key'], webhooks: { postmark: { basic: [POSTMARK] } } } },
};

async function instance(env: StoreEnvironment): Promise<{ service: Service; origin: string }> {
  const opened = await openStore(env);
  const service = await startService(serverConfig, opened);
  cleanups.push(() => service.close());
  return { service, origin: new URL(service.url).origin };
}

/** One HTTP exchange as the load saw it; times from `performance.now()`. */
interface Exchange {
  kind: 'check' | 'webhook' | 'ready';
  start: number;
  end: number;
  /** 0 when no answer came (connection refused or reset). */
  status: number;
  retryAfter: string | null;
  code?: string;
}

async function exchange(kind: Exchange['kind'], url: string, init: RequestInit = {}): Promise<Exchange> {
  const start = performance.now();
  try {
    const response = await fetch(url, init);
    const body = (await response.json()) as { error?: { code: string } };
    return {
      kind,
      start,
      end: performance.now(),
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      ...(body.error ? { code: body.error.code } : {}),
    };
  } catch {
    return { kind, start, end: performance.now(), status: 0, retryAfter: null };
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A Postmark delivery record of a message of its own, with the test's tracking ID. */
function postmarkDelivery(messageId: string): string {
  const { Metadata } = attachPostmarkTrackingId({}, TRACKING_ID);
  return JSON.stringify({
    RecordType: 'Delivery',
    MessageID: messageId,
    Recipient: `${messageId}@example.com`,
    DeliveredAt: '2026-04-01T09:00:00Z',
    Details: 'delivered',
    Metadata,
  });
}

/**
 * Requests until `stop()`: checks of addresses never asked before (so each reaches the store, not the
 * check cache), webhooks that a retrying sender posts again until they are acknowledged, and /ready.
 * Bounded: a short pause between requests, and a cap on how many each worker sends.
 */
function startLoad(origin: string) {
  const exchanges: Exchange[] = [];
  const acknowledged: string[] = [];
  let stopping = false;
  const checker = async () => {
    for (let sent = 0; !stopping && sent < 5000; sent++) {
      exchanges.push(
        await exchange('check', `${origin}/projects/acme/suppressions/check?email=${randomUUID()}%40example.com`, { headers: asAcme }),
      );
      await sleep(5);
    }
  };
  const sender = async () => {
    const authorization = `Basic ${Buffer.from(`${POSTMARK.username}:${POSTMARK.password}`).toString('base64')}`;
    for (let sent = 0; !stopping && sent < 5000; sent++) {
      const messageId = randomUUID();
      const body = postmarkDelivery(messageId);
      // A sender retries until acknowledged, however long the outage (bounded by the test's timeout).
      for (;;) {
        const answer = await exchange('webhook', `${origin}/projects/acme/webhooks/postmark`, {
          method: 'POST',
          headers: { authorization, 'content-type': 'application/json' },
          body,
        });
        exchanges.push(answer);
        if (answer.status === 200) break;
        await sleep(20);
      }
      acknowledged.push(messageId);
      await sleep(5);
    }
  };
  const prober = async () => {
    for (let sent = 0; !stopping && sent < 2000; sent++) {
      exchanges.push(await exchange('ready', `${origin}/ready`));
      await sleep(20);
    }
  };
  const workers = Promise.all([checker(), checker(), checker(), sender(), sender(), sender(), prober()]);
  return {
    exchanges,
    acknowledged,
    stop: async () => {
      stopping = true;
      await workers;
    },
  };
}

/** Resolves with the moment a new connection to the store first gets an answer. */
async function acceptingAgain(server: StoreServer): Promise<number> {
  for (;;) {
    if (await server.accepts()) return performance.now();
    await sleep(10);
  }
}

/** Events and messages stored for the project, read beside the service (Redis keys, SQL rows). */
type StoredCount = () => Promise<{ eventKeys: number; messages: number }>;

const stores = {
  redis: async () => {
    const server = await startRedisServer();
    const keyPrefix = `outage-${randomUUID()}:`;
    const raw = new Redis(server.url);
    raw.on('error', () => {}); // while the server is killed
    const stored: StoredCount = async () => {
      const eventKeys: string[] = [];
      let cursor = '0';
      do {
        const [next, keys] = await raw.scan(cursor, 'MATCH', `${keyPrefix}{acme}:e:*`, 'COUNT', 1000);
        eventKeys.push(...keys);
        cursor = next;
      } while (cursor !== '0');
      return { eventKeys: new Set(eventKeys).size, messages: await raw.zcard(`${keyPrefix}{acme}:mo`) };
    };
    cleanups.push(async () => (raw.disconnect(), await server.remove()));
    return { server, env: { REDIS_URL: server.url, MAILWARDEN_REDIS_KEY_PREFIX: keyPrefix }, stored };
  },
  postgres: async () => {
    const server = await startPostgresServer();
    const raw = postgres(server.url, { max: 1, onnotice: () => {} });
    const stored: StoredCount = async () => {
      const [row] = await raw`SELECT (SELECT count(*)::int FROM mailwarden.event_keys WHERE project_id = 'acme') AS event_keys,
                                     (SELECT count(*)::int FROM mailwarden.messages WHERE project_id = 'acme') AS messages`;
      return { eventKeys: row!.event_keys as number, messages: row!.messages as number };
    };
    cleanups.push(async () => (await raw.end({ timeout: 0 }), await server.remove()));
    return { server, env: { DATABASE_URL: server.url }, stored };
  },
};

describe.each(['redis', 'postgres'] as const)('%s killed and restarted under load', (kind) => {
  test('503 at once while it is away, 200 within a second of it accepting connections, each acknowledged event stored once', async () => {
    const { server, env, stored } = await stores[kind]();
    const a = await instance(env);
    // Another instance on the same store: its removal must reach a's check cache once a says it is ready.
    const b = await instance(env);
    const added = await fetch(`${a.service.url}/projects/acme/suppressions`, {
      method: 'POST',
      headers: asAcme,
      body: '{"email":"removed.later@example.com"}',
    });
    const { hash } = (await added.json()) as { hash: string };
    const isSuppressed = async () =>
      (
        (await (
          await fetch(`${a.service.url}/projects/acme/suppressions/check?email=removed.later%40example.com`, { headers: asAcme })
        ).json()) as { suppressed: boolean }
      ).suppressed;
    // Cached as suppressed in a for a minute, unless an invalidation drops it.
    expect(await isSuppressed()).toBe(true);

    const load = startLoad(a.origin);
    await sleep(700);
    const killedAt = performance.now();
    await server.kill();
    await sleep(1500);
    const restartedAt = performance.now();
    await server.start();
    const acceptingAt = await acceptingAgain(server);

    // As soon as a says it is ready, the other instance removes the suppression: a must hear of it.
    while (!load.exchanges.some((answer) => answer.kind === 'ready' && answer.status === 200 && answer.start > acceptingAt)) {
      if (performance.now() - acceptingAt > 10_000) throw new Error('/ready never said ready again');
      await sleep(5);
    }
    for (
      let tries = 0;
      (await fetch(`${b.service.url}/projects/acme/suppressions/${hash}`, { method: 'DELETE', headers: asAcme })).status !== 200;
      tries++
    ) {
      if (tries > 100) throw new Error('the other instance never removed the suppression');
      await sleep(20);
    }
    const removedAt = performance.now();
    while (await isSuppressed()) {
      // Far below the cache's 60 s: only the invalidation explains it.
      if (performance.now() - removedAt > 3000) throw new Error('a still answers from its cache: the invalidation was lost');
      await sleep(20);
    }

    await sleep(1500);
    await load.stop();
    const { exchanges, acknowledged } = load;

    // Every request was answered within the bound, with 200 or a 503 store_unavailable that says when to retry.
    const slowest = Math.max(...exchanges.map((answer) => answer.end - answer.start));
    expect(slowest).toBeLessThanOrEqual(BOUND_MS);
    for (const answer of exchanges) {
      expect(
        answer.status === 200 || (answer.status === 503 && answer.code === 'store_unavailable' && answer.retryAfter === '5'),
        JSON.stringify(answer),
      ).toBe(true);
    }
    // What was sent while the store was down was refused, and there was enough of it to tell.
    const duringOutage = exchanges.filter((answer) => answer.start > killedAt && answer.end < restartedAt);
    for (const what of ['check', 'webhook', 'ready'] as const) {
      const ofKind = duringOutage.filter((answer) => answer.kind === what);
      expect(ofKind.length, what).toBeGreaterThanOrEqual(3);
      expect(
        ofKind.every((answer) => answer.status === 503),
        what,
      ).toBe(true);
    }
    // Back within the bound of the store accepting connections, for every kind of request, and for good.
    for (const what of ['check', 'webhook', 'ready'] as const) {
      const firstAnswered = Math.min(
        ...exchanges
          .filter((answer) => answer.kind === what && answer.status === 200 && answer.start > killedAt)
          .map((answer) => answer.end),
      );
      expect(firstAnswered - acceptingAt, what).toBeLessThanOrEqual(BOUND_MS);
    }
    const afterwards = exchanges.filter((answer) => answer.start > acceptingAt + BOUND_MS);
    expect(afterwards.length).toBeGreaterThan(0);
    expect(afterwards.filter((answer) => answer.status !== 200)).toStrictEqual([]);

    // Exactly once: every acknowledged event is stored, none twice, and nothing else.
    expect(new Set(acknowledged).size).toBe(acknowledged.length);
    expect(await stored()).toStrictEqual({ eventKeys: acknowledged.length, messages: acknowledged.length });
    const trackingId = await fetch(`${a.service.url}/projects/acme/tracking-ids?trackingId=${TRACKING_ID}`, { headers: asAcme });
    expect(((await trackingId.json()) as { items: unknown[] }).items).toMatchObject([
      { trackingId: TRACKING_ID, messages: acknowledged.length, delivered: acknowledged.length },
    ]);
  }, 60_000);
});

describe('/ready waits for the invalidation listener', () => {
  test.each(['redis', 'postgres'] as const)(
    '%s: 503 while the listener cannot resubscribe though the store answers, 200 once it has',
    async (kind) => {
      let disable: () => Promise<unknown>;
      let enable: () => Promise<unknown>;
      let env: StoreEnvironment;
      // Credentials of its own, so that its listener's connection can be kept from coming back while
      // the connections already open keep working.
      if (kind === 'redis') {
        const raw = new Redis(inject('redisUrl'));
        const user = `mw-ready-${randomUUID()}`;
        await raw.call('ACL', 'SETUSER', user, 'on', '>secret', '~*', '&*', '+@all');
        cleanups.push(async () => (await raw.call('ACL', 'DELUSER', user), await raw.quit()));
        const url = new URL(inject('redisUrl'));
        url.username = user;
        url.password = 'secret';
        env = { REDIS_URL: url.toString(), MAILWARDEN_REDIS_KEY_PREFIX: `ready-${randomUUID()}:` };
        disable = async () => {
          await raw.call('ACL', 'SETUSER', user, 'off');
          const subscriber = String(await raw.call('CLIENT', 'LIST', 'TYPE', 'pubsub'))
            .split('\n')
            .find((line) => line.includes(` user=${user} `));
          await raw.call('CLIENT', 'KILL', 'ID', /(?:^| )id=(\d+)/.exec(subscriber!)![1]!);
        };
        enable = () => raw.call('ACL', 'SETUSER', user, 'on');
      } else {
        const raw = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
        const role = `mw_ready_${randomUUID().replaceAll('-', '')}`;
        const schema = `ready_${randomUUID().replaceAll('-', '')}`;
        await raw.unsafe(`CREATE ROLE ${role} LOGIN; CREATE SCHEMA ${schema} AUTHORIZATION ${role}`);
        cleanups.push(async () => (await raw.unsafe(`DROP SCHEMA ${schema} CASCADE; DROP ROLE ${role}`), await raw.end()));
        const url = new URL(inject('databaseUrl'));
        url.username = role;
        env = { DATABASE_URL: url.toString(), MAILWARDEN_PG_SCHEMA: schema };
        disable = async () => {
          await raw.unsafe(`ALTER ROLE ${role} NOLOGIN`);
          await raw.unsafe(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${role}' AND query ILIKE 'listen %'`);
        };
        enable = () => raw.unsafe(`ALTER ROLE ${role} LOGIN`);
      }
      const { origin, service } = await instance(env);
      const ready = async () => (await fetch(`${origin}/ready`)).status;
      expect(await ready()).toBe(200);

      await disable();
      const refused = await fetch(`${origin}/ready`);
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
        /invalidations do not reach this instance yet/,
      );
      // The store itself answers all along.
      expect((await fetch(`${service.url}/projects/acme/suppressions/check?email=a%40example.com`, { headers: asAcme })).status).toBe(200);

      await enable();
      for (let tries = 0; (await ready()) !== 200; tries++) {
        if (tries > 100) throw new Error('/ready never said ready again');
        await sleep(20);
      }
    },
  );
});
