import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Workspace packages export a `@mailwarden/source` condition first, so tests run against src/ without a
// build. A name of our own: a consumer's tooling that sets the common `source` condition must not resolve
// to src/, which the published packages do not ship.
export default defineConfig({
  resolve: { conditions: ['@mailwarden/source', ...defaultServerConditions] },
  ssr: { resolve: { conditions: ['@mailwarden/source', ...defaultServerConditions] } },
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    testTimeout: 60_000,
    globalSetup: ['scripts/test-services.ts'],
  },
});
