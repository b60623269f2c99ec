import type { Options } from 'tsup';

/** How every published package is built: ESM and CommonJS from src/index.ts, with declarations. */
export const libraryBuild: Options = {
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  // The tsconfig is composite for `tsc -b`; the declaration build is a separate, plain program.
  dts: { compilerOptions: { composite: false } },
  clean: true,
  sourcemap: true,
  target: 'node20',
};
