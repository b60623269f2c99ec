import type { Sql, TransactionSql } from 'postgres';
import { migrationSources, migrationsTableSource, searchIndexSource } from './generated/sql.js';
import { schemaFunctions } from './schema-functions.js';
import { schemaNames, type SchemaNames } from './schema-names.js';
import { fillPlaceholders } from './sql-placeholders.js';

/**
 * One versioned step of the schema: tables and indexes, the state that must be changed in place. The
 * SQL is a function of the quoted schema name, so one database can hold several mailwarden schemas. A
 * shipped migration creates the same objects forever: a change is a new version. Functions are not
 * versioned steps (see schema-functions.ts). Written in `sql/migrations/`, one numbered file each, and
 * compiled into `src/generated/sql.ts` so the bundler ships them inside `dist`.
 */
export interface Migration {
  version: number;
  name: string;
  sql: (schema: SchemaNames) => string;
}

/** Taken by every migrate() of any schema, so concurrent starts (and CREATE EXTENSION) never race. */
const MIGRATION_LOCK = 7_366_231_861_020_554_051n;

/**
 * Every migration, in order: `sql/migrations/`. Append only, and a shipped file never changes
 * (test/migration-texts.test.ts holds them to the texts releases ran).
 */
export const migrations: readonly Migration[] = migrationSources.map(({ version, name, sql }) => ({
  version,
  name,
  sql: (schema: SchemaNames) => fillPlaceholders(sql, schema),
}));

export interface MigrateOptions {
  /** The schema to create or bring up to date. Default `mailwarden`. */
  schema?: string;
}

export interface MigrateResult {
  /** Versions this call applied, oldest first; empty when the schema was already up to date. */
  applied: number[];
  /** Functions this call created or replaced (missing, or their source differed from this release's); empty when all were current. */
  functions: string[];
}

/**
 * Creates the schema, or brings it up to the latest version. Idempotent, and safe when many app
 * instances start at once: everything runs in one transaction holding an advisory lock, and each
 * applied version is recorded in `<schema>.mailwarden_migrations`. Then, every time, it defines the
 * schema's functions (`CREATE OR REPLACE` when missing or changed) and the search index if it can.
 *
 * @example
 * import postgres from 'postgres';
 * import { migrate } from '@mailwarden/postgres';
 *
 * const sql = postgres(process.env.DATABASE_URL!);
 * await migrate(sql, { schema: 'mailwarden' });
 */
export async function migrate(sql: Sql<any>, options: MigrateOptions = {}): Promise<MigrateResult> {
  const schemaName = options.schema ?? 'mailwarden';
  const names = schemaNames(schemaName);
  const s = names.identifier;
  return sql.begin(async (tx) => {
    await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    // Keeps "already exists, skipping" notices out of the client's log; fallbacks raise warnings.
    await tx.unsafe('SET LOCAL client_min_messages = warning');
    // Checked first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege on the database even when
    // the schema exists, and a role may be given only a schema that an administrator created.
    const [existing] = await tx.unsafe('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schemaName]).values();
    if (existing === undefined) await tx.unsafe(`CREATE SCHEMA ${s}`);
    await tx.unsafe(fillPlaceholders(migrationsTableSource, names));
    const rows = await tx.unsafe(`SELECT version FROM ${s}.mailwarden_migrations`).values();
    const done = new Set(rows.map(([version]) => Number(version)));
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await tx.unsafe(migration.sql(names));
      await tx.unsafe(`INSERT INTO ${s}.mailwarden_migrations (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
      applied.push(migration.version);
    }
    const functions = await defineFunctions(tx, schemaName, names);
    await tx.unsafe(fillPlaceholders(searchIndexSource, names));
    return { applied, functions };
  });
}

/**
 * Creates each function of `schemaFunctions`, or replaces it when its source or result differs: after
 * the versioned steps, so a function always matches the tables of this release. One that is current is
 * left alone, so a migrate() at every start writes no catalog row and invalidates no session's plans.
 */
async function defineFunctions(tx: TransactionSql<any>, schemaName: string, names: SchemaNames): Promise<string[]> {
  const defined: string[] = [];
  for (const fn of schemaFunctions) {
    const body = fn.body(names);
    const [current] = await tx
      .unsafe(
        `SELECT p.prosrc, pg_get_function_result(p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = $1 AND p.proname = $2 AND pg_get_function_identity_arguments(p.oid) = $3`,
        [schemaName, fn.name, fn.arguments],
      )
      .values();
    if (current !== undefined && current[0] === body && current[1] === fn.returns) continue;
    await tx.unsafe(
      `CREATE OR REPLACE FUNCTION ${names.identifier}.${fn.name}(${fn.arguments}) RETURNS ${fn.returns}\nLANGUAGE ${fn.language} AS $fn$${body}$fn$`,
    );
    defined.push(fn.name);
  }
  return defined;
}
