import { createMemoryStore, MailwardenError } from '@mailwarden/core';
import type { ChangeFeedOptions } from '@mailwarden/core/store';
import { storeConnectionSettings, type OpenedStore, type Retention, type StoreEnvironment, type StoreKind } from './store-settings.js';

/** Which store the environment selects: MAILWARDEN_STORE if set, else DATABASE_URL or REDIS_URL, else memory. */
export function storeKind(env: StoreEnvironment): StoreKind {
  const explicit = env.MAILWARDEN_STORE;
  if (explicit === 'memory' || explicit === 'redis' || explicit === 'postgres') return explicit;
  if (explicit !== undefined && explicit !== '') {
    throw new MailwardenError('invalid_request', `MAILWARDEN_STORE is memory, redis or postgres; got "${explicit}".`);
  }
  const redis = Boolean(env.REDIS_URL);
  const database = Boolean(env.DATABASE_URL);
  if (redis && database) {
    throw new MailwardenError(
      'invalid_request',
      'Both REDIS_URL and DATABASE_URL are set: choose one with MAILWARDEN_STORE=redis or postgres.',
    );
  }
  return database ? 'postgres' : redis ? 'redis' : 'memory';
}

/**
 * Opens the store the environment selects. Postgres is migrated first (migrations are idempotent and
 * serialized by an advisory lock, so instances may start together). Remote stores get a check cache,
 * kept coherent across instances by the store's invalidations.
 */
export async function openStore(
  env: StoreEnvironment,
  options: { retentionMs?: number | undefined; changes?: ChangeFeedOptions | undefined } = {},
): Promise<OpenedStore> {
  const kind = storeKind(env);
  const retention: Retention = {
    ...(options.retentionMs === undefined ? {} : { retention: { messagesMs: options.retentionMs } }),
    // The change feed, only when configured: without it the stores write exactly what they wrote before.
    ...(options.changes === undefined ? {} : { changes: options.changes }),
  };
  if (kind === 'memory') {
    // The purge forgets what idle projects hold past the retention, expired token claims and old changes.
    const store = createMemoryStore(retention);
    return { kind, store, purgeExpired: (now: number) => store.purgeExpired(now), close: () => store.close() };
  }
  const settings = storeConnectionSettings(env);
  // Each remote store and its driver load only when selected: the service on the memory store, and
  // every CLI run, start without ioredis and postgres.js.
  if (kind === 'redis') return (await import('./store-redis.js')).openRedis(env, settings, retention);
  return (await import('./store-postgres.js')).openPostgres(env, settings, retention);
}
