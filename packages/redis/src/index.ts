export { createRedisStore, type RedisStore, type RedisStoreOptions } from './redis-store.js';
