import { randomBytes } from 'node:crypto';
import postgres, { type Sql } from 'postgres';
import { inject } from 'vitest';
import { createPostgresStore, migrate, type PostgresStoreOptions } from '../src/index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

/** The server scripts/test-services.ts started (or DATABASE_URL). */
export const databaseUrl = inject('databaseUrl');

// biome-ignore lint/complexity/noBannedTypes: postgres.js's own type for "no custom types"
export function connect(options: postgres.Options<{}> = {}): Sql {
  return postgres(databaseUrl, { max: 4, onnotice: () => {}, ...options });
}

export function randomSchema(): string {
  return `mw_test_${randomBytes(6).toString('hex')}`;
}

/** A freshly migrated schema of its own, and a store on it; `drop` removes both. */
export async function freshStore(
  sql: Sql,
  options: Omit<PostgresStoreOptions, 'sql' | 'schema'> = {},
): Promise<{ schema: string; store: ReturnType<typeof createPostgresStore>; drop: () => Promise<void> }> {
  const schema = randomSchema();
  await migrate(sql, { schema });
  const store = createPostgresStore({ sql, schema, ...options });
  return {
    schema,
    store,
    drop: async () => {
      await store.close();
      await sql.unsafe(`DROP SCHEMA "${schema}" CASCADE`);
    },
  };
}

/**
 * Every row of every table of `schema`, as text (the erasure proof, docs/decisions.md, "Erasure"): per
 * table its name, then per row its columns' text output (JSON as JSON, so a JSON-escaped form shows as
 * it is stored), tab-separated, rows sorted.
 */
export async function dumpSchema(sql: Sql, schema: string): Promise<string> {
  const columns = await sql<{ table_name: string; column_name: string }[]>`
    SELECT c.table_name, c.column_name FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = ${schema} AND t.table_type = 'BASE TABLE' ORDER BY c.table_name, c.ordinal_position`;
  const tables = new Map<string, string[]>();
  for (const { table_name, column_name } of columns) tables.set(table_name, [...(tables.get(table_name) ?? []), column_name]);
  const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
  const parts: string[] = [];
  for (const [table, names] of tables) {
    const row = `concat_ws(E'\\t', ${names.map((name) => `coalesce(${quote(name)}::text, '\\N')`).join(', ')})`;
    const rows = await sql.unsafe(`SELECT ${row} AS row FROM ${quote(schema)}.${quote(table)} ORDER BY 1`).values();
    parts.push(`${table}\n${rows.map(([text]) => text).join('\n')}`);
  }
  return parts.join('\n\n');
}
