import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/cli.ts'],
  format: ['esm'],
  // The tsconfig is composite for `tsc -b`; the declaration build is a separate, plain program.
  dts: { entry: 'src/index.ts', compilerOptions: { composite: false } },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
