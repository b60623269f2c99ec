import { packageProject } from '../../vitest.shared.ts';
import { browserTests } from './vitest.browser.config.ts';
import { storeTests } from './vitest.stores.config.ts';

export default packageProject({ name: 'server', exclude: [...storeTests, ...browserTests] });
