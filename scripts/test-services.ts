// Starts the real servers the store suites talk to — PostgreSQL and Redis (single and a 3-master
// cluster) — from local binaries on free loopback ports, and the Chromium the dashboard's tests drive,
// and stops them afterwards. Used as vitest's globalSetup, so `npm test` is the one command locally and
// in CI. REDIS_URL, REDIS_CLUSTER_NODES and DATABASE_URL point the suites at servers you run yourself
// instead; CHROMIUM_PATH at another Chromium binary, BROWSER_WS_ENDPOINT at a running Playwright browser
// server.
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

const children: ChildProcess[] = [];
let browser: BrowserServer | undefined;
const directories: string[] = [];

export async function setup(project: TestProject): Promise<void> {
  try {
    project.provide('databaseUrl', process.env.DATABASE_URL ?? (await startPostgres()));
    project.provide('redisUrl', process.env.REDIS_URL ?? (await startRedis()));
    project.provide('redisClusterNodes', process.env.REDIS_CLUSTER_NODES ?? (await startRedisCluster()));
    project.provide('browserWsEndpoint', process.env.BROWSER_WS_ENDPOINT ?? (await startChromium()));
  } catch (error) {
    await teardown();
    throw error;
  }
}

export async function teardown(): Promise<void> {
  await browser?.close();
  browser = undefined;
  for (const child of children.splice(0)) {
    if (child.exitCode === null) child.kill('SIGTERM');
    await new Promise((resolve) => {
      if (child.exitCode !== null) resolve(undefined);
      else child.once('exit', resolve);
      setTimeout(resolve, 5000).unref();
    });
  }
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
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
    user === undefined ? [file, args] as const : (['runuser', ['-u', user.name, '--', file, ...args]] as const);

  const [initFile, initArgs] = run(join(bin, 'initdb'), ['-D', join(directory, 'data'), '-U', 'mailwarden', '--auth=trust', '-E', 'UTF8', '--locale=C']);
  execFileSync(initFile, initArgs, { stdio: 'pipe' });

  const port = await freePort();
  const [file, args] = run(join(bin, 'postgres'), [
    '-D', join(directory, 'data'), '-p', String(port), '-k', directory, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200',
    ...(durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
  ]);
  spawnServer('postgres', file, [...args]);
  await waitForPort(port, 'PostgreSQL');
  return `postgres://mailwarden@127.0.0.1:${port}/postgres`;
}

function findPostgresBin(): string | undefined {
  const candidates = [
    ...(process.env.PATH ?? '').split(':'),
    ...(existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort().reverse().map((v) => `/usr/lib/postgresql/${v}/bin`) : []),
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
  spawnServer('redis', redisServer(), ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', directory]);
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
      '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes',
      '--cluster-config-file', join(directory, `nodes-${port}.conf`), '--save', '', '--appendonly', 'no', '--dir', directory,
    ]);
  }
  for (const port of ports) await waitForPort(port, 'Redis cluster node');
  const nodes = ports.map((port) => `127.0.0.1:${port}`);
  execFileSync(cli, ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'], { stdio: 'pipe' });
  const deadline = Date.now() + 20_000;
  while (!execFileSync(cli, ['-p', String(ports[0]), 'cluster', 'info']).toString().includes('cluster_state:ok')) {
    if (Date.now() > deadline) throw new Error('The local Redis cluster did not reach cluster_state:ok within 20 s.');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return nodes.join(',');
}

// --- Chromium ------------------------------------------------------------------------------------

/** Debian's Chromium, driven by playwright-core (Playwright's own browser downloads need the internet). */
async function startChromium(): Promise<string> {
  const executablePath =
    process.env.CHROMIUM_PATH ??
    findOnPath('chromium') ??
    (installDebianPackage('chromium'), findOnPath('chromium'));
  if (executablePath === undefined) {
    throw new Error('Chromium not found for the dashboard tests. Install Debian\'s chromium package (apt-get install chromium) or set CHROMIUM_PATH.');
  }
  browser = await chromium.launchServer({
    executablePath,
    headless: true,
    host: '127.0.0.1',
    // Without these, Chromium keeps trying to reach Google's services, which a closed network refuses.
    args: ['--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
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
    if (code !== 0 && code !== null && children.includes(child)) console.error(`${name} exited with ${code}:\n${errors}`);
  });
  children.push(child);
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
  directories.push(directory);
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
