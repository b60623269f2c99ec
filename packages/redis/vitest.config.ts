import { packageProject } from '../../vitest.shared.ts';

export default packageProject({ name: 'redis', services: ['redis', 'redis-cluster', 'lua'] });
