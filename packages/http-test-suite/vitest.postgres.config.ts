import { packageProject } from '../../vitest.shared.ts';

/** The HTTP suite on the PostgreSQL store. */
export const postgresTests = ['test/postgres.*.test.ts'];

export default packageProject({ name: 'http-test-suite-postgres', include: postgresTests, services: ['postgres'] });
