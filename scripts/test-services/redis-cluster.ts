// Global setup of the projects whose tests use the three-master Redis Cluster (`services: ['redis-cluster']` in vitest.shared.ts):
// provides `redisClusterNodes`, the server started once a run, or the environment's override.
import { provideService } from '../test-services.ts';

export const { setup, teardown } = provideService('redisClusterNodes');
