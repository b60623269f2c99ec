import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.base.js';

// Four entries: the application's API, the wire schemas, the store author's kit and the testing kit.
export default defineConfig({ ...libraryBuild, entry: ['src/index.ts', 'src/schemas.ts', 'src/store.ts', 'src/testing.ts'] });
