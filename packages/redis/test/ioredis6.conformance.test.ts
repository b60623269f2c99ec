// The store accepts ioredis 5 or 6 (its peer range), and the server's range matches: prove 6 as well,
// with the whole conformance suite and invalidations over a client of ioredis 6.
import { randomUUID } from 'node:crypto';
import { runStoreConformanceSuite } from '@mailwarden/store-test-suite';
import type { Redis as Redis5 } from 'ioredis';
import { Redis } from 'ioredis6';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { createRedisStore } from '../src/index.js';

const client = new Redis(inject('redisUrl'));
afterAll(() => client.quit());

runStoreConformanceSuite({
  name: 'Redis store over ioredis 6',
  test,
  describe,
  expect,
  // The store's types name the one ioredis a user installs; this repo holds both, so the cast.
  createStore: (options) =>
    createRedisStore({ ...options, client: client as unknown as Redis5, keyPrefix: `conformance:ioredis6:${randomUUID()}:` }),
});
