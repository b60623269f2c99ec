import { runStoreConformanceSuite } from '@mailwarden/store-test-suite';
import { afterAll, describe, expect, test } from 'vitest';
import { connect, freshStore } from './database.js';

const sql = connect({ max: 8 });
afterAll(() => sql.end());

// Every test gets a schema of its own, migrated from nothing and dropped when the store is closed.
runStoreConformanceSuite({
  name: 'postgres store',
  test,
  describe,
  expect,
  async createStore(options) {
    const { store, drop } = await freshStore(sql, options);
    return { ...store, close: drop };
  },
});
