// Benchmarks of the soft-bounce rule (issue 25) on each store: what `applyEvents` costs with the rule on
// against the same events with it off, in the same run, and the bytes the rule keeps per address.
import { randomUUID } from 'node:crypto';
import {
  createMailwarden,
  createMemoryStore,
  type DeliveryEvent,
  type Mailwarden,
  type Store,
  type SuppressionRules,
} from '@mailwarden/core';
import { createPostgresStore, migrate } from '@mailwarden/postgres';
import { createRedisStore } from '@mailwarden/redis';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { address, eventBatch, mix } from './core.bench.js';
import { liveBytes, measureGroup, type Measurement, type MeasureOptions } from './measure.js';
import { formatBytes, formatNanos, formatPercent, type BenchSuite, type ReportSection, type SuiteContext } from './report.js';
import { START, startServer } from './store-bench.js';

const EVENTS = 1000;
/** Addresses per batch of the soft-bounce burst: each gets 4 soft bounces of distinct messages, an hour apart. */
const BURST_ADDRESSES = EVENTS / 4;
/** Addresses holding history for the bytes figure: each gets 2 soft bounces (under the threshold, so all are kept). */
const HISTORY_ADDRESSES = 20_000;
const RULE: SuppressionRules = { softBounces: { bounces: 3, days: 7 } };
const RESET_RULE: SuppressionRules = { softBounces: { bounces: 3, days: 7, resetOnDelivery: true } };
const HOUR = 3_600_000;

/** A store to measure, and how to read how many bytes it holds (`undefined`: the JS heap's). */
interface Subject {
  name: string;
  store: Store;
  bytes?: () => Promise<number>;
  /** Before each measured group: what a live deployment has done by then (PostgreSQL: autovacuum's ANALYZE). */
  prepare?: () => Promise<void>;
  close: () => Promise<void>;
}

export const rulesSuite: BenchSuite = {
  name: 'rules',
  async run(context) {
    const options: MeasureOptions = context.quick ? { samples: 3, operationsPerSample: 2 } : { samples: 7, operationsPerSample: 6 };
    const sections: ReportSection[] = [];
    const memory = createMemoryStore();
    sections.push(await ruleSection(context, options, { name: 'Memory store', store: memory, close: () => memory.close() }));

    const redisServer = await startServer('redis', context);
    const client = new Redis(redisServer.url);
    try {
      const store = createRedisStore({ client, keyPrefix: `bench:${randomUUID()}:` });
      const usedMemory = async () => Number(/^used_memory:(\d+)/m.exec(await client.info('memory'))![1]);
      sections.push(await ruleSection(context, options, { name: 'Redis store', store, bytes: usedMemory, close: async () => {} }));
    } finally {
      await client.quit();
      await redisServer.stop();
    }

    const pgServer = await startServer('postgres', context);
    const schema = 'mailwarden_bench_rules';
    const sql = postgres(pgServer.url, { max: 1, onnotice: () => {} });
    try {
      await sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await migrate(sql, { schema });
      const store = createPostgresStore({ sql, schema });
      // Every table and index of the schema, after VACUUM so freed space is not counted as held.
      const relationBytes = async () => {
        await sql.unsafe('VACUUM');
        const [row] = await sql`
          SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = ${schema} AND c.relkind = 'r'`;
        return Number(row!.bytes);
      };
      // Statistics as autovacuum keeps them on a live database, of tables already holding a project's
      // worth of events: on tables never analyzed, or analyzed while empty, the functions' cached plans
      // may read an address's row through a listing index (docs/storage.md, "PostgreSQL at scale").
      const filler = createMailwarden({ store, rules: RULE, now: () => START + 400 * 60_000 });
      for (let b = 0; b < 40; b++) {
        await filler.applyEvents('filler', eventBatch(100_000 + b, START + b * 60_000));
        await filler.applyEvents('filler', burstBatch(100_000 + b, START + b * 60_000));
      }
      const analyze = async () => void (await sql.unsafe('ANALYZE'));
      sections.push(
        await ruleSection(context, options, {
          name: 'PostgreSQL store',
          store,
          bytes: relationBytes,
          prepare: analyze,
          close: async () => {},
        }),
      );
    } finally {
      await sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
      await sql.end();
      await pgServer.stop();
    }
    return sections;
  },
};

/** Batch `b` of the burst: `BURST_ADDRESSES` new addresses, 4 soft bounces each, of distinct messages, an hour apart. */
function burstBatch(b: number, start: number): DeliveryEvent[] {
  const events: DeliveryEvent[] = [];
  for (let a = 0; a < BURST_ADDRESSES; a++) {
    const recipient = address(20_000_000 + b * BURST_ADDRESSES + a);
    for (let k = 0; k < 4; k++) {
      events.push({
        provider: 'sendgrid',
        type: 'bounced',
        bounceClass: 'soft',
        messageId: `burst-${b}-${a}-${k}`,
        recipient,
        trackingId: 'newsletter',
        occurredAt: new Date(start + k * HOUR + a),
        eventKey: `burst-${b}-${a}-${k}`,
        description: '452 4.2.2 Mailbox full',
      });
    }
  }
  return events;
}

/** Two soft bounces to each of `count` addresses (from `first`), a day apart: history the rule keeps, no suppression. */
function historyEvents(first: number, count: number, start: number, tag: string): DeliveryEvent[] {
  const events: DeliveryEvent[] = [];
  for (let a = 0; a < count; a++) {
    const recipient = address(first + a);
    for (let k = 0; k < 2; k++) {
      events.push({
        provider: 'sendgrid',
        type: 'bounced',
        bounceClass: 'soft',
        messageId: `${tag}-${a}-${k}-${mix(a) % 1000}`,
        recipient,
        trackingId: 'newsletter',
        occurredAt: new Date(start + k * 24 * HOUR),
        eventKey: `${tag}-${a}-${k}`,
        description: '452 4.2.2 Mailbox full',
      });
    }
  }
  return events;
}

async function ruleSection(context: SuiteContext, options: MeasureOptions, subject: Subject): Promise<ReportSection> {
  // The clock follows the events, as a live service's does: the rule forgets history older than its window.
  let clock = START;
  const now = () => clock;
  const instance = (rules?: SuppressionRules): Mailwarden => createMailwarden({ store: subject.store, now, ...(rules ? { rules } : {}) });
  const off = instance();
  const on = instance(RULE);
  const reset = instance(RESET_RULE);
  let batch = 0;
  // Each operation applies a batch never applied before, to a project of its own per case.
  const apply = (mailwarden: Mailwarden, project: string, make: (b: number, start: number) => DeliveryEvent[]) => async () => {
    const b = batch++;
    const start = START + b * 60_000;
    clock = start + 5 * HOUR;
    const result = await mailwarden.applyEvents(project, make(b, start));
    if (result.accepted !== EVENTS) throw new Error(`${subject.name}: ${result.accepted} of ${EVENTS} events accepted`);
  };
  const mostlyDelivered = (b: number, start: number) => eventBatch(b, start);

  await subject.prepare?.();
  context.log(`${subject.name}: mostly delivered…`);
  const [deliveredOff, deliveredOn, deliveredReset] = await measureGroup(
    [
      { name: 'rule off', run: apply(off, 'delivered-off', mostlyDelivered), itemsPerOp: EVENTS },
      { name: 'rule on', run: apply(on, 'delivered-on', mostlyDelivered), itemsPerOp: EVENTS },
      { name: 'rule on, reset on delivery', run: apply(reset, 'delivered-reset', mostlyDelivered), itemsPerOp: EVENTS },
    ],
    options,
  );
  await subject.prepare?.();
  context.log(`${subject.name}: burst of soft bounces…`);
  const [burstOff, burstOn] = await measureGroup(
    [
      { name: 'rule off', run: apply(off, 'burst-off', burstBatch), itemsPerOp: EVENTS },
      { name: 'rule on', run: apply(on, 'burst-on', burstBatch), itemsPerOp: EVENTS },
    ],
    options,
  );

  context.log(`${subject.name}: bytes kept per address…`);
  clock = START + 3 * 24 * HOUR;
  const held = subject.bytes ?? (async () => liveBytes().total);
  const grow = async (mailwarden: Mailwarden, project: string, tag: string) => {
    const before = await held();
    for (let first = 0; first < HISTORY_ADDRESSES; first += EVENTS / 2) {
      await mailwarden.applyEvents(project, historyEvents(30_000_000 + first, EVENTS / 2, START, `${tag}-${first}`));
    }
    return (await held()) - before;
  };
  const withoutRule = await grow(off, 'history-off', 'off');
  const withRule = await grow(on, 'history-on', 'on');
  const perAddress = (withRule - withoutRule) / HISTORY_ADDRESSES;
  await subject.close();

  const row = (what: string, ours: Measurement, base: Measurement) => [
    what,
    formatNanos(base.nsPerItem),
    formatNanos(ours.nsPerItem),
    `${formatNanos(ours.nsPerItem - base.nsPerItem)} (${(((ours.nsPerItem - base.nsPerItem) / base.nsPerItem) * 100).toFixed(0)} %)`,
    `${formatPercent(base.spread)} / ${formatPercent(ours.spread)}`,
  ];
  return {
    title: `${subject.name}: the soft-bounce rule`,
    intro: [
      `\`applyEvents\` with batches of ${EVENTS} new events, the rule off and on (\`softBounces: { bounces: 3, days: 7 }\`), ` +
        'measured in turn in the same run, each case in a project of its own. "Mostly delivered": the SendGrid-like batches of ' +
        'the `applyEvents` sections (88 % delivered, 8 % hard and 4 % soft bounces, opens and complaints). "Burst": ' +
        `${BURST_ADDRESSES} new addresses per batch, 4 soft bounces each of distinct messages an hour apart: the third suppresses, ` +
        'the fourth is not kept.',
    ],
    tables: [
      {
        columns: ['case', 'rule off, per event', 'rule on, per event', 'cost of the rule, per event', 'noise (off / on)'],
        rows: [
          row('mostly delivered', deliveredOn!, deliveredOff!),
          row('mostly delivered, reset on delivery', deliveredReset!, deliveredOff!),
          row('burst of soft bounces', burstOn!, burstOff!),
        ],
      },
      {
        columns: ['history kept', 'bytes per address'],
        rows: [[`2 soft bounces kept for each of ${HISTORY_ADDRESSES.toLocaleString('en')} addresses`, formatBytes(perAddress)]],
      },
    ],
    notes: [
      'Bytes per address: what the store held after applying the same soft bounces with the rule on, minus with it off, per ' +
        `address (${subject.bytes === undefined ? 'live JS heap after a full collection' : subject.name.startsWith('Redis') ? 'Redis `used_memory`' : "the schema's tables and indexes after VACUUM"}). ` +
        'An address holds at most `bounces − 1` soft bounces per window-length of the keep time (docs/decisions.md, "The soft-bounce rule").',
    ],
  };
}
