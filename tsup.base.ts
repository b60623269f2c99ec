import type { Options } from 'tsup';

/** How every published package is built: ESM and CommonJS from src/index.ts, with declarations. */
export const libraryBuild: Options = {
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  // Shared modules go into chunks in CommonJS too (ESM splits by default): without it every CJS entry of a
  // package inlines its own MailwardenError, check cache and so on, so one package held several copies.
  splitting: true,
  // The tsconfig is composite for `tsc -b`; the declaration build is a separate, plain program.
  dts: { compilerOptions: { composite: false } },
  clean: true,
  sourcemap: true,
  target: 'node20',
};
