// `npm run dev:dashboard`: the dashboard from its sources under Vite's dev server, which swaps a changed
// component in place (Prefresh, keeping its state) and styles too, against the demo service on a
// memory store; Vite passes the JSON API (`/projects/…`) on to the service, so the app finds it where
// the built dashboard does. `--port <n>` picks Vite's port (default 5173, or the next free one).
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { createServer } from 'vite';
import { loadConfig } from '../packages/server/src/config.js';
import { DEMO_PROJECT, seedDemo, withDemoProject } from '../packages/server/src/demo.js';
import { startService } from '../packages/server/src/service.js';
import { openStore } from '../packages/server/src/store.js';

const { values } = parseArgs({ options: { port: { type: 'string', default: '5173' } } });
const dashboard = new URL('../packages/dashboard/', import.meta.url);

// The service serves no dashboard of its own: the one to look at is Vite's, and app/ may not be built.
const loaded = loadConfig({ env: { PORT: '0', MAILWARDEN_LOG_LEVEL: 'error', MAILWARDEN_DASHBOARD: 'false' } });
const { config, apiKey } = withDemoProject(loaded);
const opened = await openStore({});
const service = await startService(config, opened);
await seedDemo(service.mailwarden);

const vite = await createServer({
  configFile: fileURLToPath(new URL('vite.config.ts', dashboard)),
  // The config's root is relative to the working directory of `vite build` (the package); this runs from the repository.
  root: fileURLToPath(new URL('ui/', dashboard)),
  base: '/dashboard/',
  clearScreen: false,
  server: { host: '127.0.0.1', port: Number(values.port), proxy: { '/projects/': { target: service.url } } },
});
await vite.listen();
const url = vite.resolvedUrls?.local[0] ?? `http://127.0.0.1:${values.port}/dashboard/`;

console.log(
  [
    '',
    `Dashboard (from source, hot reload): ${url}`,
    `  sign in with project "${DEMO_PROJECT}" and API key ${apiKey}`,
    `  the demo service (memory store) answers at ${service.url}`,
    '',
    'Stop with Ctrl-C.',
    '',
  ].join('\n'),
);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  // Vite's close waits for its dependency optimizer, which a page load can start: on a busy machine that
  // took over a minute (a clean clone's CI run). Nothing of the dev server needs saving, so it gets 3 s.
  const closed = Promise.all([vite.close(), service.close()]);
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 3000).unref())]);
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
