// Benchmarks of the change feed and alerts (issue 26) on each store: what `applyEvents` costs with the
// feed on, and with the feed and alerts on, against the same events with both off, in the same run; and
// how fast outbound webhooks deliver the feed, and how far behind they stay under intake.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMailwarden, createMemoryStore, type AlertRules, type Mailwarden, type Store } from '@mailwarden/core';
import { createPostgresStore, migrate } from '@mailwarden/postgres';
import { createRedisStore } from '@mailwarden/redis';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { address, eventBatch, rawHash } from './core.bench.js';
import { measureGroup, median, type Measurement, type MeasureOptions } from './measure.js';
import { formatCount, formatNanos, formatPercent, type BenchSuite, type ReportSection, type SuiteContext } from './report.js';
import { START, startServer } from './store-bench.js';

const EVENTS = 1000;
const ALERTS: AlertRules = {};
/** The goals: the feed on costs at most 15 % more per event (off: within 5 %, `bench:compare`). */
const FEED_GOAL = 0.15;

/** One store with its feed off and one with it on, over the same backend. */
interface Subject {
  name: string;
  off: Store;
  on: Store;
  /** Before each measured group: what a live deployment has done by then (PostgreSQL: autovacuum's ANALYZE). */
  prepare?: () => Promise<void>;
  /** What a profile of this store's feed showed, after the table. */
  notes?: string[];
}

/** What `node --cpu-prof` showed of the memory store's feed (issue 26), and what came of it. */
const MEMORY_PROFILE =
  "Profiled (`node --cpu-prof`, batches of 1 000 new events with the feed on): the feed's own code (`ChangeFeed.append`, " +
  'the status comparison) is under 1 % of the samples; its cost is allocation and garbage collection, since every change is kept and so survives ' +
  'the young generation into the old one. Appending used to copy each change once more, and each status change copied its message: ' +
  'numbering the change in place and sharing the stored message record (a merge replaces it, never changes it in place) took the ' +
  "feed's CPU cost on new events from about 11 % to about 5 % (CPU time of the two versions interleaved, median of 150 rounds, on a " +
  'loaded machine) and its memory from about 340 to 270 bytes per change.';

export const feedSuite: BenchSuite = {
  name: 'feed',
  async run(context) {
    const options: MeasureOptions = context.quick ? { samples: 3, operationsPerSample: 2 } : { samples: 7, operationsPerSample: 6 };
    // The memory store's batches take milliseconds, and a garbage collection lands in some: more of them per sample.
    const memoryOptions: MeasureOptions = context.quick ? options : { samples: 9, operationsPerSample: 20 };
    const sections: ReportSection[] = [];
    // `FEED_STORES=postgres npm run bench -- feed` while working on one store; the doc's run measures all.
    const wanted = (store: string) => process.env.FEED_STORES === undefined || process.env.FEED_STORES.split(',').includes(store);
    if (wanted('memory'))
      sections.push(
        await feedSection(context, memoryOptions, {
          name: 'Memory store',
          off: createMemoryStore(),
          on: createMemoryStore({ changes: {} }),
          notes: [MEMORY_PROFILE],
        }),
        await outboundSection(context, 'Memory store', createMemoryStore({ changes: {} })),
      );

    if (wanted('redis')) await redisSections(context, options, sections);
    if (wanted('postgres')) await postgresSections(context, options, sections);
    return sections;
  },
};

async function redisSections(context: SuiteContext, options: MeasureOptions, sections: ReportSection[]): Promise<void> {
  const redisServer = await startServer('redis', context);
  const client = new Redis(redisServer.url);
  try {
    const prefix = `bench:${randomUUID()}:`;
    sections.push(
      await feedSection(context, options, {
        name: 'Redis store',
        off: createRedisStore({ client, keyPrefix: `${prefix}off:` }),
        on: createRedisStore({ client, keyPrefix: `${prefix}on:`, changes: {} }),
      }),
      await outboundSection(context, 'Redis store', createRedisStore({ client, keyPrefix: `${prefix}outbound:`, changes: {} })),
    );
  } finally {
    await client.quit();
    await redisServer.stop();
  }
}

async function postgresSections(context: SuiteContext, options: MeasureOptions, sections: ReportSection[]): Promise<void> {
  const pgServer = await startServer('postgres', context);
  const schema = 'mailwarden_bench_feed';
  const sql = postgres(pgServer.url, { max: 1, onnotice: () => {} });
  // Delivery, intake and the lag sampler at once, as a service's pool serves them.
  const pool = postgres(pgServer.url, { max: 4, onnotice: () => {} });
  try {
    await sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await migrate(sql, { schema });
    const off = createPostgresStore({ sql, schema });
    const on = createPostgresStore({ sql, schema, changes: {} });
    // Tables already holding a project's worth of events, analyzed as autovacuum would
    // (docs/storage.md, "PostgreSQL at scale").
    const filler = createMailwarden({ store: on, alerts: ALERTS, now: () => START + 400 * 60_000 });
    for (let b = 0; b < 40; b++) await filler.applyEvents('filler', eventBatch(100_000 + b, START + b * 60_000));
    const analyze = async () => void (await sql.unsafe('ANALYZE'));
    sections.push(await feedSection(context, options, { name: 'PostgreSQL store', off, on, prepare: analyze }));
    await analyze();
    sections.push(await outboundSection(context, 'PostgreSQL store', createPostgresStore({ sql: pool, schema, changes: {} })));
  } finally {
    await sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    await pool.end();
    await sql.end();
    await pgServer.stop();
  }
}

async function feedSection(context: SuiteContext, options: MeasureOptions, subject: Subject): Promise<ReportSection> {
  let clock = START;
  const now = () => clock;
  const off: Mailwarden = createMailwarden({ store: subject.off, now });
  const on: Mailwarden = createMailwarden({ store: subject.on, now });
  const alerting: Mailwarden = createMailwarden({ store: subject.on, now, alerts: ALERTS });
  let batch = 0;
  const applied = new Map<string, number>();
  // Each operation applies a batch never applied before, to a project of its own per case.
  const apply = (mailwarden: Mailwarden, project: string) => async () => {
    const b = batch++;
    const start = START + b * 60_000;
    clock = start + 60_000;
    const result = await mailwarden.applyEvents(project, eventBatch(b, start));
    applied.set(project, (applied.get(project) ?? 0) + EVENTS);
    if (result.accepted !== EVENTS) throw new Error(`${subject.name}: ${result.accepted} of ${EVENTS} events accepted`);
  };

  await subject.prepare?.();
  context.log(`${subject.name}: applyEvents, feed off / on / on with alerts…`);
  const [feedOff, feedOn, withAlerts] = await measureGroup(
    [
      { name: 'feed off', run: apply(off, 'feed-off'), itemsPerOp: EVENTS },
      { name: 'feed on', run: apply(on, 'feed-on'), itemsPerOp: EVENTS },
      { name: 'feed and alerts on', run: apply(alerting, 'feed-alerts'), itemsPerOp: EVENTS },
    ],
    options,
  );
  // After the last change: the earliest may be gone (retention by length), the count is in `last`.
  const page = await subject.on.listChanges('feed-on', { after: Number.MAX_SAFE_INTEGER, limit: 1 });

  const cost = (ours: Measurement, base: Measurement) => (ours.nsPerItem - base.nsPerItem) / base.nsPerItem;
  const row = (what: string, ours: Measurement, base: Measurement) => [
    what,
    formatNanos(base.nsPerItem),
    formatNanos(ours.nsPerItem),
    `${formatNanos(ours.nsPerItem - base.nsPerItem)} (${(cost(ours, base) * 100).toFixed(0)} %)`,
    cost(ours, base) <= FEED_GOAL ? `met (≤ ${FEED_GOAL * 100} %)` : `missed (> ${FEED_GOAL * 100} %)`,
    `${formatPercent(base.spread)} / ${formatPercent(ours.spread)}`,
  ];
  return {
    title: `${subject.name}: the change feed and alerts`,
    intro: [
      `\`applyEvents\` with batches of ${EVENTS} new events (the SendGrid-like batches of the \`applyEvents\` sections: 88 % ` +
        'delivered, 8 % hard and 4 % soft bounces, opens and complaints), with the feed off, on, and on with the default alerts ' +
        '(a window of the last 1 000 messages per project), measured in turn in the same run, each case in a project of its own. ' +
        `The feed appended ${(page.last / applied.get('feed-on')!).toFixed(2)} changes per event: a status change per new ` +
        'message and per status it moves to, a suppression change per hard bounce and complaint.',
    ],
    tables: [
      {
        columns: ['case', 'feed off, per event', 'on, per event', 'cost, per event', 'goal', 'noise (off / on)'],
        rows: [row('feed on', feedOn!, feedOff!), row('feed and alerts on', withAlerts!, feedOff!)],
      },
    ],
    notes: [
      'With the feed off, every write costs what it did before issue 26: `npm run bench:compare` measures that against the revision before (docs/performance-history.md).',
      ...(subject.notes ?? []),
    ],
  };
}

// --- outbound delivery ----------------------------------------------------------------------------------

/** The endpoint every outbound case delivers to, and its secret (any `whsec_` secret signs alike). */
const ENDPOINT = 'bench';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
/** How often the engine looks at the endpoint: small, so the figures are delivery's and not the poll's. */
const POLL_MS = 5;
/** How often the lag case samples how far behind the endpoint is. */
const SAMPLE_MS = 20;
/** The lag case's intake: batches of this many events, one every `LAG_INTERVAL_MS` (500 events/s). */
const LAG_BATCH = 100;
const LAG_INTERVAL_MS = 200;

/** A local receiver answering 204 at once, as a quick endpoint does; counts the distinct changes it got. */
interface Receiver {
  url: string;
  /** Distinct `webhook-id`s received. */
  distinct(): number;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const ids = new Set<string>();
  const server = createServer((request, response) => {
    ids.add(String(request.headers['webhook-id']));
    request.resume();
    request.on('end', () => response.writeHead(204).end());
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    distinct: () => ids.size,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Real time, in small steps: the engine runs on real timers here, as in a service. */
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const latestSeq = async (store: Store, project: string) =>
  (await store.listChanges(project, { after: Number.MAX_SAFE_INTEGER, limit: 1 })).last;

/**
 * Makes the endpoint's delivery state now, at the project's current end, with a lease already ended: a
 * new endpoint starts at the end of the feed (docs/outbound-webhooks.md), and the changes made after
 * this are the ones it must deliver.
 */
async function registerEndpoint(store: Store, project: string): Promise<void> {
  const now = Date.now();
  if ((await store.leaseOutbound(project, ENDPOINT, 'bench-setup', now, now)) === undefined) throw new Error('the endpoint is leased');
}

/** One instance delivering `project`'s endpoint to `url`, polling fast; intake on the same instance. */
function deliveringInstance(store: Store, project: string, url: string): Mailwarden {
  return createMailwarden({
    store,
    outbound: { endpoints: { [project]: [{ id: ENDPOINT, url, secrets: [SECRET] }] }, pollMs: POLL_MS },
  });
}

/** Waits until the endpoint's saved cursor reaches `last`; resolves with the time it did (`performance.now()`). */
async function caughtUp(store: Store, project: string, last: number, receiver: Receiver, expected: number): Promise<number> {
  for (;;) {
    // The receiver's count is free to read; the cursor is read only once every change has arrived.
    if (receiver.distinct() >= expected) {
      const [state] = await store.getOutbound(project, [ENDPOINT]);
      if (state !== undefined && state.cursor >= last) return performance.now();
    }
    await pause(1);
  }
}

interface Throughput {
  changes: number;
  seconds: number;
}

/** Fills a new project's feed with `changes` suppressions added, then times one instance delivering them all. */
async function deliveryThroughput(store: Store, changes: number): Promise<Throughput> {
  const project = `outbound-${randomUUID()}`;
  const receiver = await startReceiver();
  try {
    await registerEndpoint(store, project);
    const now = Date.now();
    for (let done = 0; done < changes; done += 1000) {
      const records = Array.from({ length: Math.min(1000, changes - done) }, (_, i) => {
        const email = address(20_000_000 + done + i);
        return { hash: rawHash(email), email, reason: 'manual' as const, createdAt: now };
      });
      await store.mergeSuppressions(project, records, now);
    }
    const last = await latestSeq(store, project);
    if (last !== changes) throw new Error(`the feed holds ${last} changes, not ${changes}`);
    const started = performance.now();
    const mailwarden = deliveringInstance(store, project, receiver.url);
    try {
      const ended = await caughtUp(store, project, last, receiver, changes);
      return { changes, seconds: (ended - started) / 1000 };
    } finally {
      await mailwarden.close();
    }
  } finally {
    await receiver.close();
  }
}

interface Lag {
  events: number;
  changes: number;
  /** Changes behind (`latest - cursor`) at each sample. */
  behind: number[];
  /** Age of the oldest undelivered change at each sample, in ms (0 when caught up). */
  ageMs: number[];
  /** From the last batch applied to the endpoint caught up. */
  drainSeconds: number;
}

/**
 * Applies `batches` batches of `LAG_BATCH` events, one every `LAG_INTERVAL_MS` (as a service receiving
 * webhooks at that rate), on the instance that delivers; samples how far behind the endpoint is meanwhile.
 */
async function feedLag(store: Store, batches: number): Promise<Lag> {
  const project = `lag-${randomUUID()}`;
  const receiver = await startReceiver();
  try {
    await registerEndpoint(store, project);
    const mailwarden = deliveringInstance(store, project, receiver.url);
    const behind: number[] = [];
    const ageMs: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const [state] = await store.getOutbound(project, [ENDPOINT]);
        const cursor = state?.cursor ?? 0;
        const page = await store.listChanges(project, { after: cursor, limit: 1 });
        behind.push(page.last - cursor);
        const oldest = page.changes[0];
        ageMs.push(oldest === undefined ? 0 : Math.max(0, Date.now() - oldest.at));
        await pause(SAMPLE_MS);
      }
    })();
    try {
      const started = performance.now();
      let events = 0;
      for (let b = 0; b < batches; b++) {
        // A fixed rate: each batch starts at its slot, or at once when the previous one overran it.
        const wait = started + b * LAG_INTERVAL_MS - performance.now();
        if (wait > 0) await pause(wait);
        const result = await mailwarden.applyEvents(project, eventBatch(b).slice(0, LAG_BATCH));
        events += result.accepted;
      }
      const intakeEnded = performance.now();
      const last = await latestSeq(store, project);
      const ended = await caughtUp(store, project, last, receiver, last);
      return {
        events,
        changes: last,
        behind,
        ageMs,
        drainSeconds: (ended - intakeEnded) / 1000,
      };
    } finally {
      sampling = false;
      await sampler;
      await mailwarden.close();
    }
  } finally {
    await receiver.close();
  }
}

/** Delivery throughput and feed lag under intake, on one store with its feed on. */
async function outboundSection(context: SuiteContext, name: string, store: Store): Promise<ReportSection> {
  const changes = context.quick ? 1000 : 5000;
  const batches = context.quick ? 5 : 20;
  context.log(`${name}: outbound delivery of ${changes} changes…`);
  const throughput = await deliveryThroughput(store, changes);
  context.log(`${name}: feed lag under intake, ${batches} batches of ${LAG_BATCH} events…`);
  const lag = await feedLag(store, batches);
  const rate = throughput.changes / throughput.seconds;
  // The nominal rate: the last batch's slot ends one interval after it starts.
  const intakeSeconds = (batches * LAG_INTERVAL_MS) / 1000;
  const ms = (value: number) => `${formatCount(value)} ms`;
  return {
    title: `${name}: outbound delivery`,
    intro: [
      `One instance's outbound engine delivering one endpoint to a local receiver (node:http on 127.0.0.1, in the same process, ` +
        `answering 204 at once), polling every ${POLL_MS} ms. **Throughput**: the feed filled with ${formatCount(changes)} ` +
        "`suppression.added` changes first (`mergeSuppressions`, 1 000 at a time), then timed from the instance's creation to the " +
        "endpoint's saved cursor reaching the last change. **Lag**: the same instance applies " +
        `${batches} batches of ${LAG_BATCH} new events, one every ${LAG_INTERVAL_MS} ms (${formatCount((LAG_BATCH * 1000) / LAG_INTERVAL_MS)} events/s), ` +
        `while it delivers; every ${SAMPLE_MS} ms a sampler reads the changes behind (\`latest − cursor\`) and the age of the ` +
        'oldest undelivered change, from the first batch until the endpoint has caught up.',
    ],
    tables: [
      {
        columns: ['case', 'changes', 'figure'],
        rows: [
          [
            'delivery throughput',
            formatCount(throughput.changes),
            `${formatCount(rate)} changes/s (${formatNanos(1e9 / rate)} per change)`,
          ],
          [
            'intake meanwhile (lag case)',
            formatCount(lag.changes),
            `${formatCount(lag.events / intakeSeconds)} events/s, ${formatCount(lag.changes / intakeSeconds)} changes/s`,
          ],
          ['changes behind, median / max', '', `${formatCount(median(lag.behind))} / ${formatCount(Math.max(...lag.behind))}`],
          ['oldest undelivered change, median / max', '', `${ms(median(lag.ageMs))} / ${ms(Math.max(...lag.ageMs))}`],
          ['caught up after the last batch', '', ms(lag.drainSeconds * 1000)],
        ],
      },
    ],
    notes: [
      'Each change is one POST, awaited, then one `saveOutbound` (the cursor, in the store) before the next: delivery to one ' +
        'endpoint is sequential by design (feed order, at least once), so its throughput is one request and one store write per ' +
        'change, and a receiver farther away than 127.0.0.1 lowers it in proportion to its round trip.',
    ],
  };
}
