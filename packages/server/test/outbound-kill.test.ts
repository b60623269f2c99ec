// The kill test of outbound webhooks (issue 26, "Proven"): two `mailwarden serve` processes share a
// Redis or PostgreSQL store and one endpoint, a receiver in this process; thousands of changes are made
// while the receiver refuses connections, then answers 503, then answers slowly (some past the timeout),
// then well; one instance is SIGKILLed twice and restarted. Every change arrives at least once, the
// distinct webhook-ids are exactly the feed's changes, each body verifies with `standardwebhooks` under
// every configured secret, and webhook intake stays in its usual range while deliveries are slow.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postWebhook, webhooksFor, webhookUrl } from '@mailwarden/core/testing';
import { Webhook } from 'standardwebhooks';
import { describe, expect, inject, test } from 'vitest';
import { cleanEnv, cliCommand } from './demo-process.js';

const SECRETS = ['whsec_b3V0Ym91bmQta2lsbC10ZXN0LW9sZA==', 'whsec_b3V0Ym91bmQta2lsbC10ZXN0LW5ldw=='];
const mailgun = { signingKey: 'outbound-kill-signing-key' };
const API_KEY = 'acme-key';
const ADDRESSES = 2000;
const WARM_UP = 10;
const LATENCY_SAMPLES = 40;

type Mode = 'healthy' | 'refusing' | 'failing' | 'slow';

/** The endpoint: records each verified delivery by its webhook-id; `mode` says how it answers. */
interface Receiver {
  url: string;
  mode: Mode;
  /** Deliveries received per webhook-id (a change delivered again after a kill counts twice). */
  readonly received: Map<string, number>;
  /** What did not verify or did not match its headers; empty when all is well. */
  readonly problems: string[];
  /** Requests answered 503 while failing, and answered slowly while slow (every third past the sender's timeout). */
  readonly answered: { failing: number; slow: number };
  setMode(mode: Mode): Promise<void>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const port = await freePort();
  const verifiers = SECRETS.map((secret) => new Webhook(secret));
  let server: Server | undefined;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/mailwarden-changes`,
    mode: 'healthy',
    received: new Map(),
    problems: [],
    answered: { failing: 0, slow: 0 },
    async setMode(mode) {
      // Refusing connections is a closed port; every other mode answers on it.
      if (mode === 'refusing' && server !== undefined) await closeServer(server);
      if (mode !== 'refusing' && (server === undefined || !server.listening)) server = await listen(port, handle);
      receiver.mode = mode;
    },
    async close() {
      if (server?.listening) await closeServer(server);
    },
  };
  const handle = async (request: import('node:http').IncomingMessage, response: import('node:http').ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    if (receiver.mode === 'failing') {
      receiver.answered.failing++;
      return void response.writeHead(503).end();
    }
    // Slow: 300 ms, and every third answer 1.5 s, past the sender's 1 s timeout (the first one among them).
    if (receiver.mode === 'slow') {
      const late = receiver.answered.slow++ % 3 === 0;
      await new Promise((resolve) => setTimeout(resolve, late ? 1500 : 300));
    }
    const headers = request.headers as Record<string, string>;
    const id = headers['webhook-id'] ?? '';
    try {
      for (const verifier of verifiers) verifier.verify(body, headers);
      const payload = JSON.parse(body) as { type: string; data: { id: string; kind: string } };
      if (payload.data.id !== id || payload.type !== payload.data.kind) receiver.problems.push(`${id}: body says ${payload.data.id}`);
      receiver.received.set(id, (receiver.received.get(id) ?? 0) + 1);
    } catch (error) {
      receiver.problems.push(`${id}: ${(error as Error).message}`);
    }
    response.writeHead(200).end('ok');
  };
  await receiver.setMode('healthy');
  return receiver;
}

/** A `mailwarden serve` process on a fixed port, restartable there after a SIGKILL. */
interface Instance {
  url: string;
  output(): string;
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function instance(configFile: string, env: NodeJS.ProcessEnv): Promise<Instance> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';
  const exited = (process: ChildProcess) =>
    process.exitCode !== null || process.signalCode !== null ? Promise.resolve() : new Promise((resolve) => process.once('exit', resolve));
  const self: Instance = {
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    async start() {
      child = spawn(cliCommand[0], [...cliCommand.slice(1), 'serve', '--config', configFile], {
        env: { ...cleanEnv, ...env, PORT: String(port), MAILWARDEN_LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', (chunk) => (output += String(chunk)));
      child.stderr!.on('data', (chunk) => (output += String(chunk)));
      const deadline = Date.now() + 30_000;
      for (;;) {
        const ready = await fetch(`${self.url}/ready`).then(
          (response) => response.ok,
          () => false,
        );
        if (ready) return;
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the instance did not get ready:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async kill() {
      if (child === undefined) return;
      const process = child;
      process.kill('SIGKILL');
      await exited(process);
    },
    async stop() {
      if (child === undefined) return;
      const process = child;
      process.kill('SIGTERM');
      await exited(process);
    },
  };
  await self.start();
  return self;
}

/** The webhook intake's latency, in milliseconds, of `count` Mailgun deliveries posted one after another. */
async function intakeLatencies(url: string, first: number, count: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = first; i < first + count; i++) {
    const [request] = webhooksFor('mailgun', mailgun, [{ type: 'delivered', recipient: `reader${i}@example.com`, messageId: `kill-${i}` }]);
    const started = performance.now();
    const response = await postWebhook(webhookUrl(url, 'acme', 'mailgun'), request!);
    latencies.push(performance.now() - started);
    expect(response.status, await response.text()).toBe(200);
  }
  return latencies;
}

/** Polls until `condition` holds: the receiver's counts have no event to await. */
async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function p95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(sorted.length * 0.95) - 1]!;
}

/** Every change id of the project's feed, read through `GET /changes` from the start. */
/**
 * The feed's change IDs: those the test's writes made, and the `key.*` changes of the services' key sync
 * at start, which may come before the endpoint starts (then it never gets them) or after.
 */
async function feedIds(url: string): Promise<{ ids: string[]; keyIds: string[] }> {
  const ids: string[] = [];
  const keyIds: string[] = [];
  let after = 0;
  for (;;) {
    const response = await fetch(`${url}/projects/acme/changes?after=${after}&limit=1000`, { headers: { 'x-api-key': API_KEY } });
    expect(response.status).toBe(200);
    const page = (await response.json()) as { items: { id: string; kind: string }[]; next_after: number; latest: number };
    for (const { id, kind } of page.items) (kind.startsWith('key.') ? keyIds : ids).push(id);
    if (page.next_after >= page.latest) return { ids, keyIds };
    after = page.next_after;
  }
}

describe('outbound webhooks survive killed instances and a failing endpoint', () => {
  test.each(['redis', 'postgres'] as const)('%s: every change arrives at least once, signed', { timeout: 150_000 }, async (kind) => {
    const env =
      kind === 'redis'
        ? { REDIS_URL: inject('redisUrl'), MAILWARDEN_REDIS_KEY_PREFIX: `kill-${randomUUID()}:` }
        : { DATABASE_URL: inject('databaseUrl'), MAILWARDEN_PG_SCHEMA: `kill_${randomUUID().replaceAll('-', '')}` };
    const receiver = await startReceiver();
    const configFile = join(mkdtempSync(join(tmpdir(), 'mailwarden-kill-')), 'config.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        dashboard: false,
        projects: {
          acme: { apiKeys: [API_KEY], webhooks: { mailgun }, outboundWebhooks: [{ id: 'app', url: receiver.url, secrets: SECRETS }] },
        },
        // Shortened for the test: polls every 50 ms, a killed holder's lease lapses within 2.5 s (it must
        // outlast a request's 1 s timeout), and the retries (30, about 27 s of failing in a row) outlast the outage.
        outbound: { pollMs: 50, leaseMs: 2500, timeoutMs: 1000, schedule: [100, 200, 400, ...Array(27).fill(1000)] },
      }),
    );
    const instances: Instance[] = [];
    try {
      const [a, b] = await Promise.all([instance(configFile, env), instance(configFile, env)]);
      instances.push(a!, b!);

      // The usual intake latency: the receiver healthy, each change delivered as it comes (after a few
      // requests that warm the instance up, so a cold start does not inflate it).
      await intakeLatencies(b!.url, 0, WARM_UP);
      const baseline = await intakeLatencies(b!.url, WARM_UP, LATENCY_SAMPLES);

      // The endpoint goes away while thousands of changes are made, half through each instance.
      await receiver.setMode('refusing');
      const emails = Array.from({ length: ADDRESSES }, (_, i) => `bulk${i}@example.com`);
      for (let from = 0; from < ADDRESSES; from += 500) {
        const response = await fetch(`${(from % 1000 === 0 ? a! : b!).url}/projects/acme/suppressions/bulk`, {
          method: 'POST',
          headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
          body: JSON.stringify({ items: emails.slice(from, from + 500).map((email) => ({ email })) }),
        });
        expect(response.status).toBe(200);
      }
      await a!.kill();
      await receiver.setMode('failing');
      await a!.start();
      await until(() => receiver.answered.failing >= 3, 'three deliveries answered 503');

      // Then it answers slowly: a is killed again, maybe mid-delivery, and restarted; intake is measured meanwhile.
      await receiver.setMode('slow');
      await a!.kill();
      await a!.start();
      await until(() => receiver.answered.slow >= 3, 'three slow answers, one past the timeout');
      const whileSlow = await intakeLatencies(b!.url, WARM_UP + LATENCY_SAMPLES, LATENCY_SAMPLES);

      await receiver.setMode('healthy');
      const expected = ADDRESSES + WARM_UP + 2 * LATENCY_SAMPLES;
      // Not all may come (the assertions below say which are missing), so a timeout here is no failure of its own.
      await until(() => receiver.received.size >= expected, 'every change delivered', 60_000).catch(() => {});

      const { ids, keyIds } = await feedIds(a!.url);
      expect(ids).toHaveLength(expected);
      expect(receiver.problems).toStrictEqual([]);
      const delivered = [...receiver.received.keys()].filter((id) => !keyIds.includes(id));
      expect(new Set(delivered), `${a!.output()}\n${b!.output()}`).toStrictEqual(new Set(ids));
      const endpoints = (await (
        await fetch(`${b!.url}/projects/acme/outbound-webhooks`, { headers: { 'x-api-key': API_KEY } })
      ).json()) as {
        items: unknown[];
      };
      expect(endpoints.items).toMatchObject([
        { id: 'app', state: 'delivering', cursor: expected + keyIds.length, lag: 0, paused_at: null },
      ]);
      // Deliveries run on timers beside intake, never on its path: a slow endpoint leaves webhook intake
      // in its usual range. Generous for a shared CI machine: at most 3× the same run's p95 plus 50 ms.
      expect(p95(whileSlow)).toBeLessThanOrEqual(3 * p95(baseline) + 50);
    } finally {
      await Promise.all(instances.map((process) => process.stop()));
      await receiver.close();
    }
  });
});

function listen(port: number, handler: Parameters<typeof createServer>[1]): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer(handler);
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
