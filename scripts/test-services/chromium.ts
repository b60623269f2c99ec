// Global setup of the projects whose tests use Chromium (`services: ['chromium']` in vitest.shared.ts):
// provides `browserWsEndpoint`, the server started once a run, or the environment's override.
import { provideService } from '../test-services.ts';

export const { setup, teardown } = provideService('browserWsEndpoint');
