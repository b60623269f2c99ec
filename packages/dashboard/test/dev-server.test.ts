// `npm run dev:dashboard` as a person runs it: the command prints where to open the dashboard and the
// demo's key, Vite serves the app from its sources there, and the API answers through Vite's proxy.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

let dev: ChildProcessWithoutNullStreams;
let output = '';
let dashboardUrl: URL;
let apiKey: string;

beforeAll(async () => {
  // The command of the root package.json's `dev:dashboard`, without npm in between, so a signal reaches it.
  dev = spawn(process.execPath, ['--import', 'tsx', '--conditions=@mailwarden/source', 'scripts/dev-dashboard.ts', '--port', '0'], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'development' },
  });
  dev.stdout.setEncoding('utf8');
  dev.stderr.setEncoding('utf8');
  dev.stderr.on('data', (chunk: string) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    dev.stdout.on('data', (chunk: string) => {
      output += chunk;
      if (output.includes('Stop with Ctrl-C.')) resolve();
    });
    dev.once('exit', (code) => reject(new Error(`dev:dashboard exited (${code}) before it was ready:\n${output}`)));
  });
  dashboardUrl = new URL(/Dashboard \(from source, hot reload\): (\S+)/.exec(output)![1]!);
  apiKey = /API key (mw_demo_\w+)/.exec(output)![1]!;
}, 60_000);

afterAll(async () => {
  if (dev.exitCode !== null) return;
  const exited = once(dev, 'exit');
  dev.kill('SIGINT');
  const [code] = await exited;
  expect(code, output).toBe(0);
}, 60_000);

test('the printed URL serves the app from its sources, on every page', async () => {
  expect(dashboardUrl.pathname).toBe('/dashboard/');
  for (const page of ['', 'messages', 'suppressions']) {
    const answer = await fetch(new URL(page, dashboardUrl), { headers: { accept: 'text/html' } });
    expect(answer.status, page).toBe(200);
    const html = await answer.text();
    expect(html).toContain('<div id="app"></div>');
    expect(html).toContain('src="/dashboard/main.tsx"');
  }
  const module = await fetch(new URL('main.tsx', dashboardUrl));
  expect(module.status).toBe(200);
  expect(module.headers.get('content-type')).toMatch(/javascript/);
  // Hot reload: each component of a page registers with Prefresh, which swaps it in place when its file changes.
  const page = await (await fetch(new URL('pages/messages.tsx', dashboardUrl), { headers: { accept: '*/*' } })).text();
  expect(page).toContain('$RefreshReg$(_c, "MessagesPage")');
});

test("the demo's messages answer through the proxy, with the printed key", async () => {
  const messages = new URL('/projects/demo/messages?limit=2', dashboardUrl);
  const answer = await fetch(messages, { headers: { 'x-api-key': apiKey } });
  expect(answer.status).toBe(200);
  const page = (await answer.json()) as { items: unknown[] };
  expect(page.items).toHaveLength(2);
  expect((await fetch(messages)).status).toBe(401);
});
