import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.base.js';

// The CLI is a second entry; it runs on Node only, as ESM.
export default defineConfig({
  ...libraryBuild,
  entry: ['src/index.ts', 'src/cli.ts'],
  format: ['esm'],
  dts: { entry: 'src/index.ts', compilerOptions: { composite: false } },
});
