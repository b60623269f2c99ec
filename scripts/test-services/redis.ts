// Global setup of the projects whose tests use Redis (`services: ['redis']` in vitest.shared.ts):
// provides `redisUrl`, the server started once a run, or the environment's override.
import { provideService } from '../test-services.ts';

export const { setup, teardown } = provideService('redisUrl');
