import { MailwardenError, type Store } from '@mailwarden/core';
import type { ChangeFeedOptions } from '@mailwarden/core/store';

// What store.ts and the remote stores' openers (store-redis.ts, store-postgres.ts) share: the
// environment and the settings read from it, and what an opened store offers the service. Its own
// file, so the openers need not import store.ts, which loads them.

export type StoreKind = 'memory' | 'redis' | 'postgres';

export interface OpenedStore {
  kind: StoreKind;
  store: Store;
  /**
   * Periodic upkeep the store needs from its host, bounded per call: expired suppressions, soft-bounce
   * history past its keep time, token claims, messages past the retention. Resolves to how many items it deleted.
   */
  purgeExpired?: (now: number) => Promise<number>;
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
export function storeConnectionSettings(env: StoreEnvironment): StoreConnectionSettings {
  return {
    connectTimeoutMs: positiveInteger(env, 'MAILWARDEN_STORE_CONNECT_TIMEOUT_MS', 1000),
    reconnectDelayMs: positiveInteger(env, 'MAILWARDEN_STORE_RECONNECT_DELAY_MS', 250),
    redisCommandTimeoutMs: positiveInteger(env, 'MAILWARDEN_REDIS_COMMAND_TIMEOUT_MS', 1000),
    postgresPoolSize: positiveInteger(env, 'MAILWARDEN_PG_POOL_SIZE', 10),
  };
}

/** How long a readiness probe waits to hear itself on the invalidation channel: a live subscriber hears it within milliseconds, and /ready gives up at 500 ms. */
const INVALIDATION_PROBE_MS = 400;

/** What the store keeps, as its factory's options: messages past their retention, and the change feed (on with `changes`). */
export interface Retention {
  retention?: { messagesMs: number };
  changes?: ChangeFeedOptions;
}

/**
 * Resolves if the store's invalidation subscriber hears a probe sent now. After the store comes back, its
 * listener subscribes again a little after queries work; until then removals made on other instances
 * would be missed here, so the instance is not ready yet.
 */
export async function invalidationsReach(store: { probeInvalidations(timeoutMs: number): Promise<boolean> }, name: string): Promise<void> {
  if (!(await store.probeInvalidations(INVALIDATION_PROBE_MS))) {
    throw new MailwardenError(
      'store_unavailable',
      `${name} answers, but invalidations do not reach this instance yet: its listener is reconnecting.`,
    );
  }
}

function positiveInteger(env: StoreEnvironment, name: keyof StoreEnvironment, fallback: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 1)
    throw new MailwardenError('invalid_request', `${name} is a positive whole number; got "${value}".`);
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
