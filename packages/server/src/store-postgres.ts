import { MailwardenError } from '@mailwarden/core';
import { createCheckCache } from '@mailwarden/core/store';
import { createPostgresStore, migrate } from '@mailwarden/postgres';
import postgres from 'postgres';
import {
  invalidationsReach,
  redactUrl,
  required,
  type OpenedStore,
  type Retention,
  type StoreConnectionSettings,
  type StoreEnvironment,
} from './store-settings.js';

/** The service's PostgreSQL store, migrated first: its own postgres.js pool, settings from the environment (store-settings.ts). */
export async function openPostgres(env: StoreEnvironment, settings: StoreConnectionSettings, retention: Retention): Promise<OpenedStore> {
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
    throw new MailwardenError('store_unavailable', `Cannot migrate PostgreSQL at ${redactUrl(url)}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const postgresStore = createPostgresStore({ sql, schema, ...retention });
  const store = await createCheckCache({ store: postgresStore });
  return {
    kind: 'postgres',
    store,
    // Expired Mailgun token claims, and messages past the retention if one is set.
    purgeExpired: (now: number) => postgresStore.purgeExpired(now),
    ready: () => invalidationsReach(postgresStore, 'PostgreSQL'),
    close: async () => void (await store.close(), await sql.end({ timeout: 5 })),
  };
}
