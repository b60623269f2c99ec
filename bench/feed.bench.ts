// Benchmarks of the change feed and alerts (issue 26) on each store: what `applyEvents` costs with the
// feed on, and with the feed and alerts on, against the same events with both off, in the same run.
import { randomUUID } from 'node:crypto';
import { createMailwarden, createMemoryStore, type AlertRules, type Mailwarden, type Store } from '@mailwarden/core';
import { createPostgresStore, migrate } from '@mailwarden/postgres';
import { createRedisStore } from '@mailwarden/redis';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { eventBatch } from './core.bench.js';
import { measureGroup, type Measurement, type MeasureOptions } from './measure.js';
import { formatNanos, formatPercent, type BenchSuite, type ReportSection, type SuiteContext } from './report.js';
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
}

export const feedSuite: BenchSuite = {
  name: 'feed',
  async run(context) {
    const options: MeasureOptions = context.quick ? { samples: 3, operationsPerSample: 2 } : { samples: 7, operationsPerSample: 6 };
    const sections: ReportSection[] = [];
    sections.push(
      await feedSection(context, options, { name: 'Memory store', off: createMemoryStore(), on: createMemoryStore({ changes: {} }) }),
    );

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
      );
    } finally {
      await client.quit();
      await redisServer.stop();
    }

    const pgServer = await startServer('postgres', context);
    const schema = 'mailwarden_bench_feed';
    const sql = postgres(pgServer.url, { max: 1, onnotice: () => {} });
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
    } finally {
      await sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
      await sql.end();
      await pgServer.stop();
    }
    return sections;
  },
};

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
  const page = await subject.on.listChanges('feed-on', { after: 0, limit: 1 });

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
    ],
  };
}
