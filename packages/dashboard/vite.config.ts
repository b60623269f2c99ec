import prefresh from '@prefresh/vite';
import { defineConfig, type UserConfig } from 'vite';

// The dashboard is built once, into app/, and shipped in the package: users run no build. Preact stands
// in for React (downshift's combobox is written against React's hooks); JSX goes through esbuild.
// Under the dev server (`npm run dev:dashboard`) Prefresh swaps changed components in place, keeping their
// state; the build has no use for it.
export default defineConfig(
  async ({ command }): Promise<UserConfig> => ({
    root: 'ui',
    plugins: command === 'serve' ? [await prefresh()] : [],
    base: './',
    publicDir: 'public',
    resolve: {
      alias: {
        react: 'preact/compat',
        'react-dom': 'preact/compat',
        'react/jsx-runtime': 'preact/jsx-runtime',
      },
    },
    esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
    build: {
      outDir: '../app',
      emptyOutDir: true,
      target: 'es2022',
      // The polyfill would be inline-free, but every supported browser has modulepreload.
      modulePreload: { polyfill: false },
      reportCompressedSize: true,
    },
  }),
);
