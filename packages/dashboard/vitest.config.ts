import { packageProject } from '../../vitest.shared.ts';
import { browserTests } from './vitest.browser.config.ts';

export default packageProject({ name: 'dashboard', exclude: browserTests });
