// HTTP benchmarks: the Fastify plugin and the Express router against bare routes of the same framework,
// loaded by autocannon over 127.0.0.1. Every server runs in a child process of its own (this file,
// forked with its role in MAILWARDEN_BENCH_HTTP_SERVER), so the load generator, in the bench process,
// and the server under test each have an event loop, and on a two-CPU machine a CPU, of their own.
//
//   MAILWARDEN_BENCH_HTTP_PROFILE=/tmp/prof npm run bench -- http
//       also writes a V8 CPU profile of every server child into /tmp/prof (--cpu-prof)
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createMailwarden } from '@mailwarden/core';
import autocannon from 'autocannon';
import express, { type Express, type Response } from 'express';
import { fastify, type FastifyInstance } from 'fastify';
import { address, mix, rawHash, rawNormalize } from './core.bench.js';
import { goalCell, recordGoal } from './goals.js';
import { median } from './measure.js';
import { formatCount, formatPercent, formatRatio, type BenchSuite, type ReportSection, type SuiteContext } from './report.js';

const PROJECT = 'bench';
const API_KEY = 'bench-key';
const PREFIX = '/mw';
const SUPPRESSIONS = 100_000;
/** The first suppression's time; each later one is 1 ms newer, as in bench/core.bench.ts. */
const START = Date.UTC(2025, 0, 1);
const BATCH_CHECK_SIZE = 100;
const BATCH_CHECK_HITS = 10;
const WEBHOOK_BATCH = 1000;
const WEBHOOK_USER = 'sparkpost';
const WEBHOOK_PASSWORD = 'bench-webhook-secret';
const WEBHOOK_AUTHORIZATION = `Basic ${Buffer.from(`${WEBHOOK_USER}:${WEBHOOK_PASSWORD}`).toString('base64')}`;
/** Single checks: issue 12's goals. */
const GOALS = { fastify: 0.6, express: 0.7 } as const;
/** Batch checks, either framework: issue 14's goal. */
const BATCH_GOAL = 0.7;
const CONNECTIONS = 50;
/** Providers post webhooks with few connections; 1 000-event bodies of 50 connections would only queue. */
const WEBHOOK_CONNECTIONS = 10;
/** Distinct requests each connection cycles through: addresses (single checks), bodies (batch checks). */
const PATHS_PER_CONNECTION = 128;
const BODIES_PER_CONNECTION = 16;
const MiB = 1024 * 1024;
const ROLE_ENV = 'MAILWARDEN_BENCH_HTTP_SERVER';
const PROFILE_ENV = 'MAILWARDEN_BENCH_HTTP_PROFILE';

type Framework = 'fastify' | 'express';
type Kind = 'ours' | 'bare';
interface ServerRole {
  framework: Framework;
  kind: Kind;
}
type ToServer = { type: 'cpu' } | { type: 'close' };
interface CpuReading {
  type: 'cpu';
  /** User + system CPU time of the server process so far, in µs. */
  micros: number;
  heapUsed: number;
}
type FromServer = { type: 'ready'; port: number; setupMs: number } | CpuReading;

// --- inputs ---------------------------------------------------------------------------------------

/** A stored address (hit) or one never stored (miss), picked at random by `seed`. */
function pick(hit: boolean, seed: number): string {
  const i = mix(seed) % SUPPRESSIONS;
  return address(hit ? i : SUPPRESSIONS + i);
}

const checkPath = (email: string) => `${PREFIX}/projects/${PROJECT}/suppressions/check?email=${encodeURIComponent(email)}`;
const batchPath = `${PREFIX}/projects/${PROJECT}/suppressions/check`;
const webhookPath = `${PREFIX}/projects/${PROJECT}/webhooks/sparkpost`;

function batchBody(seed: number): string {
  const emails = Array.from({ length: BATCH_CHECK_SIZE }, (_, k) => pick(k < BATCH_CHECK_HITS, seed * 1000 + k));
  for (let i = emails.length - 1; i > 0; i--) {
    const j = mix(seed * 7919 + i) % (i + 1);
    [emails[i], emails[j]] = [emails[j]!, emails[i]!];
  }
  return JSON.stringify({ emails });
}

const BATCH_MARK = '{{batch}}';
/**
 * Batch numbers have six digits, so a timestamp written `<batch><4-digit offset>` is batch × 10 000 s
 * plus the offset: 1 760 000 000 (October 2025) for the first batch, each later batch 10 000 s newer.
 */
const FIRST_BATCH = 176_000;

/**
 * A SparkPost webhook body of `WEBHOOK_BATCH` events, as the text between the places where the batch
 * number goes: `parts.join(String(n))` is batch n, with its own messages, recipients and event ids, all
 * newer than those of batch n − 1, as a webhook stream arrives. Each message is injected, then delivered
 * (88 %, opened 35 % of the time, rarely clicked) or bounced (8 % hard, 4 % soft), with the fields
 * SparkPost sends, over 10 tracking IDs (`rcpt_meta.service_id`).
 */
function sparkpostBatchParts(): string[] {
  const events: unknown[] = [];
  for (let k = 0; events.length < WEBHOOK_BATCH; k++) {
    const r = mix(k + 0x5bd1e995);
    const recipient = `user${BATCH_MARK}x${k}@example${k % 1000}.com`;
    const common = {
      customer_id: '1',
      campaign_id: `newsletter-2025-${k % 10}`,
      friendly_from: 'news@example.org',
      msg_from: 'msprvs1=17827RA6TC=bounces-1@example.org',
      subject: 'November news',
      transmission_id: `${BATCH_MARK}${String(k).padStart(4, '0')}`,
      message_id: `000443ee1457${BATCH_MARK}x${k}`,
      rcpt_to: recipient,
      raw_rcpt_to: recipient,
      rcpt_meta: { service_id: `newsletter-2025-${k % 10}` },
      rcpt_type: 'to',
      routing_domain: `example${k % 1000}.com`,
      ip_pool: 'default',
      sending_ip: '192.0.2.10',
    };
    const push = (eventClass: string, type: string, seconds: number, extra: Record<string, string> = {}) =>
      events.push({
        msys: {
          [eventClass]: {
            type,
            event_id: `${BATCH_MARK}${String(events.length).padStart(4, '0')}`,
            ...common,
            timestamp: `${BATCH_MARK}${String(k + seconds).padStart(4, '0')}`,
            ...extra,
          },
        },
        cust: { id: '1' },
      });
    push('message_event', 'injection', 0, { msg_size: '18734', recv_method: 'rest' });
    const roll = r % 100;
    if (roll < 8) {
      push('message_event', 'bounce', 2, {
        bounce_class: '10',
        reason: '550 5.1.1 unknown user',
        raw_reason: '550 5.1.1 <recipient>: user unknown',
      });
    } else if (roll < 12) {
      push('message_event', 'bounce', 2, { bounce_class: '22', reason: '452 4.2.2 mailbox full', raw_reason: '452 4.2.2 mailbox full' });
    } else {
      push('message_event', 'delivery', 2, { delv_method: 'esmtp', queue_time: '1200', outbound_tls: '1' });
      if (((r >>> 8) & 0xff) < 90) push('track_event', 'open', 600, { user_agent: 'Mozilla/5.0', geo_ip: 'US' });
      if (((r >>> 16) & 0xff) < 10) push('track_event', 'click', 700, { target_link_url: 'https://example.com/offer' });
    }
  }
  return JSON.stringify(events.slice(0, WEBHOOK_BATCH)).split(BATCH_MARK);
}

// --- the server processes -------------------------------------------------------------------------

interface Listening {
  port: number;
  close(): Promise<void>;
}

const apiKeys = { [API_KEY]: PROJECT };
const responseHeaders = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
const unauthorized = { error: { code: 'invalid_api_key', message: 'The API key is not valid.' } };

/** Ours: the published binding over a memory store holding `SUPPRESSIONS` manual suppressions. */
async function oursServer(framework: Framework): Promise<Listening> {
  let clock = START;
  const mailwarden = createMailwarden({
    now: () => clock++,
    webhooks: { auth: { [PROJECT]: { sparkpost: { basic: [{ username: WEBHOOK_USER, password: WEBHOOK_PASSWORD }] } } } },
  });
  for (let i = 0; i < SUPPRESSIONS; i++) await mailwarden.suppressions.add(PROJECT, address(i));
  if (framework === 'fastify') {
    const { mailwardenPlugin } = await import('@mailwarden/fastify');
    const app = fastify();
    await app.register(mailwardenPlugin, { prefix: PREFIX, mailwarden, apiKeys });
    return listenFastify(app);
  }
  const { createMailwardenRouter } = await import('@mailwarden/express');
  const app = express();
  app.use(PREFIX, createMailwardenRouter({ mailwarden, apiKeys }));
  return listenExpress(app);
}

/**
 * The bare routes: the same paths, the API key compared with one string, the answer taken from a `Map`
 * of the same addresses (so the JSON is byte for byte ours), and the same extra headers. A check does
 * the work every check must, and only that: the in-process floor's (bench/core.bench.ts) normalization
 * steps without validation and its SHA-256, then a `Map` lookup by the hash. The webhook route only
 * parses the JSON body and counts its items.
 */
async function bareServer(framework: Framework): Promise<Listening> {
  const table = new Map<string, number>();
  for (let i = 0; i < SUPPRESSIONS; i++) table.set(rawHash(rawNormalize(address(i))), START + i);
  const allowed = (key: unknown, projectId: string | undefined) => key === API_KEY && projectId === PROJECT;
  const check = (email: string) => {
    const createdAt = table.get(rawHash(rawNormalize(email)));
    return createdAt === undefined
      ? { email, suppressed: false }
      : { email, suppressed: true, reason: 'manual', created_at: new Date(createdAt).toISOString(), source: 'api', cause: null };
  };
  const checkMany = (emails: string[]) => ({
    results: emails.map((email) =>
      table.has(rawHash(rawNormalize(email))) ? { email, suppressed: true, reason: 'manual' } : { email, suppressed: false },
    ),
  });
  const ingested = (body: unknown) => ({ accepted: Array.isArray(body) ? body.length : 0, duplicates: 0, skipped: 0, warnings: [] });

  if (framework === 'fastify') {
    const app = fastify({ bodyLimit: 10 * MiB });
    type CheckRoute = { Params: { projectId: string }; Querystring: { email?: string }; Body: { emails: string[] } };
    app.get<CheckRoute>(`${PREFIX}/projects/:projectId/suppressions/check`, async (request, reply) => {
      if (!allowed(request.headers['x-api-key'], request.params.projectId)) return reply.code(401).send(unauthorized);
      reply.headers(responseHeaders);
      return check(request.query.email ?? '');
    });
    app.post<CheckRoute>(`${PREFIX}/projects/:projectId/suppressions/check`, async (request, reply) => {
      if (!allowed(request.headers['x-api-key'], request.params.projectId)) return reply.code(401).send(unauthorized);
      reply.headers(responseHeaders);
      return checkMany(request.body.emails);
    });
    app.post<{ Params: { projectId: string } }>(`${PREFIX}/projects/:projectId/webhooks/sparkpost`, async (request, reply) => {
      if (request.headers.authorization !== WEBHOOK_AUTHORIZATION) return reply.code(401).send(unauthorized);
      reply.headers(responseHeaders);
      return ingested(request.body);
    });
    return listenFastify(app);
  }

  const app = express();
  const send = (response: Response, value: unknown) => {
    response.status(200);
    for (const [name, header] of Object.entries(responseHeaders)) response.setHeader(name, header);
    response.setHeader('content-type', 'application/json; charset=utf-8');
    response.end(JSON.stringify(value));
  };
  app.get(`${PREFIX}/projects/:projectId/suppressions/check`, (request, response) => {
    if (!allowed(request.headers['x-api-key'], request.params.projectId)) return void response.status(401).json(unauthorized);
    const email = request.query['email'];
    send(response, check(typeof email === 'string' ? email : ''));
  });
  app.post(`${PREFIX}/projects/:projectId/suppressions/check`, express.json({ limit: MiB }), (request, response) => {
    if (!allowed(request.headers['x-api-key'], request.params.projectId)) return void response.status(401).json(unauthorized);
    send(response, checkMany((request.body as { emails: string[] }).emails));
  });
  app.post(`${PREFIX}/projects/:projectId/webhooks/sparkpost`, express.json({ limit: 10 * MiB }), (request, response) => {
    if (request.headers.authorization !== WEBHOOK_AUTHORIZATION) return void response.status(401).json(unauthorized);
    send(response, ingested(request.body));
  });
  return listenExpress(app);
}

async function listenFastify(app: FastifyInstance): Promise<Listening> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
}

async function listenExpress(app: Express): Promise<Listening> {
  const server: Server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The child side: starts the server of `role`, then answers CPU readings until told to close. */
async function serve(role: ServerRole): Promise<void> {
  const started = performance.now();
  const server = role.kind === 'ours' ? await oursServer(role.framework) : await bareServer(role.framework);
  const send = (message: FromServer) => process.send!(message);
  // The bench process gone (even killed), nothing is left to serve.
  process.on('disconnect', () => process.exit(0));
  process.on('message', (message: ToServer) => {
    if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      send({ type: 'cpu', micros: user + system, heapUsed: process.memoryUsage().heapUsed });
    } else if (message.type === 'close') {
      // A normal exit, so that --cpu-prof writes its profile.
      void server.close().finally(() => process.exit(0));
    }
  });
  send({ type: 'ready', port: server.port, setupMs: performance.now() - started });
}

const serverRole = process.env[ROLE_ENV];
if (serverRole !== undefined && process.send !== undefined) await serve(JSON.parse(serverRole) as ServerRole);

// --- the bench side: server handles ---------------------------------------------------------------

interface ServerHandle {
  name: string;
  port: number;
  setupMs: number;
  cpu(): Promise<CpuReading>;
  close(): Promise<void>;
}

/** Forks this file as the server of `role`; `children` keeps it so the suite can always stop it. */
async function startServer(role: ServerRole, children: Set<ChildProcess>): Promise<ServerHandle> {
  const name = `${role.framework} ${role.kind}`;
  const profileDir = process.env[PROFILE_ENV];
  // One directory per role; node names each profile after the process and thread (the tsx loader has one).
  const profile = profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}/${role.framework}-${role.kind}`];
  const child = fork(fileURLToPath(import.meta.url), [], {
    // The bench process's flags: the tsx loader and the `source` condition.
    execArgv: [...process.execArgv, ...profile],
    env: { ...process.env, [ROLE_ENV]: JSON.stringify(role) },
    // Nothing on the bench's stdout, which may carry the document.
    stdio: ['ignore', 2, 2, 'ipc'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const replies: ((reading: CpuReading) => void)[] = [];
  const ready = await new Promise<{ port: number; setupMs: number }>((resolve, reject) => {
    const early = (code: number | null, signal: string | null) =>
      reject(new Error(`bench: the ${name} server exited (${code ?? signal}) before listening`));
    child.once('exit', early);
    child.on('message', (message: FromServer) => {
      if (message.type === 'ready') {
        child.off('exit', early);
        resolve(message);
      } else replies.shift()?.(message);
    });
  });
  return {
    name,
    port: ready.port,
    setupMs: ready.setupMs,
    cpu: () =>
      new Promise((resolve, reject) => {
        if (!child.connected) return reject(new Error(`bench: the ${name} server is gone`));
        replies.push(resolve);
        child.send({ type: 'cpu' } satisfies ToServer, (error) => error && reject(error));
      }),
    close: () => stopChild(child),
  };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  if (child.connected) child.send({ type: 'close' } satisfies ToServer, () => {});
  else child.kill();
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

// --- the bench side: load -------------------------------------------------------------------------

interface LoadCase {
  name: string;
  server: ServerHandle;
  connections: number;
  /**
   * The requests connection `index` cycles through. Requests with an `onResponse` should hand it the
   * body, `onBody` checks it with `expect`.
   */
  requests(index: number, onBody: (body: string) => void): autocannon.Request[];
  /** Work items per request (addresses, events). */
  itemsPerRequest: number;
  /** Checks a response body: a problem, or `undefined` when it is as expected. */
  expect?: (body: string) => string | undefined;
}

interface LoadSample {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** Server CPU time per request, µs. */
  serverMicrosPerRequest: number;
  /** Server CPU time over wall time. */
  serverBusy: number;
  /** Load generator (this process) CPU time over wall time. */
  clientBusy: number;
  requests: number;
  errors: number;
  non2xx: number;
}

type Length = { seconds: number } | { amount: number };

/** One autocannon run; throws on any error, timeout, non-2xx status or unexpected body. */
async function runLoad(load: LoadCase, length: Length): Promise<LoadSample> {
  const latencies: number[] = [];
  let started = 0;
  let last = 0;
  let requestErrors = 0;
  let firstError: unknown;
  let problems = 0;
  let firstProblem: string | undefined;
  let next = 0;
  const onBody = (body: string) => {
    const problem = load.expect?.(body);
    if (problem !== undefined) {
      problems++;
      firstProblem ??= problem;
    }
  };
  const serverBefore = await load.server.cpu();
  const clientBefore = process.cpuUsage();
  const wallBefore = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${load.server.port}`,
        connections: load.connections,
        pipelining: 1,
        ...('amount' in length ? { amount: length.amount } : { duration: length.seconds }),
        // How often autocannon looks whether the run is over; its per-second histogram is not used.
        sampleInt: 100,
        timeout: 30,
        // Replaced in every client by its own requests before it sends anything.
        requests: [{ method: 'GET', path: '/' }],
        setupClient: (client) => client.setRequests(load.requests(next++, onBody)),
      },
      (error, done) => (error ? reject(error) : resolve(done)),
    );
    instance.on('start', () => (started = performance.now()));
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      last = performance.now();
      latencies.push(responseTime);
    });
    instance.on('reqError', (error) => {
      requestErrors++;
      firstError ??= error;
    });
  });
  const wall = performance.now() - wallBefore;
  const client = process.cpuUsage(clientBefore);
  const serverAfter = await load.server.cpu();
  const failures = result.errors + result.timeouts + result.non2xx + result.mismatches + requestErrors + problems;
  if (failures > 0) {
    throw new Error(
      `bench: ${load.name}: ${result.errors} errors (${result.timeouts} timeouts), ${result.non2xx} non-2xx ` +
        `(${JSON.stringify(result.statusCodeStats)}), ${problems} unexpected bodies${firstProblem === undefined ? '' : ` (${firstProblem})`}` +
        (firstError === undefined ? '' : `; first error: ${String(firstError)}`),
    );
  }
  latencies.sort((a, b) => a - b);
  const requests = latencies.length;
  const at = (q: number) => latencies[Math.min(requests - 1, Math.floor(q * requests))]!;
  const serverMicros = serverAfter.micros - serverBefore.micros;
  return {
    requestsPerSecond: (requests * 1000) / (last - started),
    p50: at(0.5),
    p99: at(0.99),
    serverMicrosPerRequest: serverMicros / requests,
    serverBusy: serverMicros / (wall * 1000),
    clientBusy: (client.user + client.system) / (wall * 1000),
    requests,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

interface LoadSummary {
  load: LoadCase;
  samples: LoadSample[];
  requestsPerSecond: number;
  itemsPerSecond: number;
  p99: number;
  serverMicrosPerRequest: number;
  serverBusy: number;
  clientBusy: number;
  /** (fastest − slowest sample) / median. */
  spread: number;
  requests: number;
  errors: number;
  non2xx: number;
}

interface LoadPlan {
  warmup: Length;
  sample: Length;
  rounds: number;
}

/** Warms every case up, then samples them round-robin (A B A B …), as `measureGroup` does. */
async function measureLoad(cases: readonly LoadCase[], plan: LoadPlan, log: (message: string) => void): Promise<LoadSummary[]> {
  for (const load of cases) {
    log(`warming up ${load.name}…`);
    await runLoad(load, plan.warmup);
  }
  const taken: LoadSample[][] = cases.map(() => []);
  for (let round = 0; round < plan.rounds; round++) {
    const line: string[] = [];
    for (let i = 0; i < cases.length; i++) {
      const sample = await runLoad(cases[i]!, plan.sample);
      taken[i]!.push(sample);
      line.push(`${formatCount(sample.requestsPerSecond)} req/s`);
    }
    log(`round ${round + 1}/${plan.rounds}: ${line.join(', ')}`);
  }
  return cases.map((load, i) => {
    const samples = taken[i]!;
    const rates = samples.map((sample) => sample.requestsPerSecond);
    const requestsPerSecond = median(rates);
    return {
      load,
      samples,
      requestsPerSecond,
      itemsPerSecond: requestsPerSecond * load.itemsPerRequest,
      p99: median(samples.map((sample) => sample.p99)),
      serverMicrosPerRequest: median(samples.map((sample) => sample.serverMicrosPerRequest)),
      serverBusy: median(samples.map((sample) => sample.serverBusy)),
      clientBusy: median(samples.map((sample) => sample.clientBusy)),
      spread: (Math.max(...rates) - Math.min(...rates)) / requestsPerSecond,
      requests: samples.reduce((sum, sample) => sum + sample.requests, 0),
      errors: samples.reduce((sum, sample) => sum + sample.errors, 0),
      non2xx: samples.reduce((sum, sample) => sum + sample.non2xx, 0),
    };
  });
}

/** Median of the per-round ratios of requests/s. */
function loadRatio(ours: LoadSummary, reference: LoadSummary): number {
  return median(ours.samples.map((sample, i) => sample.requestsPerSecond / reference.samples[i]!.requestsPerSecond));
}

/** The requests of connection `index`: a slice of its own, so lookups spread over many addresses. */
function checkRequests(hit: boolean, salt: number): (index: number) => autocannon.Request[] {
  const cache = new Map<number, autocannon.Request[]>();
  return (index) => {
    let requests = cache.get(index);
    if (requests === undefined) {
      requests = Array.from({ length: PATHS_PER_CONNECTION }, (_, k) => ({
        method: 'GET' as const,
        path: checkPath(pick(hit, salt + index * PATHS_PER_CONNECTION + k)),
        headers: { 'x-api-key': API_KEY },
      }));
      cache.set(index, requests);
    }
    return requests;
  };
}

function batchRequests(salt: number): (index: number) => autocannon.Request[] {
  const cache = new Map<number, autocannon.Request[]>();
  return (index) => {
    let requests = cache.get(index);
    if (requests === undefined) {
      requests = Array.from({ length: BODIES_PER_CONNECTION }, (_, k) => ({
        method: 'POST' as const,
        path: batchPath,
        headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
        body: batchBody(salt + index * BODIES_PER_CONNECTION + k),
      }));
      cache.set(index, requests);
    }
    return requests;
  };
}

// --- checks before measuring -------------------------------------------------------------------------

/** Throws unless ours and the bare route answer the same requests with the same status, type and JSON. */
async function sameAnswers(ours: ServerHandle, bare: ServerHandle, requests: { path: string; body?: string; suppressed?: boolean }[]) {
  for (const request of requests) {
    const answers = await Promise.all(
      [ours, bare].map(async (server) => {
        const response = await fetch(`http://127.0.0.1:${server.port}${request.path}`, {
          method: request.body === undefined ? 'GET' : 'POST',
          headers: { 'x-api-key': API_KEY, ...(request.body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(request.body === undefined ? {} : { body: request.body }),
        });
        return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
      }),
    );
    const [a, b] = answers as [(typeof answers)[0], (typeof answers)[0]];
    if (a.status !== 200 || b.status !== 200 || a.type !== b.type || a.text !== b.text) {
      throw new Error(
        `bench: ${ours.name} and ${bare.name} answer ${request.path} differently:\n${JSON.stringify(a)}\n${JSON.stringify(b)}`,
      );
    }
    if (request.suppressed !== undefined && (JSON.parse(a.text) as { suppressed: boolean }).suppressed !== request.suppressed) {
      throw new Error(`bench: ${request.path} should answer suppressed: ${request.suppressed}; got ${a.text}`);
    }
  }
}

// --- suite ------------------------------------------------------------------------------------------

interface Pair {
  what: string;
  ours: LoadSummary;
  bare: LoadSummary;
  goal: number | undefined;
}

export const httpSuite: BenchSuite = {
  name: 'http',
  async run(context) {
    const plan: LoadPlan = context.quick
      ? { warmup: { seconds: 1 }, sample: { seconds: 1 }, rounds: 2 }
      : { warmup: { seconds: 2 }, sample: { seconds: 2 }, rounds: 7 };
    const webhookPlan: LoadPlan = context.quick
      ? { warmup: { amount: WEBHOOK_CONNECTIONS }, sample: { amount: 2 * WEBHOOK_CONNECTIONS }, rounds: 2 }
      : { warmup: { amount: 10 * WEBHOOK_CONNECTIONS }, sample: { amount: 20 * WEBHOOK_CONNECTIONS }, rounds: 5 };
    const children = new Set<ChildProcess>();
    try {
      const fastify = await frameworkChecks('fastify', context, plan, children);
      const webhooks = await webhookSection(fastify.servers, context, webhookPlan);
      await Promise.all(fastify.servers.map((server) => server.close()));
      const express = await frameworkChecks('express', context, plan, children);
      await Promise.all(express.servers.map((server) => server.close()));
      return [checkSection([...fastify.pairs, ...express.pairs], plan, [...fastify.servers, ...express.servers]), webhooks];
    } finally {
      await Promise.allSettled([...children].map(stopChild));
    }
  },
};

async function frameworkChecks(
  framework: Framework,
  context: SuiteContext,
  plan: LoadPlan,
  children: Set<ChildProcess>,
): Promise<{ pairs: Pair[]; servers: [ServerHandle, ServerHandle] }> {
  context.log(`${framework}: starting the servers (ours fills its memory store with ${formatCount(SUPPRESSIONS)} suppressions)…`);
  const [ours, bare] = await Promise.all([
    startServer({ framework, kind: 'ours' }, children),
    startServer({ framework, kind: 'bare' }, children),
  ]);
  await sameAnswers(ours, bare, [
    ...Array.from({ length: 20 }, (_, k) => ({ path: checkPath(pick(true, k)), suppressed: true })),
    ...Array.from({ length: 20 }, (_, k) => ({ path: checkPath(pick(false, k)), suppressed: false })),
    ...Array.from({ length: 5 }, (_, k) => ({ path: batchPath, body: batchBody(k) })),
  ]);
  const server = { ours, bare } as const;
  const cases = (['hit', 'miss', 'batch'] as const).flatMap((what, w) =>
    (['ours', 'bare'] as const).map(
      (kind): LoadCase => ({
        name: `${framework} ${kind}, ${what}`,
        server: server[kind],
        connections: CONNECTIONS,
        requests: what === 'batch' ? batchRequests(1_000_000 * (w + 1)) : checkRequests(what === 'hit', 1_000_000 * (w + 1)),
        itemsPerRequest: what === 'batch' ? BATCH_CHECK_SIZE : 1,
      }),
    ),
  );
  const [oursHit, bareHit, oursMiss, bareMiss, oursBatch, bareBatch] = await measureLoad(cases, plan, (message) =>
    context.log(`${framework}: ${message}`),
  );
  const name = framework === 'fastify' ? 'Fastify' : 'Express';
  const goal = GOALS[framework];
  return {
    servers: [ours, bare],
    pairs: [
      { what: `${name}: \`GET …/suppressions/check\`, suppressed (hit)`, ours: oursHit!, bare: bareHit!, goal },
      { what: `${name}: \`GET …/suppressions/check\`, not suppressed (miss)`, ours: oursMiss!, bare: bareMiss!, goal },
      {
        what: `${name}: \`POST …/suppressions/check\`, ${BATCH_CHECK_SIZE} addresses (${BATCH_CHECK_HITS} hits)`,
        ours: oursBatch!,
        bare: bareBatch!,
        goal: BATCH_GOAL,
      },
    ],
  };
}

const ms = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;
const micros = (value: number) => `${value < 100 ? value.toFixed(1) : formatCount(value)} µs`;
const percent = (value: number) => `${(value * 100).toFixed(0)} %`;
const range = (values: number[]) => {
  const low = Math.min(...values);
  const high = Math.max(...values);
  return low.toFixed(2) === high.toFixed(2) ? percent(low) : `${percent(low)}–${percent(high)}`;
};

function lengthText(length: Length): string {
  return 'amount' in length ? `${formatCount(length.amount)} requests` : `${length.seconds} s`;
}

function checkSection(pairs: Pair[], plan: LoadPlan, servers: ServerHandle[]): ReportSection {
  const summaries = pairs.flatMap((pair) => [pair.ours, pair.bare]);
  const oursSetup = servers.filter((server) => server.name.endsWith('ours')).map((server) => server.setupMs / 1000);
  return {
    title: `HTTP: suppression checks through Fastify and Express, ${formatCount(SUPPRESSIONS)} suppressions`,
    intro: [
      `Requests per second through \`mailwardenPlugin\` (@mailwarden/fastify, Fastify ${frameworkVersion('fastify')}, ` +
        `registered at \`${PREFIX}\`) and \`createMailwardenRouter\` (@mailwarden/express, Express ${frameworkVersion('express')}, ` +
        `mounted at \`${PREFIX}\`), each over \`createMailwarden()\` with a memory store holding ${formatCount(SUPPRESSIONS)} ` +
        `manual suppressions (added through the service; ${oursSetup.map((s) => s.toFixed(1)).join(' and ')} s to start and fill), ` +
        `against a bare route of the same framework: the same path, the \`X-API-Key\` compared with one string, ` +
        `each address normalized without validation (trim, NFC, lower-case, IDNA domain) and SHA-256-hashed as the ` +
        `in-process floor does, the answer from a \`Map\` of the same addresses by hash, sent with the same headers, so both answer the same JSON ` +
        `byte for byte (checked before measuring). Bare Fastify returns the object (Fastify's default serializer, and ` +
        `its JSON body parser for the batch); bare Express sets the headers and \`res.end\`s \`JSON.stringify\` of it ` +
        `(\`express.json()\` for the batch), as the router does.`,
      `Load: autocannon ${autocannonVersion()} over 127.0.0.1, ${CONNECTIONS} connections, no pipelining, ` +
        `${lengthText(plan.sample)} per sample after a ${lengthText(plan.warmup)} warm-up, ${plan.rounds} rounds; ` +
        `ours and bare are sampled in turn (hit, miss and batch of ours and bare round-robin), and "ours / bare" is the median ` +
        `of the per-round ratios. Each connection cycles through its own ${PATHS_PER_CONNECTION} addresses ` +
        `(${formatCount(CONNECTIONS * PATHS_PER_CONNECTION)} per case, picked at random among the stored ones for hits and ` +
        `never stored ones for misses) or its own ${BODIES_PER_CONNECTION} batch bodies. Every server runs in a child ` +
        `process of its own (\`child_process.fork\` of bench/http.bench.ts with the bench's tsx loader), one at a time ` +
        `under load; autocannon runs in the bench process, so on a two-CPU machine the server and the load generator ` +
        `each have a CPU, and neither shares the other's event loop. p99 is the 99th percentile of the request latencies ` +
        `autocannon saw (median over the samples). Server CPU per request is the server process's user + system CPU time ` +
        `over the sample (\`process.cpuUsage()\`) divided by the requests answered: it does not depend on how fast the ` +
        `load generator is.`,
    ],
    tables: [
      {
        columns: [
          'case',
          'ours, req/s',
          'bare, req/s',
          'ours / bare',
          'goal',
          'p99 (ours / bare)',
          'server CPU per request (ours / bare)',
          'errors, non-2xx',
          'noise (ours / bare)',
        ],
        rows: pairs.map(({ what, ours, bare, goal }) => {
          const value = loadRatio(ours, bare);
          if (ours.load.itemsPerRequest > 1) {
            const note = `${micros(ours.serverMicrosPerRequest)} CPU per request`;
            recordGoal(what.startsWith('Fastify') ? 'http batch check fastify' : 'http batch check express', value, note);
          }
          return [
            what,
            formatCount(ours.requestsPerSecond),
            formatCount(bare.requestsPerSecond),
            // Three decimals where two would round a miss up to the goal.
            value < (goal ?? 0) && formatRatio(value) === formatRatio(goal!) ? `${value.toFixed(3)}×` : formatRatio(value),
            goal === undefined ? '—' : `≥ ${formatRatio(goal)} ${value >= goal ? 'met' : '**missed**'}`,
            `${ms(ours.p99)} / ${ms(bare.p99)}`,
            `${micros(ours.serverMicrosPerRequest)} / ${micros(bare.serverMicrosPerRequest)}`,
            `${ours.errors + bare.errors}, ${ours.non2xx + bare.non2xx}`,
            `${formatPercent(ours.spread)} / ${formatPercent(bare.spread)}`,
          ];
        }),
      },
    ],
    notes: [
      `Batch checks, in addresses per second: ` +
        pairs
          .filter((pair) => pair.ours.load.itemsPerRequest > 1)
          .map(
            (pair) => `${pair.what.split(':')[0]} ${formatCount(pair.ours.itemsPerSecond)} (bare ${formatCount(pair.bare.itemsPerSecond)})`,
          )
          .join(', ') +
        `. Both bare routes normalize (without validating) and SHA-256-hash every address before looking it up, as ` +
        `every check must and as the in-process, Redis and Postgres floors do; ours also validates each one (see the ` +
        `memory store section for that work alone in process). Every run ends in an error unless each request got a 2xx answer: ` +
        `${formatCount(summaries.reduce((sum, s) => sum + s.requests, 0))} requests were timed, none failed.`,
      `How busy the CPUs were (user + system time over wall time, per sample): the server ${range(summaries.map((s) => s.serverBusy))}, ` +
        `the load generator ${range(summaries.map((s) => s.clientBusy))}. A server near 100 % is the bottleneck, as ` +
        `it should be; where the bare server stays well below it, the load generator limited the bare figure, and the ` +
        `true ours / bare is lower than the table says (the CPU-per-request ratio is then the better guide).`,
    ],
  };
}

async function webhookSection(servers: [ServerHandle, ServerHandle], context: SuiteContext, plan: LoadPlan): Promise<ReportSection> {
  const [ours, bare] = servers;
  const parts = sparkpostBatchParts();
  const body = (batch: number) => parts.join(String(batch));
  const bytes = Buffer.byteLength(body(FIRST_BATCH));
  let batch = FIRST_BATCH;
  const headers = { authorization: WEBHOOK_AUTHORIZATION, 'content-type': 'application/json' };

  // The batch that the duplicate case replays is stored once first, and checked.
  const post = async (server: ServerHandle, text: string) => {
    const response = await fetch(`http://127.0.0.1:${server.port}${webhookPath}`, { method: 'POST', headers, body: text });
    return { status: response.status, json: (await response.json()) as { accepted: number; duplicates: number; skipped: number } };
  };
  const replayed = body(FIRST_BATCH - 1);
  const first = await post(ours, replayed);
  const again = await post(ours, replayed);
  if (first.status !== 200 || first.json.accepted !== WEBHOOK_BATCH || again.json.duplicates !== WEBHOOK_BATCH) {
    throw new Error(`bench: the SparkPost batch was not stored as expected: ${JSON.stringify(first)} then ${JSON.stringify(again)}`);
  }

  const expectCount = (field: 'accepted' | 'duplicates') => (text: string) => {
    const answer = JSON.parse(text) as Record<string, number>;
    return answer[field] === WEBHOOK_BATCH ? undefined : `${field} ${answer[field]} in ${text.slice(0, 200)}`;
  };
  /** One request object per connection; `setupRequest` gives every request a new batch. */
  const fresh = (_index: number, onBody: (text: string) => void): autocannon.Request[] => [
    {
      method: 'POST',
      path: webhookPath,
      headers,
      setupRequest: (request) => {
        request.body = body(batch++);
        return request;
      },
      onResponse: (_status, text) => onBody(text),
    },
  ];
  const cases: LoadCase[] = [
    {
      name: 'fastify ours, new events',
      server: ours,
      connections: WEBHOOK_CONNECTIONS,
      itemsPerRequest: WEBHOOK_BATCH,
      requests: fresh,
      expect: expectCount('accepted'),
    },
    {
      name: 'fastify ours, duplicates',
      server: ours,
      connections: WEBHOOK_CONNECTIONS,
      itemsPerRequest: WEBHOOK_BATCH,
      requests: (_index, onBody) => [
        { method: 'POST', path: webhookPath, headers, body: replayed, onResponse: (_status, text) => onBody(text) },
      ],
      expect: expectCount('duplicates'),
    },
    {
      name: 'fastify bare, parse only',
      server: bare,
      connections: WEBHOOK_CONNECTIONS,
      itemsPerRequest: WEBHOOK_BATCH,
      requests: fresh,
      expect: expectCount('accepted'),
    },
  ];
  const heapBefore = (await ours.cpu()).heapUsed;
  const [newEvents, duplicates, floor] = await measureLoad(cases, plan, (message) => context.log(`webhooks: ${message}`));
  const heapAfter = (await ours.cpu()).heapUsed;

  const intakeRatio = loadRatio(newEvents!, floor!);
  recordGoal('http intake', intakeRatio);
  const row = (what: string, summary: LoadSummary, versus: string, goal: string) => [
    what,
    formatCount(summary.requestsPerSecond),
    formatCount(summary.itemsPerSecond),
    versus,
    goal,
    ms(summary.p99),
    micros(summary.serverMicrosPerRequest),
    `${(summary.serverMicrosPerRequest / WEBHOOK_BATCH).toFixed(2)} µs`,
    `${summary.errors}, ${summary.non2xx}`,
    formatPercent(summary.spread),
  ];
  return {
    title: `HTTP: webhook intake through Fastify, SparkPost batches of ${formatCount(WEBHOOK_BATCH)} events`,
    intro: [
      `\`POST ${webhookPath}\` through \`mailwardenPlugin\` (the server of the checks above, its memory store holding ` +
        `${formatCount(SUPPRESSIONS)} suppressions), SparkPost authenticated with basic auth: the core reads the raw body, ` +
        `checks the credentials, parses and normalizes the ${formatCount(WEBHOOK_BATCH)} events and stores them ` +
        `(\`applyEvents\`: dedup, message merge, counters, suppression of the hard bounces) before answering 200. ` +
        `Each body is a JSON array of ${formatCount(WEBHOOK_BATCH)} events as SparkPost posts them (${(bytes / 1024).toFixed(0)} KiB): ` +
        `injection, then delivery (88 %, then opens and a few clicks) or bounce (8 % hard, 4 % soft), over 10 tracking IDs.`,
      `"New events": every request carries a batch never sent before (its own messages, recipients and event ids, ` +
        `each batch newer than the last, as a webhook stream arrives; autocannon's \`setupRequest\` builds it from a ` +
        `template, outside the server), so the project grows as samples are taken; every answer is checked to say ` +
        `\`accepted: ${formatCount(WEBHOOK_BATCH)}\`. "Duplicates": one batch ` +
        `already stored, replayed, as a provider retry; every answer says \`duplicates: ${formatCount(WEBHOOK_BATCH)}\`. ` +
        `The floor is a bare Fastify route that checks the \`Authorization\` header, parses the body with Fastify's JSON ` +
        `parser and answers its length. ${WEBHOOK_CONNECTIONS} connections (a provider posts with few), ` +
        `${lengthText(plan.sample)} per sample after ${lengthText(plan.warmup)} of warm-up, ${plan.rounds} rounds, the ` +
        `three cases in turn; servers in child processes as above. The ours server's JS heap grew from ` +
        `${(heapBefore / MiB).toFixed(0)} MiB to ${(heapAfter / MiB).toFixed(0)} MiB over the run (not collected first).`,
    ],
    tables: [
      {
        columns: [
          'case',
          'req/s',
          'events/s',
          'vs floor',
          'goal',
          'p99',
          'server CPU per request',
          'per event',
          'errors, non-2xx',
          'noise',
        ],
        rows: [
          row('ours, new events', newEvents!, formatRatio(intakeRatio), goalCell('http intake', intakeRatio)),
          row('ours, duplicates (a stored batch replayed)', duplicates!, formatRatio(loadRatio(duplicates!, floor!)), '—'),
          row('floor: bare Fastify route, JSON parse only', floor!, '1×', '—'),
        ],
      },
    ],
    notes: [
      `Goal (issue 14): new events at 0.6× of the floor or better. How busy the CPUs were: the server ${range([newEvents!, duplicates!, floor!].map((s) => s.serverBusy))}, ` +
        `the load generator (which builds every new body) ${range([newEvents!, duplicates!, floor!].map((s) => s.clientBusy))}.`,
    ],
  };
}

function frameworkVersion(name: 'fastify' | 'express'): string {
  return packageVersion(name);
}

function autocannonVersion(): string {
  return packageVersion('autocannon');
}

function packageVersion(name: string): string {
  try {
    const url = new URL(`../node_modules/${name}/package.json`, import.meta.url);
    return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
  } catch {
    return '(version unknown)';
  }
}
