import { randomUUID } from 'node:crypto';
import { runCheckCacheSuite } from '@mailwarden/store-test-suite';
import { Redis } from 'ioredis';
import { afterAll, expect, inject, test } from 'vitest';
import { createRedisStore } from '../src/index.js';

// Two clients, as two app instances would have; one key prefix, so they share the data and the channel.
const clients = [new Redis(inject('redisUrl')), new Redis(inject('redisUrl'))] as const;
afterAll(() => Promise.all(clients.map((client) => client.quit())));

runCheckCacheSuite({
  name: 'Redis store',
  test,
  expect,
  createStores: async () => {
    const keyPrefix = `check-cache:${randomUUID()}:`;
    return [createRedisStore({ client: clients[0], keyPrefix }), createRedisStore({ client: clients[1], keyPrefix })];
  },
});
