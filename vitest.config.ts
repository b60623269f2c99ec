import { defineConfig } from 'vitest/config';

// One vitest project per package (`packages/*/vitest.config.ts`), and a second or third where some of a
// package's files need servers the others do not (`vitest.stores.config.ts`, `vitest.browser.config.ts`…):
// a run starts only the servers of the projects whose files it selects. Shared settings: vitest.shared.ts.
export default defineConfig({
  test: {
    projects: ['packages/*/vitest.config.ts', 'packages/*/vitest.*.config.ts', 'scripts/vitest.config.ts'],
  },
});
