export { createRedisStore, type RedisStoreOptions } from './redis-store.js';
