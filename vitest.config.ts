import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Workspace packages export a `@mailwarden/source` condition first, so tests run against src/ without a
// build. A name of our own: a consumer's tooling that sets the common `source` condition must not resolve
// to src/, which the published packages do not ship. Without `module`, which Node does not know: the AWS
// SDK's `module` build has extensionless imports that Node cannot load, so dependencies load as in Node.
const conditions = ['@mailwarden/source', ...defaultServerConditions.filter((condition) => condition !== 'module')];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    testTimeout: 60_000,
    globalSetup: ['scripts/test-services.ts'],
  },
});
