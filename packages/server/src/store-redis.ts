import { MailwardenError } from '@mailwarden/core';
import { createCheckCache } from '@mailwarden/core/store';
import { createRedisStore } from '@mailwarden/redis';
import { Redis } from 'ioredis';
import {
  invalidationsReach,
  redactUrl,
  required,
  type OpenedStore,
  type Retention,
  type StoreConnectionSettings,
  type StoreEnvironment,
} from './store-settings.js';

/** The service's Redis store: its own ioredis connection, settings from the environment (store-settings.ts). */
export async function openRedis(env: StoreEnvironment, settings: StoreConnectionSettings, retention: Retention): Promise<OpenedStore> {
  const url = required(env.REDIS_URL, 'REDIS_URL');
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: settings.connectTimeoutMs,
    // Also bounds a Redis that holds the connection open but no longer answers.
    commandTimeout: settings.redisCommandTimeoutMs,
    // A command sent while the connection is down waits for the next reconnection attempt, then fails
    // if that one fails: a blip costs nothing, an outage a prompt 503 (ioredis's default is 20 attempts).
    maxRetriesPerRequest: 0,
    // ioredis's default grows to 2 s between attempts; this caps how late we notice Redis is back.
    retryStrategy: (attempt) => Math.min(25 * 2 ** attempt, settings.reconnectDelayMs),
  });
  // Connection errors surface where they matter: as store_unavailable from commands (503s) and from
  // /ready. Without a listener, ioredis would report each reconnect attempt as an unhandled error.
  client.on('error', () => {});
  await client.connect().catch((error: unknown) => {
    client.disconnect();
    throw new MailwardenError('store_unavailable', `Cannot connect to Redis at ${redactUrl(url)}.`, { cause: error });
  });
  const redisStore = createRedisStore({ client, keyPrefix: env.MAILWARDEN_REDIS_KEY_PREFIX ?? 'mailwarden:', ...retention });
  const store = await createCheckCache({ store: redisStore });
  return {
    kind: 'redis',
    store,
    // Expired suppressions (of every list) and soft-bounce history past its keep time.
    purgeExpired: (now: number) => redisStore.purgeExpired(now),
    ready: () => invalidationsReach(redisStore, 'Redis'),
    close: async () => void (await store.close(), await client.quit()),
  };
}
