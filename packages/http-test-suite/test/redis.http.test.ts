import { randomUUID } from 'node:crypto';
import { createRedisStore } from '@mailwarden/redis';
import { Redis } from 'ioredis';
import { afterAll, inject } from 'vitest';
import { bindings, runHttpConformanceSuite } from '../src/index.js';

// The Redis server scripts/test-services.ts started. Every store has a key prefix of its own, and every
// test random project ids: the server holds other tests' data too.
const client = new Redis(inject('redisUrl'));
afterAll(() => client.quit());

for (const [name, start] of Object.entries(bindings)) {
  runHttpConformanceSuite({
    name: `${name} on the Redis store`,
    start,
    createStore: (options) => createRedisStore({ client, keyPrefix: `http-suite:${randomUUID()}:`, ...options }),
  });
}
