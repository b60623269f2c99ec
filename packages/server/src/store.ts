import { createMemoryStore, MailwardenError, type Store } from '@mailwarden/core';

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
export interface StoreConnectionSettings {
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
  // Each remote store and its driver load only when selected: the service on the memory store, and
  // every CLI run, start without ioredis and postgres.js.
  if (kind === 'redis') return (await import('./store-redis.js')).openRedis(env, settings, retention);
  return (await import('./store-postgres.js')).openPostgres(env, settings, retention);
}

export interface Retention {
  retention?: { messagesMs: number };
}

/**
 * Resolves if the store's invalidation subscriber hears a probe sent now. After the store comes back, its
 * listener subscribes again a little after queries work; until then removals made on other instances
 * would be missed here, so the instance is not ready yet.
 */
export async function invalidationsReach(store: { probeInvalidations(timeoutMs: number): Promise<boolean> }, name: string): Promise<void> {
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

export function required(value: string | undefined, name: string): string {
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
