// Benchmarks of @mailwarden/redis, each beside the raw ioredis call it stands on, in the same run:
// checks (HGET, HMGET), list pages at depth 0 and 1 000 000, applyEvents batches, tracking-ID search
// over 100 000 IDs, and Redis memory per suppression. Uses REDIS_URL, or starts redis-server the way
// the tests do (scripts/test-services.ts).
import { hash, randomUUID } from 'node:crypto';
import { createMailwarden, normalizeEmail, type DeliveryEvent, type Store } from '@mailwarden/core';
import { Fact, createEmailHasher, messageKey, type StoredEvent } from '@mailwarden/core/store';
import { createRedisStore } from '@mailwarden/redis';
import { SUPPRESSION_BLOCK_MAX } from '../packages/redis/src/layout.js';
import { Redis } from 'ioredis';
import { address, eventBatch } from './core.bench.js';
import { goalCell, recordGoal } from './goals.js';
import { measureGroup, ratio, type BenchCase, type Measurement, type MeasureOptions } from './measure.js';
import {
  formatBytes,
  formatCount,
  formatNanos,
  formatPercent,
  formatRatio,
  type BenchSuite,
  type ReportSection,
  type SuiteContext,
} from './report.js';
import {
  BATCH,
  COMPARISON_COLUMNS,
  GOALS,
  MESSAGES,
  PAGE,
  START,
  SUPPRESSIONS,
  TRACKING_IDS,
  comparison,
  startServer,
} from './store-bench.js';

export const redisSuite: BenchSuite = {
  name: 'redis',
  async run(context) {
    const options: MeasureOptions = context.quick
      ? { warmupMs: 150, sampleMs: 100, samples: 3 }
      : { warmupMs: 300, sampleMs: 300, samples: 7 };
    const server = await startServer('redis', context);
    const client = new Redis(server.url);
    const raw = new Redis(server.url);
    try {
      const keyPrefix = `bench:${randomUUID()}:`;
      const store = createRedisStore({ client, keyPrefix });
      const sections = [
        ...(await suppressionSections(context, options, store, raw, keyPrefix)),
        await messageSection(context, options, store, client, raw, keyPrefix),
        await trackingIdSection(context, store, client, raw, keyPrefix),
      ];
      return sections;
    } finally {
      await Promise.all([client.quit(), raw.quit()]);
      await server.stop();
    }
  },
};

/** The raw floor's address hash as bytes: trim, NFC, lower-case, SHA-256 (no validation; the bench addresses are ASCII). */
const rawHashBytes = (email: string) => hash('sha256', email.trim().normalize('NFC').toLowerCase(), 'buffer');

/** Bytes per suppression the Redis store keeps at most at 1 000 000 suppressions (issue 14). */

/** layout.ts orderBytes, written here again: the bench reads the blocks by raw commands. */
function orderBytesOf(time: number): Buffer {
  const bytes = Buffer.alloc(8);
  const value = time >= 0 ? Number.MAX_SAFE_INTEGER - time : -time;
  bytes[0] = time >= 0 ? 0 : 1;
  bytes.writeUIntBE(Math.floor(value / 2 ** 32), 1, 3);
  bytes.writeUInt32BE(value % 2 ** 32, 4);
  return bytes;
}

const usedMemory = async (redis: Redis) => Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))![1]);

/** Runs `count` calls, `inFlight` at a time on one connection (ioredis pipelines them on the socket). */
async function inFlight(count: number, width: number, call: (i: number) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await call(next++);
    }),
  );
  return performance.now() - started;
}

// --- suppressions -----------------------------------------------------------------------------------

async function suppressionSections(
  context: SuiteContext,
  options: MeasureOptions,
  store: Store,
  raw: Redis,
  keyPrefix: string,
): Promise<ReportSection[]> {
  const total = context.quick ? 100_000 : SUPPRESSIONS;
  const project = 'suppressions';
  const tag = `${keyPrefix}{${project}}:`;
  const key = `${tag}s`;
  const hashEmail = createEmailHasher();
  const emails = Array.from({ length: total }, (_, i) => normalizeEmail(address(i)));
  const hashes = emails.map((email) => hashEmail(email));
  /** The HASH field of a hash, as the raw side passes it (layout.ts suppressionField): its first 30 bytes. */
  const field = (hash: string) => Buffer.from(hash.slice(0, 60), 'hex');
  /** The raw floor's field of an address: the same hash, straight to bytes. */
  const rawField = (email: string) => rawHashBytes(email).subarray(0, 30);

  context.log(`adding ${formatCount(total)} suppressions through addSuppression, 1 000 in flight…`);
  const before = await usedMemory(raw);
  const fillMs = await inFlight(total, 1000, (i) =>
    store.addSuppression(project, { hash: hashes[i]!, email: emails[i]!, reason: 'manual', createdAt: START + i }),
  );
  const bytes = (await usedMemory(raw)) - before;
  // The order blocks, named after their heads (layout.ts suppressionBlockKeyOf).
  const heads = (await raw.zrangeBuffer(`${tag}sk`, 0, -1)) as Buffer[];
  const blockOf = (head: Buffer) => Buffer.concat([Buffer.from(`${tag}sb:`), head]);
  const keysBytes = async (keys: (string | Buffer)[]) => {
    let sum = 0;
    for (let from = 0; from < keys.length; from += 1000) {
      const pipeline = raw.pipeline();
      for (const k of keys.slice(from, from + 1000)) pipeline.memory('USAGE', k, 'SAMPLES', 0);
      for (const [, usage] of (await pipeline.exec())!) sum += Number(usage);
    }
    return sum;
  };
  const hashBytes = await keysBytes([key]);
  const orderBytes = await keysBytes([`${tag}sk`, ...heads.map(blockOf)]);
  const keyBytes = hashBytes + orderBytes;

  const mailwarden = createMailwarden({ store });
  const MASK = (1 << 16) - 1;
  const pickHit = (n: number) => (Math.imul(n + 1, 0x9e3779b1) >>> 0) % total;
  const hitEmails = Array.from({ length: MASK + 1 }, (_, n) => address(pickHit(n)));
  const hitHashes = hitEmails.map((_, n) => hashes[pickHit(n)]!);
  const missHashes = Array.from({ length: MASK + 1 }, (_, n) => hashEmail(`missing-${n}@example.com`));
  const batches = Array.from({ length: 256 }, (_, b) =>
    Array.from({ length: BATCH }, (_, j) => (j % 10 === 0 ? hitHashes[(b * BATCH + j) & MASK]! : missHashes[(b * BATCH + j) & MASK]!)),
  );
  const hitFields = hitHashes.map(field);
  const missFields = missHashes.map(field);
  const batchFields = batches.map((batch) => batch.map(field));
  const batchEmails = batches.map((batch, b) =>
    batch.map((_, j) => (j % 10 === 0 ? hitEmails[(b * BATCH + j) & MASK]! : `missing-${j}@example.com`)),
  );
  if (
    (await store.getSuppression(project, hitHashes[7]!)) === undefined ||
    !(await mailwarden.suppressions.check(project, hitEmails[7]!)).suppressed
  ) {
    throw new Error('bench: a stored address is not found');
  }

  let n = 0;
  const group = (cases: BenchCase<void>[]) => measureGroup(cases, options);
  context.log('checks…');
  const [checkHit, rawHit] = await group([
    { name: 'check', run: () => mailwarden.suppressions.check(project, hitEmails[n++ & MASK]!) },
    { name: 'hash + HGET', run: () => raw.hget(key, rawField(hitEmails[n++ & MASK]!)) },
  ]);
  const [getHit, rawHit2] = await group([
    { name: 'getSuppression', run: () => store.getSuppression(project, hitHashes[n++ & MASK]!) },
    { name: 'HGET', run: () => raw.hget(key, hitFields[n++ & MASK]!) },
  ]);
  const [getMiss, rawMiss] = await group([
    { name: 'getSuppression, miss', run: () => store.getSuppression(project, missHashes[n++ & MASK]!) },
    { name: 'HGET, miss', run: () => raw.hget(key, missFields[n++ & MASK]!) },
  ]);
  const [checkMany, rawMany] = await group([
    { name: 'checkMany', run: () => mailwarden.suppressions.checkMany(project, batchEmails[n++ & 255]!) },
    { name: 'hash + HMGET', run: () => raw.hmget(key, ...batchEmails[n++ & 255]!.map(rawField)) },
  ]);
  const [getMany, rawMany2] = await group([
    { name: 'getSuppressions', run: () => store.getSuppressions(project, batches[n++ & 255]!) },
    { name: 'HMGET', run: () => raw.hmget(key, ...batchFields[n++ & 255]!) },
  ]);

  context.log('list pages at depth 0 and 1 000 000…');
  // Newest first, suppression i at depth total − 1 − i: the deep cursor is the one just before the last page.
  const deep = { createdAt: START + PAGE, hash: hashes[PAGE]! };
  const deepMember = Buffer.concat([orderBytesOf(deep.createdAt), Buffer.from(deep.hash, 'hex')]);
  // The raw side reads the block that holds each cursor (found here, untimed).
  const deepHead = (
    (await raw.zrangeBuffer(`${tag}sk`, Buffer.concat([Buffer.from('['), deepMember]), '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)) as Buffer[]
  )[0]!;
  const [firstBlock, deepBlock] = [blockOf(Buffer.alloc(0)), blockOf(deepHead)];
  const afterDeep = Buffer.concat([Buffer.from('('), deepMember]);
  if ((await store.listSuppressions(project, { limit: PAGE, after: deep })).length !== PAGE)
    throw new Error('bench: the deep page is short');
  const [first, deepPage, rawFirst, rawDeep] = await group([
    { name: 'page at depth 0', run: () => store.listSuppressions(project, { limit: PAGE }) },
    { name: `page at depth ${total - PAGE}`, run: () => store.listSuppressions(project, { limit: PAGE, after: deep }) },
    { name: 'ZRANGE BYLEX at depth 0', run: () => raw.zrangeBuffer(firstBlock, '-', '+', 'BYLEX', 'LIMIT', 0, PAGE) },
    { name: 'ZRANGE BYLEX deep', run: () => raw.zrangeBuffer(deepBlock, afterDeep, '+', 'BYLEX', 'LIMIT', 0, PAGE) },
  ]);
  const deepOverFirst = 1 / ratio(deepPage!, first!);

  for (let from = 0; from < heads.length; from += 1000) await raw.unlink(...heads.slice(from, from + 1000).map(blockOf));
  await raw.unlink(key, `${tag}sk`);
  const perSuppression = bytes / total;
  recordGoal('redis bytes', perSuppression);
  return [
    {
      title: `Redis store: suppression checks and pages, ${formatCount(total)} suppressions in one project`,
      intro: [
        `One Redis ${await serverVersion(raw)} on this machine (loopback TCP), one ioredis connection for the store ` +
          `and another for the raw calls, each call awaited before the next: the figures are round-trip ` +
          `latencies. The raw call is the single command a store cannot do without: \`HGET\` of the hash ` +
          `(check), \`HMGET\` of ${BATCH} hashes (batch check, 10 hits), \`ZRANGE … BYLEX LIMIT\` of the order ` +
          `index (a page, without the records). "check" and "checkMany" go through the service (validate, ` +
          `normalize, hash, store), so their raw side hashes too (trim, NFC, lower-case, SHA-256, no validation); ` +
          `\`getSuppression(s)\` are the store alone against the bare command (\`HGET\`/\`HMGET\` of the binary fields, ` +
          `and \`ZRANGE … BYLEX\` of the order block that holds the cursor). Goals: a check within ${formatRatio(GOALS.single)} ` +
          `of the raw round trip, a batch within ${formatRatio(GOALS.batch)}, a page at depth ${formatCount(total)} ` +
          `within ${formatRatio(GOALS.deep)} of the first page.`,
      ],
      tables: [
        {
          columns: COMPARISON_COLUMNS,
          rows: [
            comparison('`suppressions.check` (hit) vs hash + HGET', checkHit!, rawHit!, GOALS.single),
            comparison('`getSuppression` (hit) vs HGET', getHit!, rawHit2!, GOALS.single),
            comparison('`getSuppression` (miss) vs HGET', getMiss!, rawMiss!, GOALS.single),
            comparison(`\`suppressions.checkMany\` of ${BATCH} vs hash + HMGET`, checkMany!, rawMany!, GOALS.batch),
            comparison(`\`getSuppressions\` of ${BATCH} vs HMGET`, getMany!, rawMany2!, GOALS.batch),
            comparison(`\`listSuppressions\` page of ${PAGE}, depth 0 vs ZRANGE BYLEX`, first!, rawFirst!, undefined),
            comparison(
              `\`listSuppressions\` page of ${PAGE}, depth ${formatCount(total - PAGE)} vs ZRANGE BYLEX`,
              deepPage!,
              rawDeep!,
              undefined,
            ),
          ],
        },
        {
          columns: ['pagination', 'depth 0', `depth ${formatCount(total - PAGE)}`, 'deep / first (time)', 'goal'],
          rows: [
            [
              `\`listSuppressions\`, ${PAGE} per page (one EVALSHA_RO: ZRANGE BYLEX + HMGET)`,
              formatNanos(first!.nsPerOp),
              formatNanos(deepPage!.nsPerOp),
              formatRatio(deepOverFirst),
              `≤ ${formatRatio(GOALS.deep)} ${deepOverFirst <= GOALS.deep ? 'met' : '**missed**'}`,
            ],
          ],
        },
      ],
    },
    {
      title: `Redis store: memory per suppression, ${formatCount(total)} suppressions`,
      intro: [
        `Filled through \`addSuppression\` (the real script, EVALSHA), 1 000 calls in flight on one connection: ` +
          `${formatCount(total)} adds in ${(fillMs / 1000).toFixed(1)} s (${formatCount((total * 1000) / fillMs)} adds/s). ` +
          `Each suppression is one field of one HASH (the hash's first 30 bytes, binary → \`<reason rank><createdAt>:<email>\`) ` +
          `and one member (8 order bytes + the 32 bytes of the hash) of an order block, a ZSET of at most ${SUPPRESSION_BLOCK_MAX} ` +
          `that stays a listpack; ${formatCount(heads.length)} blocks, named in a ZSET of heads. Addresses like \`${address(123456)}\`. ` +
          `Goal: at most 200 bytes per suppression by \`INFO memory\` (the release before the blocks took 358).`,
      ],
      tables: [
        {
          columns: ['measure', 'total', 'bytes per suppression', 'goal'],
          rows: [
            [
              '`INFO memory` used_memory, after − before',
              formatBytes(bytes),
              perSuppression.toFixed(1),
              goalCell('redis bytes', perSuppression),
            ],
            ['`MEMORY USAGE` of the HASH', formatBytes(hashBytes), (hashBytes / total).toFixed(1), '—'],
            [
              `\`MEMORY USAGE\` of the order: heads + ${formatCount(heads.length)} blocks`,
              formatBytes(orderBytes),
              (orderBytes / total).toFixed(1),
              '—',
            ],
            ['`MEMORY USAGE`, all (SAMPLES 0)', formatBytes(keyBytes), (keyBytes / total).toFixed(1), '—'],
          ],
        },
      ],
    },
  ];
}

async function serverVersion(redis: Redis): Promise<string> {
  return /^redis_version:(\S+)/m.exec(await redis.info('server'))?.[1] ?? '?';
}

// --- messages: ingest and deep pages ----------------------------------------------------------------

/** A minimal event about a new message: the filler of the deep-page index. */
function fillerEvent(i: number): StoredEvent {
  const messageId = `filler-${i}`;
  const recipient = `r${i}@example.com`;
  const time = START - i * 1000;
  return {
    key: `sendgrid:filler-${i}`,
    message: {
      key: messageKey('sendgrid', messageId, recipient),
      provider: 'sendgrid',
      messageId,
      recipient,
      trackingId: `campaign-${i % 10}`,
      stream: null,
      facts: Fact.delivered,
      firstEventAt: time,
      lastEventAt: time,
    },
    trackingIdSearchKey: `campaign-${i % 10}`,
    suppression: null,
  };
}

/** The least a store must write per event, as one pipeline: dedup, message, order, tracking-ID index, row. */
function rawIngest(raw: Redis, prefix: string, events: readonly DeliveryEvent[]): Promise<unknown> {
  const pipeline = raw.pipeline();
  for (const event of events) {
    const key = messageKey(event.provider, event.messageId!, event.recipient);
    const time = event.occurredAt.getTime();
    const member = `${String(Number.MAX_SAFE_INTEGER - time).padStart(17, '0')}${key}`;
    pipeline.set(`${prefix}e:${event.eventKey}`, '1', 'NX');
    pipeline.hset(
      `${prefix}m:${key}`,
      'p',
      event.provider,
      'i',
      event.messageId!,
      'r',
      event.recipient,
      't',
      event.trackingId!,
      'f',
      4,
      'a',
      time,
      'b',
      time,
    );
    pipeline.zadd(`${prefix}mo`, 0, member);
    pipeline.zadd(`${prefix}mt:${event.trackingId}`, 0, member);
    pipeline.hset(`${prefix}t`, event.trackingId!, `1,1,0,0,${time},${event.trackingId}`);
  }
  return pipeline.exec();
}

async function messageSection(
  context: SuiteContext,
  options: MeasureOptions,
  store: Store,
  client: Redis,
  raw: Redis,
  keyPrefix: string,
): Promise<ReportSection> {
  const mailwarden = createMailwarden({ store });
  const batchOptions: MeasureOptions = context.quick ? { samples: 3, operationsPerSample: 2 } : { samples: 5, operationsPerSample: 5 };
  let next = 0;
  let rawNext = 500_000;
  context.log('applyEvents batches of 1 000…');
  const [ours, rawFloor] = await measureGroup(
    [
      {
        name: 'applyEvents',
        itemsPerOp: 1000,
        setup: () => eventBatch(next++),
        run: async (batch: DeliveryEvent[]) => {
          const result = await mailwarden.applyEvents('ingest', batch);
          if (result.accepted !== batch.length) throw new Error(`bench: ${result.accepted} of ${batch.length} accepted`);
        },
      },
      {
        name: 'raw pipeline',
        itemsPerOp: 1000,
        setup: () => eventBatch(rawNext++),
        run: (batch: DeliveryEvent[]) => rawIngest(raw, `${keyPrefix}{raw-ingest}:`, batch),
      },
    ],
    batchOptions,
  );
  const perCall = await scriptCallTimes(client, raw, context.quick ? 5 : 20, (timed) =>
    createMailwarden({ store: createRedisStore({ client: timed, keyPrefix }) }).applyEvents('ingest', eventBatch(next++)),
  );
  const duplicateBatch = eventBatch(0);
  const [duplicates] = await measureGroup(
    [{ name: 'duplicates', itemsPerOp: 1000, run: () => mailwarden.applyEvents('ingest', duplicateBatch) }],
    { ...options, samples: 5 },
  );

  const project = 'messages';
  const messages = context.quick ? 20_000 : MESSAGES;
  context.log(`filling a project with ${formatCount(messages)} messages (batches of 1 000)…`);
  const fillStarted = performance.now();
  for (let from = 0; from < messages; from += 1000) {
    await store.applyEvents(
      project,
      Array.from({ length: 1000 }, (_, j) => fillerEvent(from + j)),
    );
  }
  const fillMs = performance.now() - fillStarted;
  const deepEvent = fillerEvent(messages - PAGE - 1).message!;
  const deep = { firstEventAt: deepEvent.firstEventAt, key: deepEvent.key };
  if ((await store.listMessages(project, { limit: PAGE, after: deep })).length !== PAGE)
    throw new Error('bench: the deep message page is short');
  context.log('message pages…');
  const [first, deepPage, firstDelivered, deepDelivered] = await measureGroup(
    [
      { name: 'first', run: () => store.listMessages(project, { limit: PAGE }) },
      { name: 'deep', run: () => store.listMessages(project, { limit: PAGE, after: deep }) },
      { name: 'first, delivered', run: () => store.listMessages(project, { limit: PAGE, status: 'delivered' }) },
      { name: 'deep, delivered', run: () => store.listMessages(project, { limit: PAGE, status: 'delivered', after: deep }) },
    ],
    options,
  );
  const deepOverFirst = 1 / ratio(deepPage!, first!);
  const deepOverFirstFiltered = 1 / ratio(deepDelivered!, firstDelivered!);
  const memory = Number(await raw.memory('USAGE', `${keyPrefix}{${project}}:mo`, 'SAMPLES', 0));

  const eventsPerCall = formatCount((perCall.batches * 1000) / perCall.calls);
  const perCallRow = [
    `${formatCount(perCall.calls / perCall.batches)} per batch`,
    formatNanos(perCall.meanNs),
    formatNanos(perCall.maxNs),
    goalCell('redis applyEvents hold', perCall.maxNs / 1e6),
  ];
  recordGoal('redis applyEvents hold', perCall.maxNs / 1e6, `${formatNanos(perCall.meanNs)} mean, calls of ${eventsPerCall} events`);
  const row = (what: string, m: Measurement, goal = '—') => [
    what,
    formatCount(m.itemsPerSecond),
    formatNanos(m.nsPerItem),
    formatNanos(m.nsPerOp),
    goal,
    formatPercent(m.spread),
  ];
  const versus = 1 / ratio(ours!, rawFloor!);
  return {
    title: 'Redis store: `applyEvents` and message pages',
    intro: [
      `\`mailwarden.applyEvents\` (service + store: one EVALSHA per ${eventsPerCall} events, awaited in turn) with the batches of the memory-store ` +
        `benchmark: 1 000 SendGrid-like events about new messages over 10 tracking IDs. The raw floor is one ` +
        `ioredis pipeline per batch of the writes no store can skip, per event: \`SET NX\` of the dedup key, ` +
        `\`HSET\` of the message, \`ZADD\` to the project's and the tracking ID's order, \`HSET\` of the row; ` +
        `no reads, no merge, no counters, no suppressions.`,
      `Pages: a project filled with ${formatCount(messages)} messages through \`applyEvents\` ` +
        `(${formatCount((messages * 1000) / fillMs)} events/s, minimal events: one new message each), then a ` +
        `page of ${PAGE} at the newest end and one ${formatCount(messages - PAGE)} entries in. The order index is ` +
        `${formatBytes(memory)} (${(memory / messages).toFixed(0)} bytes per message).`,
    ],
    tables: [
      {
        columns: ['case', 'events/s', 'per event', 'per batch', 'goal', 'noise'],
        rows: [
          row('`applyEvents`, 1 000 new events', ours!, `raw / ours: ${formatRatio(versus)}`),
          row('raw pipeline, 1 000 events', rawFloor!),
          row('`applyEvents`, the same 1 000 events again (duplicates)', duplicates!),
        ],
      },
      {
        columns: ['`applyEvents` script calls', 'Redis per call, mean', 'Redis per call, max', 'goal'],
        rows: [perCallRow],
      },
      {
        columns: ['`listMessages`, page of 51', 'depth 0', `depth ${formatCount(messages - PAGE)}`, 'deep / first (time)', 'goal'],
        rows: [
          [
            'no filter',
            formatNanos(first!.nsPerOp),
            formatNanos(deepPage!.nsPerOp),
            formatRatio(deepOverFirst),
            `≤ ${formatRatio(GOALS.deep)} ${deepOverFirst <= GOALS.deep ? 'met' : '**missed**'}`,
          ],
          [
            'status = delivered (all match)',
            formatNanos(firstDelivered!.nsPerOp),
            formatNanos(deepDelivered!.nsPerOp),
            formatRatio(deepOverFirstFiltered),
            `≤ ${formatRatio(GOALS.deep)} ${deepOverFirstFiltered <= GOALS.deep ? 'met' : '**missed**'}`,
          ],
        ],
      },
    ],
    notes: [
      `Ingest time is mostly Redis running the script. A batch goes out as calls of ${eventsPerCall} events, ` +
        `each awaited before the next is sent, so other clients' commands run between them: "Redis per call" ` +
        `is the server's own time per script call over ${formatCount(perCall.batches)} further batches (INFO ` +
        `commandstats, cmdstat_evalsha usec, read before and after each call), which is how long one call holds Redis.`,
    ],
  };
}

/**
 * Server time of each EVALSHA `run` sends through `client`, from INFO commandstats read before and
 * after each call on `raw` (the store awaits its calls in turn, and nothing else sends EVALSHA here).
 */
async function scriptCallTimes(client: Redis, raw: Redis, batches: number, run: (client: Redis) => Promise<unknown>) {
  const micros: number[] = [];
  const timed = new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'evalsha' && property !== 'evalsha_ro') return Reflect.get(target, property, receiver);
      return async (...args: Parameters<Redis['evalsha']>) => {
        const before = await scriptStats(raw, property);
        const reply = await target[property](...args);
        micros.push((await scriptStats(raw, property)).usec - before.usec);
        return reply;
      };
    },
  });
  for (let i = 0; i < batches; i++) await run(timed);
  return {
    batches,
    calls: micros.length,
    meanNs: (micros.reduce((sum, us) => sum + us, 0) * 1000) / micros.length,
    maxNs: Math.max(...micros) * 1000,
  };
}

// --- tracking-ID search -----------------------------------------------------------------------------

/** Calls and microseconds Redis spent in a command so far (INFO commandstats). */
async function scriptStats(redis: Redis, command: 'evalsha' | 'evalsha_ro'): Promise<{ calls: number; usec: number }> {
  const match = new RegExp(`^cmdstat_${command}:calls=(\\d+),usec=(\\d+)`, 'm').exec(await redis.info('commandstats'));
  return { calls: Number(match?.[1] ?? 0), usec: Number(match?.[2] ?? 0) };
}

async function trackingIdSection(
  context: SuiteContext,
  store: Store,
  client: Redis,
  raw: Redis,
  keyPrefix: string,
): Promise<ReportSection> {
  const project = 'tracking-ids';
  const count = context.quick ? 10_000 : TRACKING_IDS;
  context.log(`${formatCount(count)} tracking IDs…`);
  for (let from = 0; from < count; from += 1000) {
    await store.applyEvents(
      project,
      Array.from({ length: 1000 }, (_, j) => {
        const i = from + j;
        const trackingId = `Campaign-${String(i).padStart(6, '0')}-${['spring', 'summer', 'autumn', 'winter'][i % 4]}-${i % 97}`;
        const event = fillerEvent(10_000_000 + i);
        return { ...event, message: { ...event.message!, trackingId }, trackingIdSearchKey: trackingId.toLowerCase() };
      }),
    );
  }
  const wide = createRedisStore({ client, keyPrefix, scanBudget: count });
  const cases: [string, { search?: string }][] = [
    ['no search (first page)', {}],
    ['`winter`: a quarter of the IDs match', { search: 'winter' }],
    ['`-96`: 1 in 97 match (about 5 000 IDs read)', { search: '-96' }],
    ['`099999-w`: one match, the last ID (all read)', { search: '099999-w' }],
    ['`zzz`: no match (all read)', { search: 'zzz' }],
  ];
  const rows: string[][] = [];
  for (const [what, query] of cases) {
    const [narrow, oneCall] = await measureGroup(
      [
        { name: 'default budget', run: () => store.listTrackingIds(project, { limit: PAGE, ...query }) },
        { name: 'one call', run: () => wide.listTrackingIds(project, { limit: PAGE, ...query }) },
      ],
      context.quick ? { warmupMs: 100, sampleMs: 200, samples: 3 } : { warmupMs: 300, sampleMs: 600, samples: 5 },
    );
    let found = 0;
    const perCall = await scriptCallTimes(client, raw, 5, async (timed) => {
      found = (await createRedisStore({ client: timed, keyPrefix }).listTrackingIds(project, { limit: PAGE, ...query })).length;
    });
    if (query.search === 'zzz')
      recordGoal('redis search no match', narrow!.nsPerOp / 1e6, `${perCall.calls / perCall.batches} script calls`);
    rows.push([
      what,
      String(found),
      formatNanos(narrow!.nsPerOp),
      String(perCall.calls / perCall.batches),
      formatNanos(perCall.meanNs),
      formatNanos(perCall.maxNs),
      formatNanos(oneCall!.nsPerOp),
    ]);
  }
  return {
    title: `Redis store: tracking-ID search, ${formatCount(count)} tracking IDs in one project`,
    intro: [
      `\`listTrackingIds\` with a page of ${PAGE}, IDs like \`Campaign-012345-winter-27\`, stored through ` +
        `\`applyEvents\`. A search is a read-only script that walks the search blocks (the search keys of about ` +
        `200 consecutive IDs in one string): one plain find per block, and only a block that may hold a match ` +
        `has its IDs read from the ID order and tested one by one, until the page is full. With the default ` +
        `\`scanBudget\` one call passes at most 20 000 IDs and the next call resumes there; "Redis per call" is ` +
        `the server's own time per script call (INFO commandstats, read before and after each call), which is ` +
        `how long each call holds Redis. Goal: a page of no match within 20 ms. The last column passes all ` +
        `${formatCount(count)} IDs in one call (\`scanBudget: ${count}\`).`,
    ],
    tables: [
      {
        columns: ['search', 'rows', 'per page', 'script calls', 'Redis per call, mean', 'Redis per call, max', `per page, one call`],
        rows,
      },
    ],
  };
}
