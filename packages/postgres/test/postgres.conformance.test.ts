import { runStoreConformanceSuite } from '@mailwarden/store-test-suite';
import { afterAll, describe, expect, test } from 'vitest';
import { connect, dumpSchema, freshStore } from './database.js';

const sql = connect({ max: 8 });
afterAll(() => sql.end());

/** Each store's schema, for its dump. */
const schemas = new WeakMap<object, string>();

// Every test gets a schema of its own, migrated from nothing and dropped when the store is closed.
runStoreConformanceSuite({
  name: 'postgres store',
  test,
  describe,
  expect,
  async createStore(options) {
    const { schema, store, drop } = await freshStore(sql, options);
    const created = { ...store, close: drop };
    schemas.set(created, schema);
    return created;
  },
  dump: (store) => dumpSchema(sql, schemas.get(store)!),
});
