import { packageProject } from '../../vitest.shared.ts';

/** `serve`'s tests: on Redis and PostgreSQL, and the demo's printed dashboard opened in Chromium. */
export const browserTests = ['test/serve.test.ts'];

export default packageProject({ name: 'server-browser', include: browserTests, services: ['postgres', 'redis', 'chromium'] });
