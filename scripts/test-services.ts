// Starts the real servers the tests talk to — PostgreSQL, Redis (single and a 3-master cluster) and the
// Chromium the dashboard's tests drive — from local binaries on free loopback ports, and stops them
// afterwards: the same locally and in CI. Each vitest project names the servers its tests use
// (`services` in vitest.shared.ts), and its global setups in scripts/test-services/ ask this module for
// them, so a run starts only what its selected files need: `npx vitest run packages/core` starts nothing.
// DATABASE_URL, REDIS_URL and REDIS_CLUSTER_NODES point the tests at servers you run yourself instead;
// CHROMIUM_PATH at another Chromium binary, BROWSER_WS_ENDPOINT at a running Playwright browser server.
// The benchmarks use `setup`/`teardown` and `startDurablePostgres` directly.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, chownSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserServer } from 'playwright-core';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
    redisClusterNodes: string;
    /** Where the dashboard's tests connect to Chromium (`chromium.connect`). */
    browserWsEndpoint: string;
  }
}

/** What a test injects (`inject('databaseUrl')`), and where it comes from. */
export type ServiceName = 'databaseUrl' | 'redisUrl' | 'redisClusterNodes' | 'browserWsEndpoint';

const sources: Record<ServiceName, () => Promise<string>> = {
  databaseUrl: async () => process.env.DATABASE_URL ?? startPostgres(),
  redisUrl: async () => process.env.REDIS_URL ?? startRedis(),
  redisClusterNodes: async () => process.env.REDIS_CLUSTER_NODES ?? startRedisCluster(),
  browserWsEndpoint: async () => process.env.BROWSER_WS_ENDPOINT ?? startChromium(),
};

interface Running {
  /** Each service's value, asked for at most once a process. */
  services: Map<ServiceName, Promise<string>>;
  /** Every service asked for, in order: what a run started (see scripts/test-services.test.ts). */
  asked: ServiceName[];
  children: ChildProcess[];
  browser: BrowserServer | undefined;
  directories: string[];
}

// Vitest imports each project's global setup through that project's own module runner, so every
// project gets its own copy of this module; the servers live on globalThis, so that two projects that
// use PostgreSQL share one.
const running: Running = ((globalThis as { [key: symbol]: Running })[Symbol.for('mailwarden.test-services')] ??= {
  services: new Map(),
  asked: [],
  children: [],
  browser: undefined,
  directories: [],
});

/**
 * The URL (or node list, or endpoint) of a service: its environment variable's value, or a server
 * started now — once a process, however many projects ask. A server that cannot start stops the
 * others and rejects with a message naming what to install.
 */
export function service(name: ServiceName): Promise<string> {
  let value = running.services.get(name);
  if (value === undefined) {
    running.asked.push(name);
    value = sources[name]().catch(async (error: unknown) => {
      await teardown();
      throw error;
    });
    running.services.set(name, value);
  }
  return value;
}

/**
 * The global setup of the projects whose tests inject `name` (scripts/test-services/*.ts). Every project's
 * teardown stops every server: vitest tears projects down only once all their tests have run.
 */
export function provideService(name: ServiceName): { setup(project: TestProject): Promise<void>; teardown(): Promise<void> } {
  return {
    async setup(project) {
      project.provide(name, await service(name));
    },
    teardown,
  };
}

/** The services asked for so far in this process (a test checks that a run asked for none). */
export function servicesAsked(): readonly ServiceName[] {
  return [...running.asked];
}

/**
 * Provides every service (the benchmarks' entry point; set a variable such as `DATABASE_URL=unused`
 * to skip a server).
 */
export async function setup(project: { provide(key: ServiceName, value: string): void }): Promise<void> {
  for (const name of Object.keys(sources) as ServiceName[]) project.provide(name, await service(name));
}

/** Stops every server this process started. */
export async function teardown(): Promise<void> {
  running.services.clear();
  const browser = running.browser;
  running.browser = undefined;
  await browser?.close();
  for (const child of running.children.splice(0)) {
    if (child.exitCode === null) child.kill('SIGTERM');
    await new Promise((resolve) => {
      if (child.exitCode !== null) resolve(undefined);
      else child.once('exit', resolve);
      setTimeout(resolve, 5000).unref();
    });
  }
  for (const directory of running.directories.splice(0)) rmSync(directory, { recursive: true, force: true });
}

// --- PostgreSQL --------------------------------------------------------------------------------

/**
 * A PostgreSQL with its durable defaults (fsync, synchronous_commit, full_page_writes on): what a
 * benchmark of writes compares with, where the tests' server trades durability for speed. Stopped by
 * `teardown`.
 */
export function startDurablePostgres(): Promise<string> {
  return startPostgres({ durable: true });
}

async function startPostgres({ durable = false } = {}): Promise<string> {
  const bin = findPostgresBin() ?? (installDebianPackage('postgresql'), findPostgresBin());
  if (bin === undefined) {
    throw new Error('PostgreSQL server binaries (initdb, postgres) not found. Install PostgreSQL 13+ or set DATABASE_URL.');
  }
  const asRoot = process.getuid?.() === 0;
  // PostgreSQL refuses to run as root: run it as the unprivileged `postgres` user.
  const user = asRoot ? unprivilegedUser() : undefined;
  const directory = temporaryDirectory('mailwarden-pg-');
  if (user !== undefined) chownSync(directory, user.uid, user.gid);
  const run = (file: string, args: string[]) =>
    user === undefined ? ([file, args] as const) : (['runuser', ['-u', user.name, '--', file, ...args]] as const);

  const [initFile, initArgs] = run(join(bin, 'initdb'), [
    '-D',
    join(directory, 'data'),
    '-U',
    'mailwarden',
    '--auth=trust',
    '-E',
    'UTF8',
    '--locale=C',
  ]);
  execFileSync(initFile, initArgs, { stdio: 'pipe' });

  const port = await freePort();
  const [file, args] = run(join(bin, 'postgres'), [
    '-D',
    join(directory, 'data'),
    '-p',
    String(port),
    '-k',
    directory,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'max_connections=200',
    ...(durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
  ]);
  spawnServer('postgres', file, [...args]);
  await waitForPort(port, 'PostgreSQL');
  return `postgres://mailwarden@127.0.0.1:${port}/postgres`;
}

function findPostgresBin(): string | undefined {
  const candidates = [
    ...(process.env.PATH ?? '').split(':'),
    ...(existsSync('/usr/lib/postgresql')
      ? readdirSync('/usr/lib/postgresql')
          .sort()
          .reverse()
          .map((v) => `/usr/lib/postgresql/${v}/bin`)
      : []),
  ];
  return candidates.find((dir) => dir !== '' && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres')));
}

function unprivilegedUser(): { name: string; uid: number; gid: number } {
  for (const name of ['postgres', 'mailwarden']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name]).toString().trim());
      const gid = Number(execFileSync('id', ['-g', name]).toString().trim());
      return { name, uid, gid };
    } catch {
      // try the next one
    }
  }
  execFileSync('useradd', ['--system', '--no-create-home', 'mailwarden']);
  return unprivilegedUser();
}

// --- Redis ---------------------------------------------------------------------------------------

function redisServer(): string {
  const found = findOnPath('redis-server') ?? (installDebianPackage('redis-server'), findOnPath('redis-server'));
  if (found === undefined) throw new Error('redis-server not found. Install Redis 6.2+ or set REDIS_URL and REDIS_CLUSTER_NODES.');
  return found;
}

async function startRedis(): Promise<string> {
  const port = await freePort();
  const directory = temporaryDirectory('mailwarden-redis-');
  spawnServer('redis', redisServer(), [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    directory,
  ]);
  await waitForPort(port, 'Redis');
  return `redis://127.0.0.1:${port}`;
}

async function startRedisCluster(): Promise<string> {
  const server = redisServer();
  const cli = findOnPath('redis-cli');
  if (cli === undefined) throw new Error('redis-cli not found (package redis-tools). Set REDIS_CLUSTER_NODES instead.');
  const directory = temporaryDirectory('mailwarden-redis-cluster-');
  const ports = [await freePort(), await freePort(), await freePort()];
  for (const port of ports) {
    spawnServer(`redis-cluster-${port}`, server, [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      join(directory, `nodes-${port}.conf`),
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      directory,
    ]);
  }
  for (const port of ports) await waitForPort(port, 'Redis cluster node');
  const nodes = ports.map((port) => `127.0.0.1:${port}`);
  execFileSync(cli, ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'], { stdio: 'pipe' });
  const deadline = Date.now() + 20_000;
  while (
    !execFileSync(cli, ['-p', String(ports[0]), 'cluster', 'info'])
      .toString()
      .includes('cluster_state:ok')
  ) {
    if (Date.now() > deadline) throw new Error('The local Redis cluster did not reach cluster_state:ok within 20 s.');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return nodes.join(',');
}

// --- Lua -----------------------------------------------------------------------------------------

/**
 * `luac5.1` (Debian's `lua5.1`), for the syntax check of the Redis scripts (Redis runs Lua 5.1); `luac`
 * where no `luac5.1` can be had.
 */
export function luac(): string {
  const found = findOnPath('luac5.1') ?? (installDebianPackage('lua5.1'), findOnPath('luac5.1') ?? findOnPath('luac'));
  if (found === undefined) {
    throw new Error('luac5.1 not found for the syntax check of the Redis scripts. Install Lua 5.1 (Debian: apt-get install lua5.1).');
  }
  return found;
}

// --- Chromium ------------------------------------------------------------------------------------

/** Debian's Chromium, driven by playwright-core (Playwright's own browser downloads need the internet). */
async function startChromium(): Promise<string> {
  const executablePath = process.env.CHROMIUM_PATH ?? findOnPath('chromium') ?? (installDebianPackage('chromium'), findOnPath('chromium'));
  if (executablePath === undefined) {
    throw new Error(
      "Chromium not found for the dashboard tests. Install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH.",
    );
  }
  const browser = await chromium.launchServer({
    executablePath,
    headless: true,
    host: '127.0.0.1',
    // Without these, Chromium keeps trying to reach Google's services, which a closed network refuses.
    args: [
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  running.browser = browser;
  return browser.wsEndpoint();
}

// --- processes, ports, packages ------------------------------------------------------------------

function spawnServer(name: string, file: string, args: string[]): void {
  const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-4000);
  });
  child.once('exit', (code) => {
    if (code !== 0 && code !== null && running.children.includes(child)) console.error(`${name} exited with ${code}:\n${errors}`);
  });
  running.children.push(child);
}

async function waitForPort(port: number, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`${what} did not start listening on 127.0.0.1:${port} within 30 s.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function temporaryDirectory(prefix: string): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  running.directories.push(directory);
  return directory;
}

function findOnPath(command: string): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/bin']) {
    if (dir !== '' && existsSync(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

/** On Debian as root, installs a missing server package; elsewhere does nothing (the caller then explains). */
function installDebianPackage(name: string): void {
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) return;
  console.log(`Installing ${name} with apt-get for the tests…`);
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', name], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}
