import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.base.js';

// The server side only: the app itself is built by Vite into app/.
export default defineConfig({ ...libraryBuild, shims: true });
