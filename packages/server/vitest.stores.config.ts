import { packageProject } from '../../vitest.shared.ts';

/** The tests that run the service, the CLI or a test's own servers on Redis and PostgreSQL. */
export const storeTests = [
  'test/alerts-across-instances.test.ts',
  'test/hooks-across-instances.test.ts',
  'test/outbound-kill.test.ts',
  'test/rate-limits-across-instances.test.ts',
  'test/store-outage.test.ts',
  'test/suppressions-file.test.ts',
  'test/suppressions-file-cli.test.ts',
];

export default packageProject({ name: 'server-stores', include: storeTests, services: ['postgres', 'redis'] });
