import { packageProject } from '../vitest.shared.ts';

// The repository's own scripts (scripts/*.test.ts).
export default packageProject({ name: 'scripts', include: ['*.test.ts'] });
