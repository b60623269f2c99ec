import { packageProject } from '../../vitest.shared.ts';

/** The tests that drive the dashboard in Chromium. */
export const browserTests = ['test/**/*.browser.test.ts'];

export default packageProject({ name: 'dashboard-browser', include: browserTests, services: ['chromium'] });
