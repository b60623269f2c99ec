import { randomUUID } from 'node:crypto';
import { runStoreConformanceSuite } from '@mailwarden/store-test-suite';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { createRedisStore, type RedisStoreOptions } from '../src/index.js';
import { dumpRedis } from './dump.js';

const client = new Redis(inject('redisUrl'));
afterAll(() => client.quit());

/** Each store's key prefix, for its dump. */
const prefixes = new WeakMap<object, string>();
/** A store of a fresh key prefix: the server holds every other test's data too. */
function freshStore(options: Omit<RedisStoreOptions, 'client' | 'keyPrefix'>) {
  const keyPrefix = `conformance:${randomUUID()}:`;
  const store = createRedisStore({ ...options, client, keyPrefix });
  prefixes.set(store, keyPrefix);
  return store;
}
const dump = (store: object) => dumpRedis(client, prefixes.get(store)!);

runStoreConformanceSuite({
  name: 'Redis store',
  test,
  describe,
  expect,
  createStore: freshStore,
  dump,
});

// Filtered listings that read 2 entries per script call, so every page is stitched from resumed
// calls; and retention on (an hour: nothing expires during the run, but every write sets TTLs).
runStoreConformanceSuite({
  name: 'Redis store with retention, scanning 2 entries per call',
  test,
  describe,
  expect,
  createStore: (options) => freshStore({ ...options, scanBudget: 2, retention: { messagesMs: 3_600_000 } }),
  dump,
  groups: { suppressions: false },
});
