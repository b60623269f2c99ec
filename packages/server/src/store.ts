import { createCheckCache, createMemoryStore, MailwardenError, type Store } from '@mailwarden/core';
import { createPostgresStore, migrate } from '@mailwarden/postgres';
import { createRedisStore } from '@mailwarden/redis';
import { Redis } from 'ioredis';
import postgres from 'postgres';

export type StoreKind = 'memory' | 'redis' | 'postgres';

export interface OpenedStore {
  kind: StoreKind;
  store: Store;
  /** Periodic upkeep the store needs from its host (Postgres retention); undefined when none. */
  purgeExpired?: (now: number) => Promise<unknown>;
  /** Closes the store, then the driver connection the service opened for it. */
  close(): Promise<void>;
}

export interface StoreEnvironment {
  MAILWARDEN_STORE?: string | undefined;
  REDIS_URL?: string | undefined;
  DATABASE_URL?: string | undefined;
  MAILWARDEN_REDIS_KEY_PREFIX?: string | undefined;
  MAILWARDEN_PG_SCHEMA?: string | undefined;
}

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
    throw new MailwardenError('invalid_request', 'Both REDIS_URL and DATABASE_URL are set: choose one with MAILWARDEN_STORE=redis or postgres.');
  }
  return database ? 'postgres' : redis ? 'redis' : 'memory';
}

/**
 * Opens the store the environment selects. Postgres is migrated first (migrations are idempotent and
 * serialized by an advisory lock, so instances may start together). Remote stores get a check cache,
 * kept coherent across instances by the store's invalidations.
 */
export async function openStore(env: StoreEnvironment, options: { retentionMs?: number | undefined } = {}): Promise<OpenedStore> {
  const kind = storeKind(env);
  const retention = options.retentionMs === undefined ? {} : { retention: { messagesMs: options.retentionMs } };
  if (kind === 'memory') {
    const store = createMemoryStore();
    return { kind, store, close: () => store.close() };
  }
  if (kind === 'redis') {
    const url = required(env.REDIS_URL, 'REDIS_URL');
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
    // Connection errors surface where they matter: as store_unavailable from commands (503s) and from
    // /ready. Without a listener, ioredis would report each reconnect attempt as an unhandled error.
    client.on('error', () => {});
    await client.connect().catch((error: unknown) => {
      client.disconnect();
      throw new MailwardenError('store_unavailable', `Cannot connect to Redis at ${redactUrl(url)}.`, { cause: error });
    });
    const store = await createCheckCache({ store: createRedisStore({ client, keyPrefix: env.MAILWARDEN_REDIS_KEY_PREFIX ?? 'mailwarden:', ...retention }) });
    return { kind, store, close: async () => void (await store.close(), await client.quit()) };
  }
  const url = required(env.DATABASE_URL, 'DATABASE_URL');
  const sql = postgres(url, { onnotice: () => {}, max: 10 });
  const schema = env.MAILWARDEN_PG_SCHEMA ?? 'mailwarden';
  try {
    await migrate(sql, { schema });
  } catch (error) {
    await sql.end({ timeout: 1 });
    throw new MailwardenError('store_unavailable', `Cannot migrate PostgreSQL at ${redactUrl(url)}: ${(error as Error).message}`, { cause: error });
  }
  const postgresStore = createPostgresStore({ sql, schema, ...retention });
  const store = await createCheckCache({ store: postgresStore });
  return {
    kind,
    store,
    // Expired Mailgun token claims, and messages past the retention if one is set.
    purgeExpired: (now: number) => postgresStore.purgeExpired(now),
    close: async () => void (await store.close(), await sql.end({ timeout: 5 })),
  };
}

function required(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw new MailwardenError('invalid_request', `${name} is not set.`);
  return value;
}

/** A connection URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}
