import { packageProject } from '../../vitest.shared.ts';

/** The HTTP suite on the Redis store. */
export const redisTests = ['test/redis.*.test.ts'];

export default packageProject({ name: 'http-test-suite-redis', include: redisTests, services: ['redis'] });
