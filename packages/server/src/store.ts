import { createMemoryStore, MailwardenError, type Store } from '@mailwarden/core';
import { createCheckCache } from '@mailwarden/core/store';
import { createPostgresStore, migrate } from '@mailwarden/postgres';
import { createRedisStore } from '@mailwarden/redis';
import { Redis } from 'ioredis';
import postgres from 'postgres';

export type StoreKind = 'memory' | 'redis' | 'postgres';

export interface OpenedStore {
  kind: StoreKind;
  store: Store;
  /** Periodic upkeep the store needs from its host (memory and Postgres retention); undefined when none. */
  purgeExpired?: (now: number) => Promise<unknown>;
  /**
   * Resolves when the instance can serve: the store answers and, for Redis and Postgres, invalidations
   * reach the check cache (its subscriber heard a probe sent now). Rejects with `store_unavailable`
   * otherwise. Without it, `/ready` reads one suppression through `store`.
   */
  ready?: () => Promise<void>;
  /** Closes the store, then the driver connection the service opened for it. */
  close(): Promise<void>;
}

export interface StoreEnvironment {
  MAILWARDEN_STORE?: string | undefined;
  REDIS_URL?: string | undefined;
  DATABASE_URL?: string | undefined;
  MAILWARDEN_REDIS_KEY_PREFIX?: string | undefined;
  MAILWARDEN_PG_SCHEMA?: string | undefined;
  /** One connection attempt to Redis or PostgreSQL may take this long, in milliseconds (default 1 000). */
  MAILWARDEN_STORE_CONNECT_TIMEOUT_MS?: string | undefined;
  /** The longest pause between reconnection attempts while the store is away, in milliseconds (default 250). */
  MAILWARDEN_STORE_RECONNECT_DELAY_MS?: string | undefined;
  /** Redis: a command unanswered this long fails with `store_unavailable`, in milliseconds (default 1 000). */
  MAILWARDEN_REDIS_COMMAND_TIMEOUT_MS?: string | undefined;
  /** PostgreSQL: connections in the pool (default 10). */
  MAILWARDEN_PG_POOL_SIZE?: string | undefined;
}

/**
 * How the service's drivers treat a store that goes away: fail a request within about a second (a 503
 * the client retries) instead of holding it through reconnects, and notice within a fraction of a second
 * that the store is back. The drivers' defaults do neither (docs/storage.md).
 */
interface StoreConnectionSettings {
  connectTimeoutMs: number;
  reconnectDelayMs: number;
  redisCommandTimeoutMs: number;
  postgresPoolSize: number;
}

/** The connection settings of the environment, each validated: a typo fails the start, naming the variable. */
function storeConnectionSettings(env: StoreEnvironment): StoreConnectionSettings {
  return {
    connectTimeoutMs: positiveInteger(env, 'MAILWARDEN_STORE_CONNECT_TIMEOUT_MS', 1000),
    reconnectDelayMs: positiveInteger(env, 'MAILWARDEN_STORE_RECONNECT_DELAY_MS', 250),
    redisCommandTimeoutMs: positiveInteger(env, 'MAILWARDEN_REDIS_COMMAND_TIMEOUT_MS', 1000),
    postgresPoolSize: positiveInteger(env, 'MAILWARDEN_PG_POOL_SIZE', 10),
  };
}

/** How long a readiness probe waits to hear itself on the invalidation channel: a live subscriber hears it within milliseconds, and /ready gives up at 500 ms. */
const INVALIDATION_PROBE_MS = 400;

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
    // The hourly purge forgets what idle projects hold past the retention, and expired token claims.
    const store = createMemoryStore(retention);
    return { kind, store, purgeExpired: (now: number) => store.purgeExpired(now), close: () => store.close() };
  }
  const settings = storeConnectionSettings(env);
  if (kind === 'redis') {
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
      kind,
      store,
      ready: () => invalidationsReach(redisStore, 'Redis'),
      close: async () => void (await store.close(), await client.quit()),
    };
  }
  const url = required(env.DATABASE_URL, 'DATABASE_URL');
  const sql = postgres(url, {
    onnotice: () => {},
    max: settings.postgresPoolSize,
    connect_timeout: settings.connectTimeoutMs / 1000,
    // postgres.js waits up to 20 s between attempts by default, and a statement queued meanwhile waits
    // with it. Short pauses let the pool and the LISTEN connection notice promptly that the server is
    // back; while it is away, the store fails calls at once but for one that tries to reconnect.
    backoff: (attempt) => Math.min(0.025 * 2 ** attempt, settings.reconnectDelayMs / 1000),
  });
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
    ready: () => invalidationsReach(postgresStore, 'PostgreSQL'),
    close: async () => void (await store.close(), await sql.end({ timeout: 5 })),
  };
}

/**
 * Resolves if the store's invalidation subscriber hears a probe sent now. After the store comes back, its
 * listener subscribes again a little after queries work; until then removals made on other instances
 * would be missed here, so the instance is not ready yet.
 */
async function invalidationsReach(store: { probeInvalidations(timeoutMs: number): Promise<boolean> }, name: string): Promise<void> {
  if (!(await store.probeInvalidations(INVALIDATION_PROBE_MS))) {
    throw new MailwardenError('store_unavailable', `${name} answers, but invalidations do not reach this instance yet: its listener is reconnecting.`);
  }
}

function positiveInteger(env: StoreEnvironment, name: keyof StoreEnvironment, fallback: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 1) throw new MailwardenError('invalid_request', `${name} is a positive whole number; got "${value}".`);
  return parsed;
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
