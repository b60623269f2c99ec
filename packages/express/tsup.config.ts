import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  // The tsconfig is a composite project for `tsc -b`; the declaration build compiles src alone.
  dts: { compilerOptions: { composite: false } },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
