// Global setup of the projects whose tests use PostgreSQL (`services: ['postgres']` in vitest.shared.ts):
// provides `databaseUrl`, the server started once a run, or the environment's override.
import { provideService } from '../test-services.ts';

export const { setup, teardown } = provideService('databaseUrl');
