import { packageProject } from '../../vitest.shared.ts';

/** `serve`'s tests: on Redis and PostgreSQL, the demo's printed dashboard and the unsubscribe page opened in Chromium. */
export const browserTests = ['test/serve.test.ts', 'test/unsubscribe-page.browser.test.ts'];

export default packageProject({ name: 'server-browser', include: browserTests, services: ['postgres', 'redis', 'chromium'] });
