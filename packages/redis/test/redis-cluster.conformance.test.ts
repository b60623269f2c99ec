import { randomUUID } from 'node:crypto';
import { runStoreConformanceSuite } from '@mailwarden/store-test-suite';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { createRedisStore } from '../src/index.js';
import { clusterClient } from './cluster-client.js';

// Every test's project is a random ID, so its hash tag lands on any of the three masters: each one
// loads the scripts on first use.
const client = clusterClient(inject('redisClusterNodes'));
afterAll(() => client.quit());

runStoreConformanceSuite({
  name: 'Redis Cluster store',
  test,
  describe,
  expect,
  createStore: (options) => createRedisStore({ ...options, client, keyPrefix: `conformance:${randomUUID()}:` }),
  numRuns: 20,
});
