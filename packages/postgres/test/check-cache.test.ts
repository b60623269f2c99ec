import { runCheckCacheSuite } from '@mailwarden/store-test-suite';
import { afterAll, expect, test } from 'vitest';
import { createPostgresStore, migrate } from '../src/index.js';
import { connect, randomSchema } from './database.js';

// Two clients, as two app instances would have; one schema, so they share the data and the channel.
const clients = [connect(), connect()] as const;
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await clients[0].unsafe(`DROP SCHEMA "${schema}" CASCADE`);
  await Promise.all(clients.map((client) => client.end()));
});

runCheckCacheSuite({
  name: 'Postgres store',
  test,
  expect,
  createStores: async () => {
    const schema = randomSchema();
    schemas.push(schema);
    await migrate(clients[0], { schema });
    return [createPostgresStore({ sql: clients[0], schema }), createPostgresStore({ sql: clients[1], schema })];
  },
});
