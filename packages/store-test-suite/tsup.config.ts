import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.base.js';

// ESM only, unlike the other packages: the suite runs inside vitest, which is ESM-only since version 4,
// so a CommonJS build would have no runner to load it (and Node 20.19+ can require() this ESM anyway).
export default defineConfig({ ...libraryBuild, format: ['esm'] });
