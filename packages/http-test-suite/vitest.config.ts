import { packageProject } from '../../vitest.shared.ts';
import { postgresTests } from './vitest.postgres.config.ts';
import { redisTests } from './vitest.redis.config.ts';

export default packageProject({ name: 'http-test-suite', exclude: [...postgresTests, ...redisTests] });
