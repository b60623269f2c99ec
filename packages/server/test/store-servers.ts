// A Redis and a PostgreSQL of a test's own, which it may kill (SIGKILL) and start again on the same port
// and data, as a crashed store comes back. Started from local binaries the way scripts/test-services.ts
// starts the shared ones (whose processes a test must not kill).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import postgres from 'postgres';

export interface StoreServer {
  /** `redis://…` or `postgres://…` on loopback. */
  url: string;
  /** Starts the server on its port and data, and resolves once it listens (PostgreSQL: once it answers a query). */
  start(): Promise<void>;
  /** SIGKILL to the server and every process it started; resolves once all are gone. */
  kill(): Promise<void>;
  /** Whether a new connection gets an answer now: a side channel beside the service's clients. */
  accepts(): Promise<boolean>;
  /** Kills the server if it runs and deletes its data. */
  remove(): Promise<void>;
}

/**
 * A Redis whose acknowledged writes survive SIGKILL: the append-only file with `appendfsync always`, so
 * Redis writes and syncs each write before it answers. With the default `everysec`, Redis answers
 * before it writes the file while a background fsync is slow, and a SIGKILL then loses acknowledged
 * writes (seen on a loaded CI machine: 3 of 846 events).
 */
export async function startRedisServer(): Promise<StoreServer> {
  const directory = mkdtempSync(join(tmpdir(), 'mailwarden-outage-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const server: StoreServer = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn(
        findOnPath('redis-server'),
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', directory],
        {
          stdio: 'ignore',
        },
      );
      await waitForPort(port);
    },
    async kill() {
      await killed(child);
    },
    async accepts() {
      const probe = new Redis(server.url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 500 });
      probe.on('error', () => {});
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG';
      } catch {
        return false;
      } finally {
        probe.disconnect();
      }
    },
    async remove() {
      await killed(child);
      rmSync(directory, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

/**
 * A PostgreSQL whose acknowledged commits survive SIGKILL: unlike the shared test server it keeps
 * `synchronous_commit` on, so a commit is in the WAL file before it is acknowledged (`fsync=off` only
 * risks a machine crash). As root, it runs as an unprivileged user, as PostgreSQL requires.
 */
export async function startPostgresServer(): Promise<StoreServer> {
  const bin = findPostgresBin();
  const directory = mkdtempSync(join(tmpdir(), 'mailwarden-outage-pg-'));
  const data = join(directory, 'data');
  const user = process.getuid?.() === 0 ? unprivilegedUser() : undefined;
  if (user !== undefined) chownSync(directory, user.uid, user.gid);
  const as = user === undefined ? {} : { uid: user.uid, gid: user.gid };
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'mailwarden', '--auth=trust', '-E', 'UTF8', '--locale=C'], { stdio: 'pipe', ...as });
  const port = await freePort();
  let postmaster: ChildProcess | undefined;
  const server: StoreServer = {
    url: `postgres://mailwarden@127.0.0.1:${port}/postgres`,
    async start() {
      postmaster = spawn(
        join(bin, 'postgres'),
        [
          '-D',
          data,
          '-p',
          String(port),
          '-k',
          directory,
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          'fsync=off',
          '-c',
          'max_connections=100',
        ],
        { stdio: 'ignore', ...as },
      );
      await waitForPort(port);
      // Listening is not ready: until recovery ends, connections get "the database system is starting up".
      const deadline = performance.now() + 30_000;
      while (!(await server.accepts())) {
        if (performance.now() > deadline) throw new Error(`PostgreSQL on port ${port} listens but never accepts a query`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    async kill() {
      // Backends are processes of their own (not in the postmaster's group): kill them with it, as a
      // crash of the machine or container would, so that the restart finds no one holding shared memory.
      const backends = postmaster?.pid === undefined ? [] : childrenOf(postmaster.pid);
      for (const pid of backends) signal(pid);
      await Promise.all([killed(postmaster), ...backends.map(gone)]);
    },
    async accepts() {
      const probe = postgres(server.url, { max: 1, connect_timeout: 0.5, onnotice: () => {} });
      try {
        await probe`SELECT 1`;
        return true;
      } catch {
        return false;
      } finally {
        await probe.end({ timeout: 0 });
      }
    },
    async remove() {
      await server.kill();
      rmSync(directory, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

async function killed(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** The processes whose parent is `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        // Fields after the command, which may hold spaces: state, then the parent's pid.
        return Number(readFileSync(`/proc/${name}/stat`, 'utf8').split(') ').at(-1)!.split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Resolves once the process has exited (a zombie holds no resources; init reaps it). */
async function gone(pid: number): Promise<void> {
  for (;;) {
    let state: string | undefined;
    try {
      state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').at(-1)!.split(' ')[0];
    } catch {
      return;
    }
    if (state === 'Z' || state === 'X') return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function findPostgresBin(): string {
  const candidates = [
    ...(process.env.PATH ?? '').split(':'),
    ...(existsSync('/usr/lib/postgresql')
      ? readdirSync('/usr/lib/postgresql')
          .sort()
          .reverse()
          .map((version) => `/usr/lib/postgresql/${version}/bin`)
      : []),
  ];
  const found = candidates.find((dir) => dir !== '' && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres')));
  if (found === undefined) throw new Error('PostgreSQL server binaries (initdb, postgres) not found.');
  return found;
}

function findOnPath(command: string): string {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/bin']) {
    if (dir !== '' && existsSync(join(dir, command))) return join(dir, command);
  }
  throw new Error(`${command} not found.`);
}

/** The user the shared PostgreSQL runs as (scripts/test-services.ts made sure there is one). */
function unprivilegedUser(): { uid: number; gid: number } {
  for (const name of ['postgres', 'mailwarden']) {
    try {
      return { uid: Number(execFileSync('id', ['-u', name]).toString()), gid: Number(execFileSync('id', ['-g', name]).toString()) };
    } catch {
      // try the next one
    }
  }
  throw new Error('No unprivileged user (postgres or mailwarden) to run PostgreSQL as.');
}

async function waitForPort(port: number): Promise<void> {
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
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
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
