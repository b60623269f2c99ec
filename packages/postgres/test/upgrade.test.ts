// A database that the version before the definitions step migrated (its migration 1 created
// mailwarden_apply_events) upgrades with today's migrate(): same catalog as a fresh schema, data kept,
// same behaviour. And every migrate() replaces a function whose source differs, even under traffic.
import { createMailwarden, createMemoryStore, type DeliveryEvent, type Store } from '@mailwarden/core';
import type { SuppressionRecord } from '@mailwarden/core/store';
import { runStoreConformanceSuite } from '@mailwarden/store-test-suite';
import fc from 'fast-check';
import type { Sql } from 'postgres';
import { afterAll, describe, expect, test } from 'vitest';
import { createPostgresStore, migrate, migrations, schemaFunctions } from '../src/index.js';
import { connect, dumpSchema, randomSchema } from './database.js';
import * as before from './fixtures/migrations-before-definitions.js';

const sql = connect({ max: 8 });
afterAll(() => sql.end());

const latest = migrations.map((migration) => migration.version);
const dropSchema = (schema: string) => sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);

/** A schema as a deployment of the previous version left it: that version's migrate(), all its steps. */
async function previousVersionSchema(): Promise<string> {
  const schema = randomSchema();
  expect(await before.migrate(sql, { schema })).toStrictEqual({ applied: [1, 2] });
  return schema;
}

/** What a schema is made of, with its name taken out so two schemas compare. */
async function catalogOf(schema: string): Promise<unknown> {
  const columns = await sql`
    SELECT table_name, column_name, data_type, is_nullable, collation_name, column_default, is_generated, generation_expression
    FROM information_schema.columns WHERE table_schema = ${schema} ORDER BY table_name, ordinal_position`;
  const constraints = await sql`
    SELECT t.relname AS table, c.conname AS name, pg_get_constraintdef(c.oid) AS definition
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
    WHERE n.nspname = ${schema} ORDER BY 1, 2`;
  const indexes = await sql`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = ${schema} ORDER BY 1`;
  const functions = await sql`
    SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS arguments, pg_get_function_result(p.oid) AS result,
           l.lanname AS language, p.prosrc
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
    WHERE n.nspname = ${schema} ORDER BY 1, 2`;
  const versions = await sql.unsafe(`SELECT version, name FROM "${schema}".mailwarden_migrations ORDER BY version`);
  const text = JSON.stringify({ columns, constraints, indexes, functions, versions: [...versions] });
  return JSON.parse(text.replaceAll(schema, '<schema>'));
}

/** Everything a project holds, read back in full. */
async function contents(store: Store, projectId: string) {
  return {
    messages: await store.listMessages(projectId, { limit: 10_000 }),
    trackingIds: await store.listTrackingIds(projectId, { limit: 10_000 }),
    suppressions: await store.listSuppressions(projectId, { limit: 10_000 }),
  };
}

const T0 = Date.UTC(2026, 0, 1);
/** When the manual suppression is added, on both sides: after every event time. */
const MANUAL_AT = T0 + 60_000;

/**
 * A manual suppression as the previous version's store added it: its columns only (this release's store
 * writes provenance columns, which need this release's migrations, run before its instances start).
 */
const addAsBefore = (schema: string, hash: string, email: string, createdAt: number) =>
  sql.unsafe(`INSERT INTO "${schema}".suppressions (project_id, hash, email, reason, created_at) VALUES ('acme', $1, $2, 1, $3)`, [
    hash,
    email,
    createdAt,
  ]);

/** Suppressions without provenance: rows from before it read as unknown, so only the rest compares with a reference. */
const withoutProvenance = (state: { suppressions: SuppressionRecord[] }) => ({
  ...state,
  suppressions: state.suppressions.map(({ provenance: _, ...record }) => record),
});

/** Events that meet: few messages, recipients, tracking IDs and keys, so batches after the upgrade change what was there. */
const event: fc.Arbitrary<DeliveryEvent> = fc
  .record({
    provider: fc.constantFrom('sendgrid', 'ses'),
    type: fc.constantFrom('sent', 'delivered', 'bounced', 'complained', 'deferred', 'opened', 'unknown'),
    bounceClass: fc.constantFrom('hard', 'soft'),
    messageId: fc.constantFrom('m1', 'm2', 'm3', null),
    recipient: fc.constantFrom('ana@example.com', 'bo@example.org'),
    trackingId: fc.constantFrom(null, 'promo', 'Promo', 'news'),
    occurredAt: fc.integer({ min: 0, max: 20 }).map((seconds) => new Date(T0 + seconds * 1000)),
    eventKey: fc.integer({ min: 0, max: 15 }).map((key) => `key-${key}`),
  })
  .map(({ bounceClass, ...event }) => ({ ...event, ...(event.type === 'bounced' ? { bounceClass } : {}) }) as DeliveryEvent);

describe('upgrading a schema of the version whose migration 1 created mailwarden_apply_events', () => {
  test("ends with a fresh schema's tables, indexes, constraints, functions and versions; a second migrate does nothing", async () => {
    const old = await previousVersionSchema();
    const fresh = randomSchema();
    try {
      expect((await migrate(sql, { schema: old })).applied).toStrictEqual(latest.filter((version) => version > 2));
      await migrate(sql, { schema: fresh });
      expect(await catalogOf(old)).toStrictEqual(await catalogOf(fresh));
      expect(await migrate(sql, { schema: old })).toStrictEqual({ applied: [], functions: [] });
    } finally {
      await Promise.all([dropSchema(old), dropSchema(fresh)]);
    }
  });

  test('keeps what the previous version stored, and events after the upgrade join it as if there had been no upgrade', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(event, { maxLength: 12 }), fc.array(event, { maxLength: 12 }), async (earlier, later) => {
        const schema = await previousVersionSchema();
        try {
          const store = createPostgresStore({ sql, schema });
          const reference = createMemoryStore();
          const [postgresService, referenceService] = [
            createMailwarden({ store }),
            createMailwarden({ store: reference, now: () => MANUAL_AT }),
          ];
          await addAsBefore(schema, postgresService.suppressions.hashOf('manual@example.com'), 'manual@example.com', MANUAL_AT);
          await referenceService.suppressions.add('acme', 'manual@example.com');
          // Written by the previous version's function (which ignores the provenance this release sends).
          expect(await postgresService.applyEvents('acme', earlier)).toStrictEqual(await referenceService.applyEvents('acme', earlier));

          await migrate(sql, { schema });
          const stored = await contents(store, 'acme');
          // Kept, and read as unknown provenance.
          expect(stored.suppressions.every((record) => record.provenance === undefined)).toBe(true);
          expect(stored).toStrictEqual(withoutProvenance(await contents(reference, 'acme')));
          expect(await postgresService.applyEvents('acme', later)).toStrictEqual(await referenceService.applyEvents('acme', later));
          expect(withoutProvenance(await contents(store, 'acme'))).toStrictEqual(withoutProvenance(await contents(reference, 'acme')));
        } finally {
          await dropSchema(schema);
        }
      }),
      { numRuns: 15 },
    );
  });

  test('a schema at version 1 alone gets version 2 and keeps its data', async () => {
    const schema = randomSchema();
    try {
      // What that version's migrate() left before webhook tokens existed: the migrations table and version 1.
      const initial = before.migrations.find((migration) => migration.version === 1)!;
      await sql.begin(async (tx) => {
        await tx.unsafe(`CREATE SCHEMA "${schema}"`);
        await tx.unsafe(`CREATE TABLE "${schema}".mailwarden_migrations (
          version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
        await tx.unsafe(initial.sql(before.schemaNames(schema)));
        await tx.unsafe(`INSERT INTO "${schema}".mailwarden_migrations (version, name) VALUES (1, 'initial')`);
      });
      const store = createPostgresStore({ sql, schema });
      const hash = 'a'.repeat(64);
      await addAsBefore(schema, hash, 'a@example.com', 1);
      await expect(store.claimWebhookToken('acme', 'mailgun:t', hash, 2)).rejects.toThrow(/webhook_tokens/);

      expect((await migrate(sql, { schema })).applied).toStrictEqual(latest.filter((version) => version > 1));
      expect(await store.getSuppression('acme', hash)).toStrictEqual({ hash, email: 'a@example.com', reason: 'manual', createdAt: 1 });
      expect(await store.claimWebhookToken('acme', 'mailgun:t', hash, 2)).toBe('first');
      expect(await store.claimWebhookToken('acme', 'mailgun:t', hash, 2)).toBe('same');
      expect(await migrate(sql, { schema })).toStrictEqual({ applied: [], functions: [] });
    } finally {
      await dropSchema(schema);
    }
  });
});

describe('functions are defined on every migrate', () => {
  const applyEventsFunction = schemaFunctions.find((fn) => fn.name === 'mailwarden_apply_events')!;
  const replaceSource = (schema: string, body: string) =>
    sql.unsafe(`CREATE OR REPLACE FUNCTION "${schema}".mailwarden_apply_events(p_project_id text, p_events jsonb) RETURNS text
      LANGUAGE plpgsql AS $fn$${body}$fn$`);
  const event = (key: string): DeliveryEvent => ({
    provider: 'ses',
    type: 'delivered',
    messageId: key,
    recipient: 'ana@example.com',
    trackingId: 'promo',
    occurredAt: new Date(T0),
    eventKey: key,
  });

  test('a function whose source differs is replaced, keeping its grants', async () => {
    const schema = randomSchema();
    try {
      await migrate(sql, { schema });
      await replaceSource(schema, `BEGIN RETURN 'broken'; END`);
      await sql.unsafe(`REVOKE EXECUTE ON FUNCTION "${schema}".mailwarden_apply_events(text, jsonb) FROM PUBLIC`);
      const grants = async () =>
        (
          await sql.unsafe(
            `SELECT proacl::text AS acl FROM pg_proc WHERE oid = '"${schema}".mailwarden_apply_events(text, jsonb)'::regprocedure`,
          )
        )[0]!.acl as string | null;
      const revoked = await grants();
      expect(revoked).not.toBeNull(); // PUBLIC's default EXECUTE is gone: the owner's grant alone is listed

      expect(await migrate(sql, { schema })).toStrictEqual({ applied: [], functions: ['mailwarden_apply_events'] });
      expect(await grants()).toBe(revoked);
      const mailwarden = createMailwarden({ store: createPostgresStore({ sql, schema }) });
      expect((await mailwarden.applyEvents('acme', [event('e1'), event('e1')])).accepted).toBe(1);
      expect(await migrate(sql, { schema })).toStrictEqual({ applied: [], functions: [] });
    } finally {
      await dropSchema(schema);
    }
  });

  test('migrators racing while instances apply events (a rolling deploy): one replaces the function, every batch is applied once', async () => {
    const schema = randomSchema();
    const migrators = Array.from({ length: 3 }, () => connect({ max: 1 }));
    try {
      await migrate(sql, { schema });
      // The same function with another source, as the previous release would have left it.
      await replaceSource(
        schema,
        `${applyEventsFunction.body({ identifier: `"${schema}"`, literal: `'${schema}'` })}-- previous release\n`,
      );
      const instances = Array.from({ length: 4 }, () => createMailwarden({ store: createPostgresStore({ sql, schema }) }));

      const [results, accepted] = await Promise.all([
        Promise.all(migrators.map((client: Sql) => migrate(client, { schema }))),
        Promise.all(
          Array.from({ length: 40 }, (_, batch) =>
            instances[batch % instances.length]!.applyEvents('acme', [
              event(`b${batch}`),
              event(`b${batch}`),
              event(`shared-${batch % 5}`),
            ]),
          ),
        ),
      ]);
      expect(results.map((result) => result.functions).sort()).toStrictEqual([[], [], ['mailwarden_apply_events']]);
      expect(accepted.reduce((sum, result) => sum + result.accepted, 0)).toBe(40 + 5);
      const [row] = await createPostgresStore({ sql, schema }).listTrackingIds('acme', { limit: 1 });
      expect(row).toMatchObject({ trackingId: 'promo', messages: 45, delivered: 45 });
    } finally {
      await Promise.all(migrators.map((client) => client.end()));
      await dropSchema(schema);
    }
  });
});

describe('migration 11, suppression lists per stream, on a schema at version 10', () => {
  /** A schema as migrate() left it at version 10: the migrations table and versions 1 to 10, with suppressions. */
  async function versionTenSchema(): Promise<string> {
    const schema = randomSchema();
    const names = { identifier: `"${schema}"`, literal: `'${schema}'` };
    await sql.begin(async (tx) => {
      await tx.unsafe(`CREATE SCHEMA "${schema}"`);
      await tx.unsafe(`CREATE TABLE "${schema}".mailwarden_migrations (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      for (const migration of migrations.filter(({ version }) => version <= 10)) {
        await tx.unsafe(migration.sql(names));
        await tx.unsafe(`INSERT INTO "${schema}".mailwarden_migrations (version, name) VALUES ($1, $2)`, [
          migration.version,
          migration.name,
        ]);
      }
      await tx.unsafe(
        `INSERT INTO "${schema}".suppressions (project_id, hash, email, reason, created_at, source, source_at)
         SELECT 'acme', lpad(to_hex(i), 64, '0'), 'user' || i || '@example.com', 1 + i % 3, $1::bigint + i, 'api', $1::bigint + i
         FROM generate_series(1, 50) AS i`,
        [T0],
      );
    });
    return schema;
  }
  const hashOf = (i: number) => i.toString(16).padStart(64, '0');

  test('every row becomes project-wide and is found as before; a stream list starts empty', async () => {
    const schema = await versionTenSchema();
    try {
      expect((await migrate(sql, { schema })).applied).toStrictEqual([11, 12, 13, 14]);
      const [counts] = await sql.unsafe(`SELECT count(*)::int AS rows, count(*) FILTER (WHERE stream = '')::int AS project_wide
        FROM "${schema}".suppressions`);
      expect(counts).toStrictEqual({ rows: 50, project_wide: 50 });
      const store = createPostgresStore({ sql, schema });
      const listed = await store.listSuppressions('acme', { limit: 100 });
      expect(listed).toHaveLength(50);
      expect(listed.every((record) => !('stream' in record))).toBe(true);
      expect(await store.getSuppression('acme', hashOf(7))).toStrictEqual({
        hash: hashOf(7),
        email: 'user7@example.com',
        reason: 'hard_bounce',
        createdAt: T0 + 7,
        provenance: { source: 'api', at: T0 + 7 },
      });
      expect(await store.getSuppression('acme', hashOf(7), 'marketing')).toStrictEqual(await store.getSuppression('acme', hashOf(7)));
      expect(await store.listSuppressions('acme', { limit: 100, stream: 'marketing' })).toStrictEqual([]);
    } finally {
      await dropSchema(schema);
    }
  });

  test("indexes an operator built first, concurrently, are swapped in, not rebuilt: a fresh schema's catalog", async () => {
    const schema = await versionTenSchema();
    const fresh = randomSchema();
    try {
      // What docs/storage.md tells an operator of a large table to run before migrate(), each statement on its own.
      const s = `"${schema}".suppressions`;
      await sql.unsafe(`ALTER TABLE ${s} ADD COLUMN IF NOT EXISTS stream text COLLATE "C" NOT NULL DEFAULT ''`);
      await sql.unsafe(`CREATE UNIQUE INDEX CONCURRENTLY suppressions_pkey_000011 ON ${s} (project_id, hash, stream)`);
      // A build that failed (here, a unique index on values that repeat) leaves an invalid index under its name.
      await expect(
        sql.unsafe(`CREATE UNIQUE INDEX CONCURRENTLY suppressions_newest_first_000011 ON ${s} (project_id, stream, reason)`),
      ).rejects.toThrow(/could not create unique index/);
      await sql.unsafe(`CREATE INDEX CONCURRENTLY suppressions_by_reason_000011 ON ${s} (project_id, stream, reason, (-created_at), hash)`);
      await sql.unsafe(
        `CREATE INDEX CONCURRENTLY suppressions_by_email_prefix_000011 ON ${s} (project_id, stream, email text_pattern_ops)`,
      );
      const indexes = `SELECT array_agg(c.oid ORDER BY c.oid) AS oids FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind = 'i' AND c.relname LIKE 'suppressions%'`;
      const [built] = await sql.unsafe(
        `SELECT array_agg(c.oid ORDER BY c.oid) AS oids FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND right(c.relname, 7) = '_000011'`,
        [schema],
      );

      expect(built!.oids).toHaveLength(4);
      const [invalid] = await sql.unsafe(
        `SELECT i.indexrelid::oid AS oid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relname = 'suppressions_newest_first_000011' AND NOT i.indisvalid`,
        [schema],
      );
      expect(invalid).toBeDefined();
      expect((await migrate(sql, { schema })).applied).toStrictEqual([11, 12, 13, 14]);
      // The valid ones swapped in as they were; the invalid one dropped and built again (and version 12's two).
      const after = ((await sql.unsafe(indexes, [schema]))[0]!.oids as unknown[]).filter((oid) => !built!.oids.includes(oid));
      expect(after).toHaveLength(3);
      const kept = ((await sql.unsafe(indexes, [schema]))[0]!.oids as unknown[]).filter((oid) => built!.oids.includes(oid));
      expect(kept).toStrictEqual(built!.oids.filter((oid: unknown) => oid !== invalid!.oid));
      await migrate(sql, { schema: fresh });
      expect(await catalogOf(schema)).toStrictEqual(await catalogOf(fresh));
      expect(await createPostgresStore({ sql, schema }).listSuppressions('acme', { limit: 100 })).toHaveLength(50);
    } finally {
      await Promise.all([dropSchema(schema), dropSchema(fresh)]);
    }
  });

  test("undone as docs/storage.md says, a schema is version 10's again, its project-wide list kept", async () => {
    const schema = await versionTenSchema();
    const reference = await versionTenSchema();
    try {
      await migrate(sql, { schema });
      const store = createPostgresStore({ sql, schema });
      await store.addSuppression('acme', { hash: hashOf(7), email: 'user7@example.com', reason: 'manual', createdAt: T0, stream: 'news' });
      const s = `"${schema}"`;
      // Version 14 first, then 13, then 12, as docs/storage.md says (each its own section), then 11.
      await sql.begin(async (tx) => {
        await tx.unsafe(`DROP TABLE ${s}.api_keys, ${s}.rate_limits`);
        await tx.unsafe(`ALTER TABLE ${s}.changes DROP COLUMN actor`);
        await tx.unsafe(`DROP FUNCTION IF EXISTS ${s}.mailwarden_erase_address, ${s}.mailwarden_sync_api_keys`);
        await tx.unsafe(`DELETE FROM ${s}.mailwarden_migrations WHERE version = 14`);
      });
      await sql.begin(async (tx) => {
        await tx.unsafe(
          `DROP TABLE ${s}.changes, ${s}.change_counters, ${s}.alert_windows, ${s}.alert_window_slots, ${s}.paused_streams, ${s}.outbound_endpoints`,
        );
        for (const name of ['feed_suppressions', 'apply_alerts', 'append_changes', 'append_changes_with_statuses', 'pend_changes']) {
          await tx.unsafe(`DROP FUNCTION IF EXISTS ${s}.mailwarden_${name}`);
        }
        await tx.unsafe(`DELETE FROM ${s}.mailwarden_migrations WHERE version = 13`);
      });
      await sql.begin(async (tx) => {
        await tx.unsafe(`DROP TABLE ${s}.allowlist, ${s}.soft_bounces`);
        await tx.unsafe(`DROP FUNCTION IF EXISTS ${s}.mailwarden_soft_bounce(text, jsonb, bigint, jsonb, boolean)`);
        await tx.unsafe(`DROP INDEX ${s}.suppressions_by_expires_at, ${s}.suppressions_expiring`);
        await tx.unsafe(`ALTER TABLE ${s}.suppressions DROP COLUMN expires_at, DROP COLUMN cause_rule, DROP COLUMN allowlisted`);
        await tx.unsafe(`DELETE FROM ${s}.mailwarden_migrations WHERE version = 12`);
      });
      await sql.begin(async (tx) => {
        await tx.unsafe(`DELETE FROM ${s}.suppressions WHERE stream <> ''`);
        await tx.unsafe(`ALTER TABLE ${s}.suppressions DROP CONSTRAINT suppressions_pkey, ADD PRIMARY KEY (project_id, hash)`);
        await tx.unsafe(`DROP INDEX ${s}.suppressions_newest_first, ${s}.suppressions_by_reason, ${s}.suppressions_by_email_prefix`);
        await tx.unsafe(`CREATE INDEX suppressions_newest_first ON ${s}.suppressions (project_id, (-created_at), hash)`);
        await tx.unsafe(`CREATE INDEX suppressions_by_reason ON ${s}.suppressions (project_id, reason, (-created_at), hash)`);
        await tx.unsafe(`CREATE INDEX suppressions_by_email_prefix ON ${s}.suppressions (project_id, email text_pattern_ops)`);
        await tx.unsafe(`ALTER TABLE ${s}.suppressions DROP COLUMN stream`);
        await tx.unsafe(`DELETE FROM ${s}.mailwarden_migrations WHERE version = 11`);
      });
      // Tables, constraints, indexes and versions; this release's functions stay until an older migrate() replaces
      // them, and the search index, which migrate() adds, is not a version's.
      const tablesOf = async (name: string) => {
        const { functions: _, indexes, ...tables } = (await catalogOf(name)) as { functions: unknown; indexes: { indexname: string }[] };
        return { ...tables, indexes: indexes.filter(({ indexname }) => indexname !== 'tracking_ids_search') };
      };
      expect(await tablesOf(schema)).toStrictEqual(await tablesOf(reference));
      const [count] = await sql.unsafe(`SELECT count(*)::int AS n FROM ${s}.suppressions`);
      expect(count!.n).toBe(50);
      expect((await migrate(sql, { schema })).applied).toStrictEqual([11, 12, 13, 14]);
    } finally {
      await Promise.all([dropSchema(schema), dropSchema(reference)]);
    }
  });
});

// The whole contract on upgraded schemas: every test gets one the previous version migrated, then today's migrate().
const upgradedSchemas = new WeakMap<object, string>();
runStoreConformanceSuite({
  name: 'postgres store on a schema upgraded from the version before the definitions step',
  test,
  describe,
  expect,
  async createStore(options) {
    const schema = await previousVersionSchema();
    await migrate(sql, { schema });
    const store = createPostgresStore({ ...options, sql, schema });
    const created = {
      ...store,
      close: async () => {
        await store.close();
        await dropSchema(schema);
      },
    };
    upgradedSchemas.set(created, schema);
    return created;
  },
  dump: (store) => dumpSchema(sql, upgradedSchemas.get(store)!),
});
