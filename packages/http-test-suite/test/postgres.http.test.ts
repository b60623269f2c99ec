import { randomBytes } from 'node:crypto';
import { createPostgresStore, migrate } from '@mailwarden/postgres';
import postgres from 'postgres';
import { afterAll, beforeAll, inject } from 'vitest';
import { bindings, runHttpConformanceSuite } from '../src/index.js';

// The PostgreSQL server scripts/test-services.ts started. One schema of this file's own, migrated once;
// every test uses random project ids, so stores on it never see each other's rows.
const sql = postgres(inject('databaseUrl'), { max: 8, onnotice: () => {} });
const schema = `mw_http_${randomBytes(6).toString('hex')}`;

beforeAll(() => migrate(sql, { schema }));
afterAll(async () => {
  await sql.unsafe(`DROP SCHEMA "${schema}" CASCADE`);
  await sql.end();
});

for (const [name, start] of Object.entries(bindings)) {
  runHttpConformanceSuite({
    name: `${name} on the Postgres store`,
    start,
    createStore: (options) => createPostgresStore({ sql, schema, ...options }),
  });
}
