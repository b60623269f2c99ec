import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Workspace packages export a `source` condition first, so tests run against src/ without a build.
export default defineConfig({
  resolve: { conditions: ['source', ...defaultServerConditions] },
  ssr: { resolve: { conditions: ['source', ...defaultServerConditions] } },
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    testTimeout: 60_000,
    globalSetup: ['scripts/test-services.ts'],
  },
});
