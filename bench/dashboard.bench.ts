// The dashboard as a person uses it, in Debian's Chromium (playwright-core): how long the Tracking ID
// combobox takes to show the options for a typed word, how long the Messages page takes to show its
// first rows, over the memory store and the Postgres store, each holding 100 000 tracking IDs and
// 1 000 000 messages in one project; and the gzipped size of what the first load downloads.
// The server (Fastify + mailwardenPlugin with `dashboard: true`) runs in this process.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { createMailwarden, createMemoryStore, type Store } from '@mailwarden/core';
import { Fact, messageKey, type StoredEvent } from '@mailwarden/core/store';
import { mailwardenFrameworkErrors, mailwardenPlugin } from '@mailwarden/fastify';
import { createPostgresStore, migrate } from '@mailwarden/postgres';
import Fastify from 'fastify';
import postgres from 'postgres';
import { chromium, type Browser, type Page } from 'playwright-core';
import { collectGarbage, median } from './measure.js';
import {
  formatBytes,
  formatCount,
  formatNanos,
  type BenchSuite,
  type ReportSection,
  type ReportTable,
  type SuiteContext,
} from './report.js';
import { MESSAGES, START, TRACKING_IDS, startServer } from './store-bench.js';

const SCHEMA = 'mailwarden_bench_dashboard';
const PROJECT = 'acme';
const API_KEY = 'bench-dashboard-key';
const MOUNT = '/mailwarden';
/** Between two keystrokes (keydown to keydown), as a person types. */
const KEY_DELAY_MS = 90;
/** p95 goals of every latency case, per store. */
const GOAL_MS = { memory: 100, postgres: 200 } as const;
/** The first load's JS + CSS, gzipped. */
const BUDGET_BYTES = 60 * 1024;
const BATCH = 1000;
const APP_DIRECTORY = fileURLToPath(new URL('../packages/dashboard/app/', import.meta.url));

type StoreKind = keyof typeof GOAL_MS;
const storeNames: Record<StoreKind, string> = { memory: 'memory', postgres: 'Postgres' };

interface Size {
  trackingIds: number;
  messages: number;
  /** Timed repetitions of each case, after `warmup` untimed ones. */
  repetitions: number;
  warmup: number;
}

// --- data -------------------------------------------------------------------------------------------

/** Topics by `k % 8`: newsletters are a quarter of the IDs. */
const TOPICS = ['newsletter', 'receipt', 'welcome', 'promo', 'newsletter', 'reminder', 'digest', 'invoice'];
const SEARCHES = [
  { name: 'common', word: 'newsletter' },
  { name: 'rare', word: 'aurora' },
  { name: 'no match', word: 'zqxj' },
] as const;

interface Dataset {
  ids: string[];
  /** The ID carrying every tenth message, besides its share of the rest. */
  busy: string;
  /** Its messages in all. */
  busyMessages: number;
  /** IDs that contain each search word. */
  matches: Record<string, number>;
}

/** `newsletter-2026-11-20-0042`…: a topic, a day, a number; five promos are `promo-aurora-…`. */
function dataset(size: Size): Dataset {
  const count = size.trackingIds;
  // On the `promo` slot (k % 8 = 3), spread over the ID order.
  const rare = new Set([0.07, 0.26, 0.45, 0.63, 0.88].map((f) => Math.floor((f * count) / 8) * 8 + 3));
  const ids = Array.from({ length: count }, (_, k) => {
    const day = new Date(Date.UTC(2024, 0, 1) + Math.floor(k / 100) * 86_400_000).toISOString().slice(0, 10);
    const topic = rare.has(k) ? 'promo-aurora' : TOPICS[k % 8]!;
    return `${topic}-${day}-${String(k % 100).padStart(4, '0')}`;
  });
  const busyIndex = Math.floor(count / 16) * 8; // a newsletter, mid-way
  const tenths = Math.ceil(size.messages / 10);
  const rest = size.messages - tenths; // spread round-robin over every ID (see trackingIdOfMessage)
  const busyMessages = tenths + Math.floor(rest / count) + (rest % count > busyIndex ? 1 : 0);
  const matches = Object.fromEntries(SEARCHES.map(({ word }) => [word, ids.filter((id) => id.includes(word)).length]));
  if (!(matches.aurora! >= 3 && matches.aurora! <= 10) || matches.zqxj !== 0)
    throw new Error('bench: the rare and missing words do not fit');
  return { ids, busy: ids[busyIndex]!, busyMessages, matches };
}

/** Message i's tracking ID: every tenth message the busy ID's, the rest round-robin over every ID. */
function trackingIdOfMessage(data: Dataset, i: number): string {
  if (i % 10 === 0) return data.busy;
  return data.ids[(Math.floor(i / 10) * 9 + (i % 10) - 1) % data.ids.length]!;
}

/** One delivered message per event, a second apart, oldest first, through `store.applyEvents`. */
async function fill(store: Store, data: Dataset, size: Size, context: SuiteContext): Promise<number> {
  const started = performance.now();
  for (let from = 0; from < size.messages; from += BATCH) {
    const events: StoredEvent[] = [];
    for (let i = from; i < Math.min(from + BATCH, size.messages); i++) {
      const trackingId = trackingIdOfMessage(data, i);
      const messageId = `<bench-${i}@mail.example.com>`;
      const recipient = `reader${i}@example.com`;
      const at = START + i * 1000;
      events.push({
        key: `sendgrid:delivered-${i}`,
        message: {
          key: messageKey('sendgrid', messageId, recipient),
          provider: 'sendgrid',
          messageId,
          recipient,
          trackingId,
          stream: null,
          facts: Fact.delivered,
          firstEventAt: at,
          lastEventAt: at,
        },
        trackingIdSearchKey: trackingId.toLowerCase(),
        suppression: null,
      });
    }
    const outcomes = await store.applyEvents(PROJECT, events);
    if (outcomes.some((outcome) => outcome !== 'applied')) throw new Error('bench: an event was not applied');
    if ((from / BATCH + 1) % 100 === 0)
      context.log(`  ${formatCount(from + BATCH)} messages (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  const ms = performance.now() - started;
  // What the report says about the data, checked against the store.
  const busy = await store.getTrackingId(PROJECT, data.busy);
  if (busy?.messages !== data.busyMessages) throw new Error(`bench: ${data.busy} has ${busy?.messages} messages, not ${data.busyMessages}`);
  for (const word of ['aurora', 'zqxj']) {
    const found = (await store.listTrackingIds(PROJECT, { search: word, limit: 21 })).length;
    if (found !== data.matches[word]) throw new Error(`bench: "${word}" finds ${found} IDs, not ${data.matches[word]}`);
  }
  return ms;
}

// --- server-side timing -----------------------------------------------------------------------------

interface Timed {
  /** What was asked: the search key, or the tracking ID filter ('' for none). */
  what: string;
  ms: number;
}

/** Records the time of each `listTrackingIds` / `listMessages` call (the store's own time, awaited). */
function timedStore(store: Store, calls: { trackingIds: Timed[]; messages: Timed[] }): Store {
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property === 'listTrackingIds') {
        return async (projectId: string, query: Parameters<Store['listTrackingIds']>[1]) => {
          const start = performance.now();
          const result = await target.listTrackingIds(projectId, query);
          calls.trackingIds.push({ what: query.search ?? '', ms: performance.now() - start });
          return result;
        };
      }
      if (property === 'listMessages') {
        return async (projectId: string, query: Parameters<Store['listMessages']>[1]) => {
          const start = performance.now();
          const result = await target.listMessages(projectId, query);
          calls.messages.push({ what: query.trackingId ?? '', ms: performance.now() - start });
          return result;
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

interface Server {
  dashboard: string;
  /** Fastify's time per request (onRequest to onResponse), by path and query, with the status sent. */
  requests: { url: URL; ms: number; status: number }[];
  calls: { trackingIds: Timed[]; messages: Timed[] };
  close(): Promise<void>;
}

async function startDashboardServer(store: Store): Promise<Server> {
  const calls = { trackingIds: [] as Timed[], messages: [] as Timed[] };
  const requests: Server['requests'] = [];
  const mailwarden = createMailwarden({ store: timedStore(store, calls) });
  const app = Fastify({ logger: false, frameworkErrors: mailwardenFrameworkErrors });
  app.addHook('onResponse', async (request, reply) => {
    requests.push({ url: new URL(request.url, 'http://localhost'), ms: reply.elapsedTime, status: reply.statusCode });
  });
  await app.register(mailwardenPlugin, { prefix: MOUNT, mailwarden, apiKeys: { [API_KEY]: PROJECT }, dashboard: true });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('bench: no TCP address');
  return {
    dashboard: `http://127.0.0.1:${address.port}${MOUNT}/dashboard/`,
    requests,
    calls,
    close: () => app.close(),
  };
}

// --- in the page ------------------------------------------------------------------------------------
// Scripts are strings: tsx compiles functions with helpers (`__name`) the page does not have.

interface ComboboxSample {
  keydownAt: number;
  shownAt: number;
  frameAt: number;
  options: number;
  fetchStart?: number;
  responseEnd?: number;
}

/**
 * Installed just before the last key: the keydown's `event.timeStamp`, then `performance.now()` when
 * the listbox says it shows the options for `word` (`data-search`), resolved after the next frame.
 */
const comboboxProbe = (word: string) => `(() => {
  const word = ${JSON.stringify(word)};
  performance.clearResourceTimings();
  window.__benchSample = new Promise((resolve, reject) => {
    let keydownAt;
    addEventListener('keydown', (event) => { keydownAt = event.timeStamp; }, { capture: true, once: true });
    const observer = new MutationObserver(() => {
      const listbox = document.querySelector('[role=listbox]');
      if (listbox === null || listbox.getAttribute('data-search') !== word) return;
      const shownAt = performance.now();
      observer.disconnect();
      clearTimeout(timer);
      const options = listbox.querySelectorAll('[role=option]').length;
      requestAnimationFrame(() => {
        const frameAt = performance.now();
        const entry = performance.getEntriesByType('resource')
          .filter((e) => e.name.includes('/tracking-ids?') && new URL(e.name).searchParams.get('search') === word).at(-1);
        resolve({ keydownAt, shownAt, frameAt, options, fetchStart: entry?.startTime, responseEnd: entry?.responseEnd });
      });
    });
    const timer = setTimeout(() => { observer.disconnect(); reject(new Error('no options for ' + word + ' within 60 s')); }, 60000);
    observer.observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-search'] });
  });
})()`;

/** An init script: `performance.now()` (since navigation start) when the first `table tbody tr` exists. */
const firstRowProbe = `(() => {
  window.__firstRowAt = undefined;
  let shown;
  window.__firstRow = new Promise((resolve) => { shown = resolve; });
  const observer = new MutationObserver(() => {
    if (document.querySelector('table tbody tr') === null) return;
    window.__firstRowAt = performance.now();
    observer.disconnect();
    requestAnimationFrame(() => { window.__firstRowFrameAt = performance.now(); shown(window.__firstRowAt); });
  });
  observer.observe(document, { childList: true, subtree: true });
})()`;

interface LoadSample {
  firstRowAt: number;
  frameAt: number;
  htmlEnd: number;
  domContentLoaded: number;
  fetchStart?: number;
  responseEnd?: number;
  /** Every /assets/ file came from the cache (transferSize 0). */
  cached: boolean;
}

const loadReadout = `(() => {
  const navigation = performance.getEntriesByType('navigation')[0];
  const resources = performance.getEntriesByType('resource');
  const api = resources.find((e) => new URL(e.name).pathname.endsWith('/messages'));
  const assets = resources.filter((e) => e.name.includes('/assets/'));
  return { firstRowAt: window.__firstRowAt, frameAt: window.__firstRowFrameAt, htmlEnd: navigation.responseEnd,
    domContentLoaded: navigation.domContentLoadedEventEnd, fetchStart: api?.startTime, responseEnd: api?.responseEnd,
    cached: assets.length > 0 && assets.every((e) => e.transferSize === 0) };
})()`;

// --- the cases ------------------------------------------------------------------------------------

interface CaseResult {
  /** The figure: keystroke (or navigation start) to options (or first row) shown, ms. */
  latency: number[];
  /** To the frame after. */
  frame: number[];
  /** Before the API request starts (input handling / a search in flight; or HTML + boot). */
  before: number[];
  /** API request start to response end, in the browser. */
  request: number[];
  /** Response end to shown: parse and render. */
  after: number[];
  server: number[];
  store: number[];
  /** Loads: navigation start to the HTML's responseEnd, and to DOMContentLoaded's end (the app's module ran). */
  html: number[];
  started: number[];
  /** Each sample's window in this process's clock, for the GC pauses that fell in it. */
  windows: [number, number][];
  options?: number;
  cached?: boolean;
  /** Loads: index.html was answered 304 every time. */
  revalidated?: boolean;
}

const emptyResult = (): CaseResult => ({
  latency: [],
  frame: [],
  before: [],
  request: [],
  after: [],
  server: [],
  store: [],
  html: [],
  started: [],
  windows: [],
});

/** GC pauses of this process (where the server runs), as [start, duration] in `performance.now()` time. */
const gcPauses: [number, number][] = [];
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcPauses.push([entry.startTime, entry.duration]);
});

/** Per sample, the GC pause time within its window. */
function gcPerSample(result: CaseResult): number[] {
  return result.windows.map(([from, to]) =>
    gcPauses.reduce((sum, [start, duration]) => sum + Math.max(0, Math.min(to, start + duration) - Math.max(from, start)), 0),
  );
}

const combobox = (page: Page) => page.getByRole('combobox', { name: 'Tracking ID' });

/** An empty, idle combobox: cleared, its list open with the options for ''. */
async function idleCombobox(page: Page): Promise<void> {
  const input = combobox(page);
  await input.fill('');
  if ((await input.getAttribute('aria-expanded')) !== 'true') await input.press('ArrowDown');
  await page.locator('[role=listbox][data-search=""]').waitFor();
  await sleep(250);
}

async function typeWord(page: Page, server: Server, word: string, into: CaseResult | undefined): Promise<void> {
  await idleCombobox(page);
  server.requests.length = 0;
  server.calls.trackingIds.length = 0;
  await page.keyboard.type(word.slice(0, -1), { delay: KEY_DELAY_MS });
  await page.evaluate(comboboxProbe(word));
  const from = performance.now();
  await page.keyboard.press(word.at(-1)!, { delay: KEY_DELAY_MS });
  const sample = (await page.evaluate('window.__benchSample')) as ComboboxSample;
  const to = performance.now();
  if (into === undefined) return;
  into.windows.push([from, to]);
  into.latency.push(sample.shownAt - sample.keydownAt);
  into.frame.push(sample.frameAt - sample.keydownAt);
  into.options = sample.options - 1; // without "All tracking IDs"
  if (sample.fetchStart !== undefined && sample.responseEnd !== undefined) {
    into.before.push(sample.fetchStart - sample.keydownAt);
    into.request.push(sample.responseEnd - sample.fetchStart);
    into.after.push(sample.shownAt - sample.responseEnd);
  }
  const request = server.requests
    .filter(({ url }) => url.pathname.endsWith('/tracking-ids') && url.searchParams.get('search') === word)
    .at(-1);
  if (request !== undefined) into.server.push(request.ms);
  const call = server.calls.trackingIds.filter(({ what }) => what === word.toLowerCase()).at(-1);
  if (call !== undefined) into.store.push(call.ms);
}

async function loadMessages(page: Page, server: Server, trackingId: string | undefined, into: CaseResult | undefined): Promise<void> {
  server.requests.length = 0;
  server.calls.messages.length = 0;
  const url = `${server.dashboard}messages${trackingId === undefined ? '' : `?trackingId=${encodeURIComponent(trackingId)}`}`;
  // The page's CSP forbids eval, so no string waitForFunction: the init script's promise is awaited.
  const from = performance.now();
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.evaluate('window.__firstRow');
  const to = performance.now();
  const sample = (await page.evaluate(loadReadout)) as LoadSample;
  // Let the page settle (the counts of the chosen ID) before the next navigation.
  await page.waitForLoadState('load');
  await sleep(100);
  if (into === undefined) return;
  into.windows.push([from, to]);
  into.latency.push(sample.firstRowAt);
  into.frame.push(sample.frameAt);
  into.html.push(sample.htmlEnd);
  into.started.push(sample.domContentLoaded);
  into.cached = (into.cached ?? true) && sample.cached;
  const html = server.requests.find(({ url }) => url.pathname.endsWith('/dashboard/messages'));
  into.revalidated = (into.revalidated ?? true) && html?.status === 304;
  if (sample.fetchStart !== undefined && sample.responseEnd !== undefined) {
    into.before.push(sample.fetchStart);
    into.request.push(sample.responseEnd - sample.fetchStart);
    into.after.push(sample.firstRowAt - sample.responseEnd);
  }
  const request = server.requests
    .filter(({ url }) => url.pathname.endsWith('/messages') && (url.searchParams.get('trackingId') ?? undefined) === trackingId)
    .at(-1);
  if (request !== undefined) into.server.push(request.ms);
  const call = server.calls.messages.filter(({ what }) => what === (trackingId ?? '')).at(-1);
  if (call !== undefined) into.store.push(call.ms);
}

interface StoreResult {
  kind: StoreKind;
  fillMs: number;
  vacuumMs?: number;
  cases: Record<string, CaseResult>;
  version?: string;
}

const LOADS = ['unfiltered', 'filtered'] as const;

/** Signs in, then every case in turn (A B C A B C…), `warmup` untimed rounds first. */
async function measureCases(
  browser: Browser,
  server: Server,
  data: Dataset,
  size: Size,
  context: SuiteContext,
  kind: StoreKind,
): Promise<Record<string, CaseResult>> {
  const browserContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await browserContext.newPage();
    page.setDefaultTimeout(60_000);
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(server.dashboard);
    await page.getByLabel('Project').fill(PROJECT);
    await page.getByLabel('API key').fill(API_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Messages' }).waitFor();
    await page.locator('table tbody tr').first().waitFor();

    const cases: Record<string, CaseResult> = {};
    for (const { name } of SEARCHES) cases[name] = emptyResult();
    for (const name of LOADS) cases[name] = emptyResult();

    context.log(`${kind}: combobox, ${size.warmup} + ${size.repetitions} rounds of ${SEARCHES.map((s) => s.word).join(', ')}…`);
    for (let round = 0; round < size.warmup + size.repetitions; round++) {
      for (const { name, word } of SEARCHES) await typeWord(page, server, word, round < size.warmup ? undefined : cases[name]);
    }
    context.log(`${kind}: first rows, ${size.warmup} + ${size.repetitions} rounds…`);
    await page.addInitScript(firstRowProbe);
    for (let round = 0; round < size.warmup + size.repetitions; round++) {
      await loadMessages(page, server, undefined, round < size.warmup ? undefined : cases.unfiltered);
      await loadMessages(page, server, data.busy, round < size.warmup ? undefined : cases.filtered);
    }
    if (problems.length > 0) throw new Error(`bench: the page failed: ${problems.join('; ')}`);
    for (const [name, result] of Object.entries(cases)) {
      context.log(`${kind}: ${name}: p50 ${ms(percentile(result.latency, 50))}, p95 ${ms(percentile(result.latency, 95))}`);
    }
    return cases;
  } finally {
    await browserContext.close();
  }
}

async function benchMemory(browser: Browser, data: Dataset, size: Size, context: SuiteContext): Promise<StoreResult> {
  const store = createMemoryStore();
  context.log(`memory: filling ${formatCount(size.messages)} messages…`);
  const fillMs = await fill(store, data, size, context);
  const server = await startDashboardServer(store);
  try {
    return { kind: 'memory', fillMs, cases: await measureCases(browser, server, data, size, context, 'memory') };
  } finally {
    await server.close();
    await store.close();
    collectGarbage();
  }
}

async function benchPostgres(browser: Browser, data: Dataset, size: Size, context: SuiteContext): Promise<StoreResult> {
  const database = await startServer('postgres', context);
  // A pool, as an app has; the fill uses one connection at a time.
  const sql = postgres(database.url, { max: 10, onnotice: () => {} });
  try {
    await sql.unsafe(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await migrate(sql, { schema: SCHEMA });
    const version = (await sql`SHOW server_version`)[0]!.server_version as string;
    const store = createPostgresStore({ sql, schema: SCHEMA });
    context.log(`postgres: filling ${formatCount(size.messages)} messages…`);
    const fillMs = await fill(store, data, size, context);
    const vacuumStarted = performance.now();
    await sql.unsafe(`VACUUM ANALYZE ${SCHEMA}.messages, ${SCHEMA}.tracking_ids, ${SCHEMA}.event_keys`);
    const vacuumMs = performance.now() - vacuumStarted;
    const server = await startDashboardServer(store);
    try {
      return { kind: 'postgres', fillMs, vacuumMs, version, cases: await measureCases(browser, server, data, size, context, 'postgres') };
    } finally {
      await server.close();
      await store.close();
    }
  } finally {
    await sql.unsafe(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => {});
    await sql.end();
    await database.stop();
  }
}

// --- first-load size ----------------------------------------------------------------------------------

function firstLoadSection(): ReportSection {
  const html = readFileSync(`${APP_DIRECTORY}index.html`);
  const referenced = [...html.toString('utf8').matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+\.(?:js|css))"/g)].map(
    (match) => match[1]!,
  );
  const gz = (content: Buffer) => gzipSync(content, { level: 9 }).length;
  const files = referenced.map((reference) => {
    const content = readFileSync(new URL(reference, `file://${APP_DIRECTORY}`));
    return { name: reference.replace(/^\.\//, ''), raw: content.length, gzipped: gz(content) };
  });
  const total = { raw: files.reduce((sum, file) => sum + file.raw, 0), gzipped: files.reduce((sum, file) => sum + file.gzipped, 0) };
  const row = (name: string, raw: number, gzipped: number) => [
    name,
    `${formatCount(raw)} B`,
    `${formatCount(gzipped)} B`,
    formatBytes(gzipped),
  ];
  return {
    title: 'Dashboard: first-load size',
    intro: [
      `The files a first visit downloads, as built by \`npm run build:dashboard\` into packages/dashboard/app/: ` +
        `index.html and every JS and CSS file it references, gzipped at level 9 as the server sends them ` +
        `(\`createDashboard\` compresses each file once with zlib level 9 for clients that accept gzip). ` +
        `The favicon and the API's JSON are not counted. Budget: JS + CSS at most ${formatBytes(BUDGET_BYTES)} gzipped.`,
    ],
    tables: [
      {
        columns: ['file', 'raw bytes', 'gzip -9 bytes', 'gzip -9'],
        rows: [
          row('index.html', html.length, gz(html)),
          ...files.map((file) => row(file.name, file.raw, file.gzipped)),
          [
            '**JS + CSS**',
            `${formatCount(total.raw)} B`,
            `${formatCount(total.gzipped)} B`,
            `${formatBytes(total.gzipped)} of ${formatBytes(BUDGET_BYTES)}: ${total.gzipped <= BUDGET_BYTES ? 'met' : '**missed**'}`,
          ],
          row('all of the above (with index.html)', total.raw + html.length, total.gzipped + gz(html)),
        ],
      },
    ],
  };
}

// --- report -------------------------------------------------------------------------------------------

/** Nearest-rank percentile. */
function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const rounds = (count: number) => `${count} round${count === 1 ? '' : 's'}`;
const ms = (value: number) => (!Number.isFinite(value) ? '—' : value === 0 ? '0' : formatNanos(value * 1e6));

function latencySection(data: Dataset, size: Size, results: StoreResult[], browserVersion: string): ReportSection {
  const memory = results.find((result) => result.kind === 'memory')!;
  const pg = results.find((result) => result.kind === 'postgres')!;
  const labels: Record<string, string> = {
    common: `Combobox, common: \`${SEARCHES[0].word}\` (${formatCount(data.matches[SEARCHES[0].word]!)} IDs match; ${memory.cases.common!.options} options shown)`,
    rare: `Combobox, rare: \`${SEARCHES[1].word}\` (${data.matches[SEARCHES[1].word]} IDs match; ${memory.cases.rare!.options} options shown)`,
    'no match': `Combobox, no match: \`${SEARCHES[2].word}\` (${data.matches[SEARCHES[2].word]} match; ${memory.cases['no match']!.options} options shown)`,
    unfiltered: 'First rows of Messages, unfiltered (`…/dashboard/messages`)',
    filtered: `First rows of Messages, \`?trackingId=${data.busy}\` (${formatCount(data.busyMessages)} messages)`,
  };
  const names = [...SEARCHES.map((search) => search.name), ...LOADS];
  const goal = (name: string) => {
    const missed = results
      .filter((result) => !(percentile(result.cases[name]!.latency, 95) < GOAL_MS[result.kind]))
      .map((result) => storeNames[result.kind]);
    return missed.length === 0 ? 'met' : `**missed** (${missed.join(', ')})`;
  };
  const optionsDiffer = SEARCHES.some(({ name }) => memory.cases[name]!.options !== pg.cases[name]!.options);
  const latencyTable: ReportTable = {
    columns: [
      'case',
      'memory p50',
      'memory p95',
      'Postgres p50',
      'Postgres p95',
      `goal: p95 < ${GOAL_MS.memory} ms memory, < ${GOAL_MS.postgres} ms Postgres`,
    ],
    rows: names.map((name) => [
      labels[name]!,
      ms(percentile(memory.cases[name]!.latency, 50)),
      ms(percentile(memory.cases[name]!.latency, 95)),
      ms(percentile(pg.cases[name]!.latency, 50)),
      ms(percentile(pg.cases[name]!.latency, 95)),
      goal(name),
    ]),
  };
  const breakdownTable: ReportTable = {
    columns: [
      'where the time goes (medians)',
      'store',
      'HTML received',
      'app started',
      'to request start',
      'request (browser)',
      'of it, Fastify',
      'of it, store call',
      'response to shown',
      'to next frame',
      'GC pauses in the server process (median / max)',
    ],
    rows: names.flatMap((name) =>
      results.map((result) => {
        const c = result.cases[name]!;
        const m = (values: number[]) => (values.length === 0 ? '—' : ms(median(values)));
        const gc = gcPerSample(c);
        return [
          name,
          storeNames[result.kind],
          m(c.html),
          m(c.started),
          m(c.before),
          m(c.request),
          m(c.server),
          m(c.store),
          m(c.after),
          m(c.frame),
          `${ms(median(gc))} / ${ms(Math.max(...gc))}`,
        ];
      }),
    ),
  };
  const fillTable: ReportTable = {
    columns: ['fill', 'time', 'messages/s', 'then'],
    rows: results.map((result) => [
      `${storeNames[result.kind]}: \`store.applyEvents\`, ${formatCount(size.messages / BATCH)} batches of ${formatCount(BATCH)}`,
      `${(result.fillMs / 1000).toFixed(1)} s`,
      formatCount(size.messages / (result.fillMs / 1000)),
      result.vacuumMs === undefined ? '—' : `\`VACUUM ANALYZE\`: ${(result.vacuumMs / 1000).toFixed(1)} s`,
    ]),
  };
  const cached = LOADS.every((name) => results.every((result) => result.cases[name]!.cached === true));
  const revalidated = LOADS.every((name) => results.every((result) => result.cases[name]!.revalidated === true));
  return {
    title: `Dashboard: combobox and first rows, ${formatCount(size.trackingIds)} tracking IDs and ${formatCount(size.messages)} messages`,
    intro: [
      `The dashboard in Chromium ${browserVersion} (Debian's, headless, driven by playwright-core), 1280×900, served ` +
        `by Fastify + \`mailwardenPlugin\` with \`dashboard: true\` in the bench process on 127.0.0.1, over ` +
        `\`createMemoryStore()\` and then over \`createPostgresStore\` (PostgreSQL ${pg.version ?? '?'}, loopback TCP, ` +
        `fsync off, a pool of 10 connections). Each holds one project with ${formatCount(size.trackingIds)} tracking ` +
        `IDs like \`${data.ids[1234]}\` (topics newsletter, receipt, welcome, promo, reminder, digest, invoice) and ` +
        `${formatCount(size.messages)} delivered messages, a second apart; one ID, \`${data.busy}\`, carries every ` +
        `tenth message besides its share of the rest (${formatCount(data.busyMessages)} in all), the others ${Math.floor((size.messages - Math.ceil(size.messages / 10)) / size.trackingIds)} each. ` +
        `Filled through \`store.applyEvents\` with prepared events, batches of ${formatCount(BATCH)}.`,
      `**Combobox**: from an empty, idle combobox (cleared, its list showing the options for ''), the word is typed ` +
        `key by key, ${KEY_DELAY_MS} ms from one keydown to the next (\`page.keyboard.type\`, then \`press\` for the last key), ` +
        `so the app searches each prefix as a person's typing makes it (one request in flight at a time; see the ` +
        `component). The figure runs from the **last** keystroke (the keydown's \`event.timeStamp\`) to the moment the ` +
        `listbox says it shows the options for the whole word (\`[role=listbox][data-search="<word>"]\`, seen by a ` +
        `MutationObserver, \`performance.now()\`), both taken inside the page; "options shown" counts tracking IDs, ` +
        `without the "All tracking IDs" option (the app asks for 20 at most). The three words are typed in turn, ` +
        `${rounds(size.warmup)} untimed, then ${size.repetitions} timed.`,
      `**First rows**: \`page.goto\` of the Messages page, unfiltered and filtered by the busy ID, in turn, ` +
        `${rounds(size.warmup)} untimed, then ${size.repetitions} timed; from navigation start (the new document's ` +
        `\`performance.now()\` origin) to the first \`table tbody tr\` in the DOM (a MutationObserver installed by ` +
        `\`page.addInitScript\`). The tab is already signed in (the session is in sessionStorage, which survives ` +
        `\`page.goto\` in the same tab) and the app's files are cached, as for a person who uses the dashboard: ` +
        `index.html is revalidated (${revalidated ? 'answered 304 on every timed load' : '**not answered 304 on every timed load**'}), ` +
        `the hashed JS and CSS come from the cache (${cached ? 'transferSize 0 on every timed load' : '**not on every timed load**'}). ` +
        `The page asks for 50 messages.`,
      `p50 is the median, p95 the nearest rank (the ${Math.ceil(0.95 * size.repetitions)}th of ${size.repetitions}). ` +
        `This machine has ${cpus().length} CPUs, shared by Chromium, the bench process (server and driver) and ` +
        `PostgreSQL: on a small or busy machine the figures are upper bounds.`,
    ],
    tables: [latencyTable, breakdownTable, fillTable],
    notes: [
      `"Where the time goes" splits each figure, by medians (which need not add up): "to request start" is the ` +
        `keystroke (or navigation start) to the API request's \`startTime\` in Resource Timing (for the combobox: input ` +
        `handling, plus waiting for the previous prefix's search when it was still in flight; for a load: the HTML, the ` +
        `cached JS and the app's boot); "request (browser)" is that request's start to \`responseEnd\`; "of it, Fastify" ` +
        `is \`reply.elapsedTime\` of that request on the server; "of it, store call" is the store's ` +
        `\`listTrackingIds\` (page of 21) or \`listMessages\` (page of 51) for it; "response to shown" is JSON parsing ` +
        `and the render; "to next frame" is the keystroke (navigation start) to the \`requestAnimationFrame\` after the ` +
        `options (rows) were shown. For loads, "HTML received" is navigation start to index.html's \`responseEnd\`, ` +
        `"app started" to \`domContentLoadedEventEnd\` (the cached module has run and rendered once). "GC ` +
        `pauses" sums, per sample, the garbage-collection pauses of the bench process (the server's) that fell between ` +
        `the last keystroke (the \`page.goto\`) and the sample's end, from \`PerformanceObserver\` 'gc' entries.` +
        (optionsDiffer ? ' **The stores showed different option counts.**' : ''),
    ],
  };
}

export const dashboardSuite: BenchSuite = {
  name: 'dashboard',
  async run(context) {
    const size: Size = context.quick
      ? { trackingIds: 10_000, messages: 100_000, repetitions: 5, warmup: 1 }
      : { trackingIds: TRACKING_IDS, messages: MESSAGES, repetitions: 30, warmup: 3 };
    const sizeSection = firstLoadSection();
    const data = dataset(size);
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    gcObserver.observe({ entryTypes: ['gc'] });
    try {
      const results = [await benchMemory(browser, data, size, context), await benchPostgres(browser, data, size, context)];
      return [latencySection(data, size, results, browser.version()), sizeSection];
    } finally {
      await browser.close();
      gcObserver.disconnect();
      gcPauses.length = 0;
    }
  },
};
