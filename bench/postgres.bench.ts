// Benchmarks of @mailwarden/postgres, each beside the raw postgres.js call it stands on, in the same run:
// checks (point SELECT, = ANY), list pages at depth 0 and 1 000 000, applyEvents batches, tracking-ID
// search over 100 000 IDs, and bytes per suppression. Uses DATABASE_URL, or starts PostgreSQL the way
// the tests do (scripts/test-services.ts).
import { createMailwarden, normalizeEmail, type DeliveryEvent, type Store } from '@mailwarden/core';
import { createEmailHasher, messageKey, timelineEntryId } from '@mailwarden/core/store';
import { createPostgresStore, migrate } from '@mailwarden/postgres';
import postgres, { type Sql } from 'postgres';
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
  rawHash,
  startServer,
} from './store-bench.js';

const SCHEMA = 'mailwarden_bench';

export const postgresSuite: BenchSuite = {
  name: 'postgres',
  async run(context) {
    const options: MeasureOptions = context.quick
      ? { warmupMs: 150, sampleMs: 100, samples: 3 }
      : { warmupMs: 300, sampleMs: 300, samples: 7 };
    const server = await startServer('postgres', context);
    // One connection each, so every call is one round trip on a warm connection, as in the Redis suite.
    const client = postgres(server.url, { max: 1, onnotice: () => {} });
    const raw = postgres(server.url, { max: 1, onnotice: () => {} });
    try {
      await raw.unsafe(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      await migrate(raw, { schema: SCHEMA });
      const store = createPostgresStore({ sql: client, schema: SCHEMA });
      const version = (await raw`SHOW server_version`)[0]!.server_version as string;
      return [
        ...(await suppressionSections(context, options, store, raw, version)),
        await messageSection(context, options, store, raw),
        await trackingIdSection(context, store),
      ];
    } finally {
      await raw.unsafe(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => {});
      await Promise.all([client.end(), raw.end()]);
      await server.stop();
    }
  },
};

/** The raw floor's address hash: trim, NFC, lower-case, SHA-256 (no validation; the bench addresses are ASCII). */

/** Shared buffers an EXPLAIN ANALYZE of `text` touched (hit + read): the work of a query, whatever the clock says. */
async function buffersOf(sql: Sql, text: string, params: unknown[]): Promise<number> {
  const rows = await sql.unsafe(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) ${text}`, params as never[]);
  const line = rows.map((row) => row['QUERY PLAN'] as string).find((text) => text.includes('Buffers:')) ?? '';
  return [...line.matchAll(/(?:hit|read)=(\d+)/g)].reduce((total, match) => total + Number(match[1]), 0);
}

// --- suppressions -----------------------------------------------------------------------------------

async function suppressionSections(
  context: SuiteContext,
  options: MeasureOptions,
  store: Store,
  raw: Sql,
  version: string,
): Promise<ReportSection[]> {
  const total = context.quick ? 100_000 : SUPPRESSIONS;
  const project = 'suppressions';
  const table = `${SCHEMA}.suppressions`;
  const hashEmail = createEmailHasher();
  const emails = Array.from({ length: total }, (_, i) => normalizeEmail(address(i)));
  const hashes = emails.map((email) => hashEmail(email));

  // Bulk-loaded in hash order (the primary key's), 50 000 rows a statement: adding a million through
  // addSuppression would take minutes and measure nothing the checks below do not.
  context.log(`loading ${formatCount(total)} suppressions…`);
  const order = hashes.map((_, i) => i).sort((a, b) => (hashes[a]! < hashes[b]! ? -1 : 1));
  const fillStarted = performance.now();
  for (let from = 0; from < total; from += 50_000) {
    const chunk = order.slice(from, from + 50_000);
    await raw.unsafe(
      `INSERT INTO ${table} (project_id, hash, email, reason, created_at)
       SELECT $1, hash, email, 1, created_at FROM jsonb_to_recordset($2::text::jsonb) AS r(hash text, email text, created_at bigint)`,
      [project, JSON.stringify(chunk.map((i) => ({ hash: hashes[i], email: emails[i], created_at: START + i })))],
    );
  }
  const fillMs = performance.now() - fillStarted;
  await raw.unsafe(`VACUUM ANALYZE ${table}`);
  const [sizes] = await raw.unsafe(
    `SELECT pg_relation_size($1) AS heap, pg_indexes_size($1) AS indexes, pg_total_relation_size($1) AS total`,
    [table],
  );
  const indexSizes = await raw.unsafe(
    `SELECT c.relname AS name, pg_relation_size(c.oid) AS bytes FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = $1::regclass ORDER BY 1`,
    [table],
  );

  const mailwarden = createMailwarden({ store });
  const MASK = (1 << 16) - 1;
  const pickHit = (n: number) => (Math.imul(n + 1, 0x9e3779b1) >>> 0) % total;
  const hitEmails = Array.from({ length: MASK + 1 }, (_, n) => address(pickHit(n)));
  const hitHashes = hitEmails.map((_, n) => hashes[pickHit(n)]!);
  const missHashes = Array.from({ length: MASK + 1 }, (_, n) => hashEmail(`missing-${n}@example.com`));
  const batches = Array.from({ length: 256 }, (_, b) =>
    Array.from({ length: BATCH }, (_, j) => (j % 10 === 0 ? hitHashes[(b * BATCH + j) & MASK]! : missHashes[(b * BATCH + j) & MASK]!)),
  );
  const batchEmails = batches.map((batch, b) =>
    batch.map((_, j) => (j % 10 === 0 ? hitEmails[(b * BATCH + j) & MASK]! : `missing-${j}@example.com`)),
  );
  if (
    (await store.getSuppression(project, hitHashes[7]!)) === undefined ||
    !(await mailwarden.suppressions.check(project, hitEmails[7]!)).suppressed
  ) {
    throw new Error('bench: a stored address is not found');
  }

  // The raw calls: the statement any implementation sends, as a postgres.js tagged template (prepared).
  const s = raw(SCHEMA);
  const rawGet = (hash: string) =>
    raw`SELECT hash, email, reason, created_at FROM ${s}.suppressions WHERE project_id = ${project} AND hash = ${hash} AND stream = ''`;
  const rawGetMany = (list: string[]) =>
    raw`SELECT hash, email, reason, created_at FROM ${s}.suppressions WHERE project_id = ${project} AND hash = ANY(${raw.array(list)}::text[]) AND stream = ''`;

  let n = 0;
  const group = (cases: BenchCase<void>[]) => measureGroup(cases, options);
  context.log('checks…');
  const [checkHit, rawHit] = await group([
    { name: 'check', run: () => mailwarden.suppressions.check(project, hitEmails[n++ & MASK]!) },
    { name: 'hash + SELECT', run: () => rawGet(rawHash(hitEmails[n++ & MASK]!)) },
  ]);
  const [getHit, rawHit2] = await group([
    { name: 'getSuppression', run: () => store.getSuppression(project, hitHashes[n++ & MASK]!) },
    { name: 'SELECT', run: () => rawGet(hitHashes[n++ & MASK]!) },
  ]);
  const [getMiss, rawMiss] = await group([
    { name: 'getSuppression, miss', run: () => store.getSuppression(project, missHashes[n++ & MASK]!) },
    { name: 'SELECT, miss', run: () => rawGet(missHashes[n++ & MASK]!) },
  ]);
  const [checkMany, rawMany] = await group([
    { name: 'checkMany', run: () => mailwarden.suppressions.checkMany(project, batchEmails[n++ & 255]!) },
    { name: 'hash + = ANY', run: () => rawGetMany(batchEmails[n++ & 255]!.map(rawHash)) },
  ]);
  const [getMany, rawMany2] = await group([
    { name: 'getSuppressions', run: () => store.getSuppressions(project, batches[n++ & 255]!) },
    { name: '= ANY', run: () => rawGetMany(batches[n++ & 255]!) },
  ]);

  context.log('list pages at depth 0 and 1 000 000…');
  const [deepRow] = await raw.unsafe(
    `SELECT created_at::float8 AS created_at, hash FROM ${table} WHERE project_id = $1 AND stream = '' ORDER BY -created_at, hash OFFSET $2 LIMIT 1`,
    [project, total - PAGE - 1],
  );
  const deep = { createdAt: deepRow!.created_at as number, hash: deepRow!.hash as string };
  if ((await store.listSuppressions(project, { limit: PAGE, after: deep })).length !== PAGE)
    throw new Error('bench: the deep page is short');
  const firstSql = `SELECT hash, email, reason, created_at FROM ${table} WHERE project_id = $1 AND stream = '' ORDER BY -created_at, hash LIMIT $2`;
  const deepSql = `SELECT hash, email, reason, created_at FROM ${table}
    WHERE project_id = $1 AND stream = '' AND (-created_at, hash) > ($2::bigint, $3) ORDER BY -created_at, hash LIMIT $4`;
  const offsetSql = `SELECT hash, email, reason, created_at FROM ${table} WHERE project_id = $1 AND stream = '' ORDER BY -created_at, hash OFFSET $2 LIMIT $3`;
  const [first, deepPage, rawFirst, rawDeep] = await group([
    { name: 'page at depth 0', run: () => store.listSuppressions(project, { limit: PAGE }) },
    { name: `page at depth ${total - PAGE}`, run: () => store.listSuppressions(project, { limit: PAGE, after: deep }) },
    { name: 'keyset SELECT at depth 0', run: () => raw.unsafe(firstSql, [project, PAGE], { prepare: true }) },
    { name: 'keyset SELECT deep', run: () => raw.unsafe(deepSql, [project, -deep.createdAt, deep.hash, PAGE], { prepare: true }) },
  ]);
  const [offsetDeep] = await measureGroup(
    [{ name: 'OFFSET deep', run: () => raw.unsafe(offsetSql, [project, total - PAGE, PAGE], { prepare: true }) }],
    { warmupMs: 0, sampleMs: 1, samples: 3 },
  );
  const deepOverFirst = 1 / ratio(deepPage!, first!);
  const firstBuffers = await buffersOf(raw, firstSql, [project, PAGE]);
  const deepBuffers = await buffersOf(raw, deepSql, [project, -deep.createdAt, deep.hash, PAGE]);

  return [
    {
      title: `Postgres store: suppression checks and pages, ${formatCount(total)} suppressions in one project`,
      intro: [
        `One PostgreSQL ${version} on this machine (loopback TCP, started as the tests start it: fsync off), one ` +
          `postgres.js connection for the store and another for the raw calls, each call awaited before the ` +
          `next: the figures are round-trip latencies. The raw call is the statement a store cannot do without, ` +
          `as a postgres.js tagged template (prepared): a point \`SELECT\` by (project_id, hash) (check), ` +
          `\`hash = ANY($2)\` of ${BATCH} hashes (batch check, 10 hits), the keyset \`SELECT … ORDER BY ` +
          `-created_at, hash LIMIT ${PAGE}\` (a page). "check" and "checkMany" go through the service (validate, ` +
          `normalize, hash, store), so their raw side hashes too (trim, NFC, lower-case, SHA-256, no validation); ` +
          `\`getSuppression(s)\` are the store alone against the bare statement. Goals: a check within ` +
          `${formatRatio(GOALS.single)} of the raw round trip, a batch within ${formatRatio(GOALS.batch)}, a page ` +
          `at depth ${formatCount(total)} within ${formatRatio(GOALS.deep)} of the first page.`,
      ],
      tables: [
        {
          columns: COMPARISON_COLUMNS,
          rows: [
            comparison('`suppressions.check` (hit) vs hash + SELECT', checkHit!, rawHit!, GOALS.single),
            comparison('`getSuppression` (hit) vs SELECT', getHit!, rawHit2!, GOALS.single),
            comparison('`getSuppression` (miss) vs SELECT', getMiss!, rawMiss!, GOALS.single),
            comparison(`\`suppressions.checkMany\` of ${BATCH} vs hash + = ANY`, checkMany!, rawMany!, GOALS.batch),
            comparison(`\`getSuppressions\` of ${BATCH} vs = ANY`, getMany!, rawMany2!, GOALS.batch),
            comparison(`\`listSuppressions\` page of ${PAGE}, depth 0 vs keyset SELECT`, first!, rawFirst!, undefined),
            comparison(
              `\`listSuppressions\` page of ${PAGE}, depth ${formatCount(total - PAGE)} vs keyset SELECT`,
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
              `\`listSuppressions\`, ${PAGE} per page (one index range scan)`,
              formatNanos(first!.nsPerOp),
              formatNanos(deepPage!.nsPerOp),
              formatRatio(deepOverFirst),
              `≤ ${formatRatio(GOALS.deep)} ${deepOverFirst <= GOALS.deep ? 'met' : '**missed**'}`,
            ],
            [
              `for contrast: raw \`OFFSET ${formatCount(total - PAGE)}\``,
              '—',
              formatNanos(offsetDeep!.nsPerOp),
              formatRatio(offsetDeep!.nsPerOp / rawFirst!.nsPerOp),
              '—',
            ],
          ],
        },
      ],
      notes: [
        `EXPLAIN (ANALYZE, BUFFERS) of the page statement: ${firstBuffers} shared buffers at depth 0, ${deepBuffers} at ` +
          `depth ${formatCount(total - PAGE)}; both an Index Scan on \`suppressions_newest_first\` with the row comparison ` +
          `\`(-created_at, hash) > (…)\` as its Index Cond, no Sort (packages/postgres/test/postgres.test.ts asserts it).`,
      ],
    },
    {
      title: `Postgres store: bytes per suppression, ${formatCount(total)} suppressions`,
      intro: [
        `Bulk-loaded in primary-key order (${formatCount(total)} rows in ${(fillMs / 1000).toFixed(1)} s, 50 000 per ` +
          `\`INSERT … SELECT FROM jsonb_to_recordset\`), then \`VACUUM ANALYZE\`. A row is (project_id, 64-character ` +
          `hex hash, normalized address, reason smallint, created_at bigint), addresses like \`${address(123456)}\`, ` +
          `project_id \`${project}\`. Sizes are on-disk relation sizes (8 KiB pages), so they include page and tuple ` +
          `headers and free space; rows inserted in random order leave B-tree pages about 70 % full instead of 90 %.`,
      ],
      tables: [
        {
          columns: ['relation', 'total', 'bytes per suppression'],
          rows: [
            ['table (heap)', formatBytes(Number(sizes!.heap)), (Number(sizes!.heap) / total).toFixed(1)],
            ...indexSizes.map((index) => [
              `index \`${index.name}\``,
              formatBytes(Number(index.bytes)),
              (Number(index.bytes) / total).toFixed(1),
            ]),
            ['all (`pg_total_relation_size`)', formatBytes(Number(sizes!.total)), (Number(sizes!.total) / total).toFixed(1)],
          ],
        },
      ],
    },
  ];
}

// --- messages: ingest and deep pages ----------------------------------------------------------------

/**
 * The least a store must write for a batch, as one statement: dedup keys, message rows, tracking-ID rows.
 * With `timeline`, also each event's timeline entry (as core builds these events' entries): what the
 * floor leaves out that no store that keeps timelines can skip, measured so the gap is not guessed.
 */
function rawIngest(raw: Sql, project: string, events: readonly DeliveryEvent[], timeline = false): Promise<unknown> {
  const rows = events.map((event) => ({
    key: `${event.provider}:${event.eventKey}`,
    message_key: messageKey(event.provider, event.messageId!, event.recipient),
    provider: event.provider,
    message_id: event.messageId,
    recipient: event.recipient,
    tracking_id: event.trackingId,
    at: event.occurredAt.getTime(),
    ...(timeline
      ? {
          entry: {
            id: timelineEntryId(`${event.provider}:${event.eventKey}`),
            eventKey: event.eventKey,
            type: event.type,
            provider: event.provider,
            occurredAt: event.occurredAt.getTime(),
            ...(event.bounceClass === undefined ? {} : { bounceClass: event.bounceClass }),
          },
        }
      : {}),
  }));
  return raw.unsafe(
    `WITH e AS (
       SELECT * FROM jsonb_to_recordset($2::text::jsonb)
         AS e(key text, message_key text, provider text, message_id text, recipient text, tracking_id text, at bigint${timeline ? ', entry jsonb' : ''})
     ), keys AS (
       INSERT INTO ${SCHEMA}.event_keys (project_id, key, seen_at) SELECT $1, key, 0 FROM e ON CONFLICT DO NOTHING
     ), messages AS (
       INSERT INTO ${SCHEMA}.messages AS m (project_id, key, provider, message_id, recipient, tracking_id, facts, first_event_at, last_event_at)
       SELECT $1, message_key, min(provider), min(message_id), min(recipient), min(tracking_id), 4, min(at), max(at)
       FROM e GROUP BY message_key
       ON CONFLICT (project_id, key) DO UPDATE SET last_event_at = greatest(m.last_event_at, excluded.last_event_at)
     )${
       timeline
         ? `, entries AS (
       INSERT INTO ${SCHEMA}.timeline_entries (project_id, message_key, occurred_at, id, entry)
       SELECT $1, message_key, at, entry->>'id', entry FROM e ON CONFLICT DO NOTHING
     )`
         : ''
     }
     INSERT INTO ${SCHEMA}.tracking_ids AS t (project_id, tracking_id, search_key, messages, delivered, bounced, complained, last_event_at)
     SELECT $1, tracking_id, lower(tracking_id), count(DISTINCT message_key), 0, 0, 0, max(at) FROM e GROUP BY tracking_id
     ON CONFLICT (project_id, tracking_id) DO UPDATE SET messages = t.messages + excluded.messages`,
    [project, JSON.stringify(rows)],
    { prepare: true },
  );
}

async function messageSection(context: SuiteContext, options: MeasureOptions, store: Store, raw: Sql): Promise<ReportSection> {
  const mailwarden = createMailwarden({ store });
  // Many short rounds rather than a few long ones: the three cases alternate every 3 batches, so a
  // machine whose load drifts during the run shifts all three alike, and the paired ratios hold.
  const batchOptions: MeasureOptions = context.quick ? { samples: 3, operationsPerSample: 2 } : { samples: 11, operationsPerSample: 3 };
  let next = 0;
  let rawNext = 500_000;
  let timelineNext = 800_000;
  context.log('applyEvents batches of 1 000…');
  const [ours, rawFloor, rawTimelines] = await measureGroup(
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
        name: 'raw statement',
        itemsPerOp: 1000,
        setup: () => eventBatch(rawNext++),
        run: (batch: DeliveryEvent[]) => rawIngest(raw, 'raw-ingest', batch),
      },
      {
        name: 'raw statement + timeline entries',
        itemsPerOp: 1000,
        setup: () => eventBatch(timelineNext++),
        run: (batch: DeliveryEvent[]) => rawIngest(raw, 'raw-timelines', batch, true),
      },
    ],
    batchOptions,
  );
  const duplicateBatch = eventBatch(0);
  const [duplicates] = await measureGroup(
    [{ name: 'duplicates', itemsPerOp: 1000, run: () => mailwarden.applyEvents('ingest', duplicateBatch) }],
    { ...options, samples: 5 },
  );

  // Messages bulk-loaded in key order, newest first: a million through applyEvents would take minutes.
  const project = 'messages';
  const messages = context.quick ? 20_000 : MESSAGES;
  context.log(`loading ${formatCount(messages)} messages…`);
  const fillStarted = performance.now();
  await raw.unsafe(
    `INSERT INTO ${SCHEMA}.messages (project_id, key, provider, message_id, recipient, tracking_id, facts, first_event_at, last_event_at)
     SELECT $1, lpad(to_hex(i), 32, '0'), 'sendgrid', 'filler-' || i, 'r' || i || '@example.com', 'campaign-' || (i % 10),
            CASE WHEN i % 3 = 0 THEN 4 ELSE 1 END, $2::bigint - i * 1000, $2::bigint - i * 1000
     FROM generate_series(0, $3::int - 1) AS i`,
    [project, START, messages],
  );
  const fillMs = performance.now() - fillStarted;
  await raw.unsafe(`VACUUM ANALYZE ${SCHEMA}.messages`);
  const deepIndex = messages - PAGE - 1;
  const deep = { firstEventAt: START - deepIndex * 1000, key: deepIndex.toString(16).padStart(32, '0') };
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

  const row = (what: string, m: Measurement, goal = '—') => [
    what,
    formatCount(m.itemsPerSecond),
    formatNanos(m.nsPerItem),
    formatNanos(m.nsPerOp),
    goal,
    formatPercent(m.spread),
  ];
  const versus = 1 / ratio(ours!, rawFloor!);
  const timelinesVersus = 1 / ratio(rawTimelines!, rawFloor!);
  const versusTimelines = 1 / ratio(ours!, rawTimelines!);
  recordGoal('postgres applyEvents', versus, `raw + timelines alone: ${formatRatio(timelinesVersus)}`);
  return {
    title: 'Postgres store: `applyEvents` and message pages',
    intro: [
      `\`mailwarden.applyEvents\` (service + store: one call of the \`mailwarden_apply_events\` function per batch, ` +
        `one transaction) with the batches of the memory-store benchmark: 1 000 SendGrid-like events about new ` +
        `messages over 10 tracking IDs. The raw floor is one statement per batch of the writes no store can skip: ` +
        `insert the dedup keys, upsert the message rows (grouped per message), upsert the tracking-ID rows; ` +
        `no merge, no counters by fact, no suppressions. The second floor adds what the first leaves out that ` +
        `no store keeping timelines can skip: each event's timeline entry, inserted in the same statement.`,
      `Pages: a project of ${formatCount(messages)} messages bulk-loaded in one statement ` +
        `(${(fillMs / 1000).toFixed(1)} s with the table's five indexes), a third of them delivered, then a page ` +
        `of ${PAGE} at the newest end and one ${formatCount(messages - PAGE)} entries in.`,
    ],
    tables: [
      {
        columns: ['case', 'events/s', 'per event', 'per batch', 'goal', 'noise'],
        rows: [
          row(
            '`applyEvents`, 1 000 new events',
            ours!,
            `ours / raw (time): ${formatRatio(versus)}, ${goalCell('postgres applyEvents', versus)}`,
          ),
          row('raw statement, 1 000 events', rawFloor!),
          row(
            'raw statement + timeline entries, 1 000 events',
            rawTimelines!,
            `this / raw: ${formatRatio(timelinesVersus)}; ours / this: ${formatRatio(versusTimelines)}`,
          ),
          row('`applyEvents`, the same 1 000 events again (duplicates)', duplicates!),
        ],
      },
      {
        columns: [`\`listMessages\`, page of ${PAGE}`, 'depth 0', `depth ${formatCount(messages - PAGE)}`, 'deep / first (time)', 'goal'],
        rows: [
          [
            'no filter',
            formatNanos(first!.nsPerOp),
            formatNanos(deepPage!.nsPerOp),
            formatRatio(deepOverFirst),
            `≤ ${formatRatio(GOALS.deep)} ${deepOverFirst <= GOALS.deep ? 'met' : '**missed**'}`,
          ],
          [
            'status = delivered (a third match)',
            formatNanos(firstDelivered!.nsPerOp),
            formatNanos(deepDelivered!.nsPerOp),
            formatRatio(deepOverFirstFiltered),
            `≤ ${formatRatio(GOALS.deep)} ${deepOverFirstFiltered <= GOALS.deep ? 'met' : '**missed**'}`,
          ],
        ],
      },
    ],
    notes: [
      `Unlike a Redis script, a batch does not hold the server: other sessions' reads and writes proceed ` +
        `meanwhile, and batches that touch different rows commit in parallel.`,
    ],
  };
}

// --- tracking-ID search -----------------------------------------------------------------------------

async function trackingIdSection(context: SuiteContext, store: Store): Promise<ReportSection> {
  const project = 'tracking-ids';
  const count = context.quick ? 10_000 : TRACKING_IDS;
  context.log(`${formatCount(count)} tracking IDs…`);
  for (let from = 0; from < count; from += 1000) {
    await store.applyEvents(
      project,
      Array.from({ length: 1000 }, (_, j) => {
        const i = from + j;
        const trackingId = `Campaign-${String(i).padStart(6, '0')}-${['spring', 'summer', 'autumn', 'winter'][i % 4]}-${i % 97}`;
        const messageId = `tracking-${i}`;
        const recipient = `r${i}@example.com`;
        return {
          key: `sendgrid:tracking-${i}`,
          message: {
            key: messageKey('sendgrid', messageId, recipient),
            provider: 'sendgrid',
            messageId,
            recipient,
            trackingId,
            stream: null,
            facts: 4,
            firstEventAt: START + i,
            lastEventAt: START + i,
          },
          trackingIdSearchKey: trackingId.toLowerCase(),
          suppression: null,
        };
      }),
    );
  }
  const cases: [string, { search?: string }][] = [
    ['no search (first page)', {}],
    ['`winter`: a quarter of the IDs match', { search: 'winter' }],
    ['`-96`: 1 in 97 match (about 1 000 IDs)', { search: '-96' }],
    ['`099999-w`: one match, the last ID', { search: '099999-w' }],
    ['`zzz`: no match', { search: 'zzz' }],
    ['`z`: no match, one character (no trigram to use)', { search: 'z' }],
  ];
  const rows: string[][] = [];
  for (const [what, query] of cases) {
    const [measured] = await measureGroup(
      [{ name: what, run: () => store.listTrackingIds(project, { limit: PAGE, ...query }) }],
      context.quick ? { warmupMs: 100, sampleMs: 200, samples: 3 } : { warmupMs: 300, sampleMs: 400, samples: 5 },
    );
    const found = (await store.listTrackingIds(project, { limit: PAGE, ...query })).length;
    rows.push([what, String(found), formatNanos(measured!.nsPerOp), formatPercent(measured!.spread)]);
  }
  return {
    title: `Postgres store: tracking-ID search, ${formatCount(count)} tracking IDs in one project`,
    intro: [
      `\`listTrackingIds\` with a page of ${PAGE}, IDs like \`Campaign-012345-winter-27\`, created through ` +
        `\`applyEvents\`. A search is \`search_key LIKE '%…%'\` (pattern characters escaped), planned for its own ` +
        `pattern: PostgreSQL either walks the primary key in ID order and stops when the page is full (common ` +
        `substrings), or asks the trigram GIN index (project_id, search_key) for the rows that can match and sorts ` +
        `those (rare substrings of three characters or more). One- and two-character searches have no trigram: ` +
        `they walk the ID order, which reads every ID when nothing matches.`,
    ],
    tables: [{ columns: ['search', 'rows', 'per page', 'noise'], rows }],
  };
}
