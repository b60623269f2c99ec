import { randomUUID } from 'node:crypto';
import { runStoreConformanceSuite } from '@mailwarden/store-test-suite';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { createRedisStore } from '../src/index.js';

const client = new Redis(inject('redisUrl'));
afterAll(() => client.quit());

runStoreConformanceSuite({
  name: 'Redis store',
  test,
  describe,
  expect,
  // A fresh key prefix per test: the server holds every other test's data too.
  createStore: (options) => createRedisStore({ ...options, client, keyPrefix: `conformance:${randomUUID()}:` }),
});

// Filtered listings that read 2 entries per script call, so every page is stitched from resumed
// calls; and retention on (an hour: nothing expires during the run, but every write sets TTLs).
runStoreConformanceSuite({
  name: 'Redis store with retention, scanning 2 entries per call',
  test,
  describe,
  expect,
  createStore: (options) =>
    createRedisStore({
      ...options,
      client,
      keyPrefix: `conformance:${randomUUID()}:`,
      scanBudget: 2,
      retention: { messagesMs: 3_600_000 },
    }),
  groups: { suppressions: false },
});
