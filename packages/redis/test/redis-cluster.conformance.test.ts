import { randomUUID } from 'node:crypto';
import { runStoreConformanceSuite } from '@mailwarden/store-test-suite';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { createRedisStore } from '../src/index.js';
import { clusterClient } from './cluster-client.js';
import { dumpRedis } from './dump.js';

// Every test's project is a random ID, so its hash tag lands on any of the three masters: each one
// loads the scripts on first use.
const client = clusterClient(inject('redisClusterNodes'));
afterAll(() => client.quit());
/** Each store's key prefix, for its dump. */
const prefixes = new WeakMap<object, string>();

runStoreConformanceSuite({
  name: 'Redis Cluster store',
  test,
  describe,
  expect,
  createStore: (options) => {
    const keyPrefix = `conformance:${randomUUID()}:`;
    const store = createRedisStore({ ...options, client, keyPrefix });
    prefixes.set(store, keyPrefix);
    return store;
  },
  dump: (store) => dumpRedis(client, prefixes.get(store)!),
  numRuns: 20,
});
