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
