import { randomBytes } from 'node:crypto';
import { messageStatus, statusCodes, type MessageStatus } from '@mailwarden/core/store';
import postgres from 'postgres';
import { afterAll, describe, expect, test } from 'vitest';
import { createPostgresStore, migrate, migrations, schemaFunctions } from '../src/index.js';
import { connect, databaseUrl, randomSchema } from './database.js';

const sql = connect();
afterAll(() => sql.end());

async function withSchema(body: (schema: string) => Promise<void>): Promise<void> {
  const schema = randomSchema();
  try {
    await body(schema);
  } finally {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
}

const latest = migrations.map((migration) => migration.version);
const allFunctions = schemaFunctions.map((fn) => fn.name);

describe('migrate', () => {
  test('creates the schema once, records each version, and does nothing the second time', async () => {
    await withSchema(async (schema) => {
      expect(await migrate(sql, { schema })).toStrictEqual({ applied: latest, functions: allFunctions });
      expect(await migrate(sql, { schema })).toStrictEqual({ applied: [], functions: [] });
      const versions = await sql.unsafe(`SELECT version, name, applied_at FROM "${schema}".mailwarden_migrations ORDER BY version`);
      expect(versions.map(({ version, name }) => ({ version, name }))).toStrictEqual(
        migrations.map(({ version, name }) => ({ version, name })),
      );
      expect(versions[0]!.applied_at).toBeInstanceOf(Date);
    });
  });

  test('two instances migrating a fresh schema at once both succeed, and it is applied once', async () => {
    await withSchema(async (schema) => {
      const [a, b] = [connect({ max: 1 }), connect({ max: 1 })];
      try {
        const results = await Promise.all([migrate(a, { schema }), migrate(b, { schema })]);
        expect(results.map((result) => result.applied).sort()).toStrictEqual([[], latest]);
        expect(results.map((result) => result.functions).sort()).toStrictEqual([[], allFunctions]);
        const [row] = await sql.unsafe(`SELECT count(*)::int AS count FROM "${schema}".mailwarden_migrations`);
        expect(row!.count).toBe(migrations.length);
      } finally {
        await Promise.all([a.end(), b.end()]);
      }
    });
  });

  test("every primary key and index of a project's rows leads with project_id", async () => {
    await withSchema(async (schema) => {
      await migrate(sql, { schema });
      const indexes = await sql`
        SELECT c.relname AS index, t.relname AS table, a.attname AS first_column, am.amname AS method
        FROM pg_index i
        JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_class t ON t.oid = i.indrelid
        JOIN pg_namespace n ON n.oid = t.relnamespace
        JOIN pg_am am ON am.oid = c.relam
        LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = i.indkey[0]
        WHERE n.nspname = ${schema} AND t.relname <> 'mailwarden_migrations'
        ORDER BY 1`;
      expect(indexes.map((row) => row.index)).toStrictEqual([
        'alert_window_slots_by_message',
        'alert_window_slots_pkey',
        'alert_windows_pkey',
        'allowlist_by_entry',
        'allowlist_pkey',
        'api_keys_pkey',
        'change_counters_pkey',
        'changes_pkey',
        'event_keys_by_seen_at',
        'event_keys_pkey',
        'messages_by_last_event_at',
        'messages_by_provider',
        'messages_by_recipient',
        'messages_by_recipient_domain',
        'messages_by_recipient_prefix',
        'messages_by_status',
        'messages_by_stream',
        'messages_by_tracking_id',
        'messages_newest_first',
        'messages_pkey',
        'outbound_endpoints_pkey',
        'paused_streams_pkey',
        'rate_limits_pkey',
        'soft_bounces_by_forget_at',
        'soft_bounces_pkey',
        'stat_buckets_pkey',
        'suppressions_by_email_prefix',
        'suppressions_by_expires_at',
        'suppressions_by_reason',
        'suppressions_expiring',
        'suppressions_newest_first',
        'suppressions_pkey',
        'timeline_entries_pkey',
        'tracking_ids_pkey',
        // The test server offers pg_trgm and btree_gin, so search has its trigram index.
        'tracking_ids_search',
        'webhook_tokens_by_expires_at',
        'webhook_tokens_pkey',
      ]);
      // Rate-limit buckets are the limiter's, not a project's (Store.hitRateLimits).
      for (const row of indexes.filter(({ table }) => table !== 'rate_limits')) expect(row.first_column, `${row.index}`).toBe('project_id');
      expect(indexes.find((row) => row.index === 'tracking_ids_search')!.method).toBe('gin');
    });
  });

  test("the status column derives a message's status exactly as core does", async () => {
    await withSchema(async (schema) => {
      await migrate(sql, { schema });
      // Every combination of the ten facts.
      const rows = await sql.unsafe(`
        INSERT INTO "${schema}".messages (project_id, key, provider, message_id, recipient, facts, first_event_at, last_event_at)
        SELECT 'p', facts::text, 'ses', 'm', 'r@example.com', facts, 0, 0 FROM generate_series(0, 1023) AS facts
        RETURNING facts, status`);
      const statusOf = new Map(Object.entries(statusCodes).map(([status, code]) => [code as number, status as MessageStatus]));
      for (const { facts, status } of rows) expect(statusOf.get(status), `facts ${facts}`).toBe(messageStatus(facts));
    });
  });

  test('rejects a schema name PostgreSQL would truncate', async () => {
    await expect(migrate(sql, { schema: 'x'.repeat(64) })).rejects.toThrow(TypeError);
    expect(() => createPostgresStore({ sql, schema: '' })).toThrow(TypeError);
  });

  test('without pg_trgm (a role that may not create extensions) search still works, by scanning; a later migrate adds the index', async () => {
    // A database of its own, where no extension exists yet, and a role that owns its schema but may
    // not create anything else in the database.
    const suffix = randomBytes(4).toString('hex');
    const database = `mw_test_db_${suffix}`;
    const role = `mw_test_role_${suffix}`;
    const schema = 'mailwarden';
    await sql.unsafe(`CREATE DATABASE ${database}`);
    const admin = postgres(urlFor({ database }), { max: 1, onnotice: () => {} });
    const limited = postgres(urlFor({ database, user: role }), { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`CREATE ROLE ${role} LOGIN; CREATE SCHEMA ${schema} AUTHORIZATION ${role}`);
      const warnings: string[] = [];
      const watched = postgres(urlFor({ database, user: role }), { max: 1, onnotice: (notice) => warnings.push(String(notice.message)) });
      expect(await migrate(watched, { schema })).toStrictEqual({ applied: latest, functions: allFunctions });
      await watched.end();
      expect(warnings.some((warning) => warning.includes('pg_trgm is not available'))).toBe(true);
      expect((await limited`SELECT to_regclass('mailwarden.tracking_ids_search') AS index`)[0]!.index).toBeNull();

      const store = createPostgresStore({ sql: limited, schema });
      const ids = ['Spring-Promo', 'PROMO-2', 'newsletter', '50%_off'];
      await store.applyEvents(
        'p',
        ids.map((trackingId, index) => ({
          key: `e${index}`,
          message: {
            key: `k${index}`,
            provider: 'ses',
            messageId: `m${index}`,
            recipient: 'r@example.com',
            trackingId,
            stream: null,
            facts: 1,
            firstEventAt: index,
            lastEventAt: index,
          },
          trackingIdSearchKey: trackingId.toLowerCase(),
          suppression: null,
        })),
      );
      const search = async (text: string) => (await store.listTrackingIds('p', { search: text, limit: 10 })).map((row) => row.trackingId);
      expect(await search('promo')).toStrictEqual(['PROMO-2', 'Spring-Promo']);
      expect(await search('%')).toStrictEqual(['50%_off']);

      // An administrator installs the extensions; the next migrate() creates the index.
      await admin.unsafe('CREATE EXTENSION pg_trgm; CREATE EXTENSION btree_gin');
      expect(await migrate(limited, { schema })).toStrictEqual({ applied: [], functions: [] });
      expect((await limited`SELECT to_regclass('mailwarden.tracking_ids_search')::text AS index`)[0]!.index).toBe(
        'mailwarden.tracking_ids_search',
      );
      expect(await search('promo')).toStrictEqual(['PROMO-2', 'Spring-Promo']);
    } finally {
      await Promise.all([admin.end(), limited.end()]);
      await sql.unsafe(`DROP DATABASE ${database} WITH (FORCE)`);
      await sql.unsafe(`DROP ROLE IF EXISTS ${role}`);
    }
  });
});

function urlFor({ database, user }: { database: string; user?: string }): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${database}`;
  if (user !== undefined) {
    url.username = user;
    url.password = '';
  }
  return url.toString();
}
