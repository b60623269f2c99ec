// What the Postgres store persisted, read back through direct SQL (a side channel beside the store),
// the plans of its hot paths, its errors, its invalidations and its retention sweep.
import { randomBytes, randomUUID } from 'node:crypto';
import { isMailwardenError } from '@mailwarden/core';
import {
  createEmailHasher,
  eventOutcomeOfCode,
  Fact,
  messageKey,
  type StoredEvent,
  type SuppressionInvalidation,
} from '@mailwarden/core/store';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPostgresStore, INVALIDATION_CHANNEL, migrate } from '../src/index.js';
import { connect, databaseUrl, freshStore } from './database.js';
import { startTcpRelay } from './tcp-relay.js';

const sql = connect({ max: 6 });
afterAll(() => sql.end());

const hashEmail = createEmailHasher();
const T = Date.UTC(2025, 0, 1);

function event(parts: {
  key?: string;
  message?: { id: string; recipient?: string; trackingId?: string | null; facts: number; at: number };
  suppression?: { email: string; reason: 'manual' | 'hard_bounce' | 'complaint'; at: number };
}): StoredEvent {
  const message = parts.message;
  const recipient = message?.recipient ?? `${message?.id}@example.com`;
  const trackingId = message?.trackingId ?? null;
  return {
    key: parts.key ?? `test:${randomUUID()}`,
    message:
      message === undefined
        ? null
        : {
            key: messageKey('ses', message.id, recipient),
            provider: 'ses',
            messageId: message.id,
            recipient,
            trackingId,
            stream: null,
            facts: message.facts,
            firstEventAt: message.at,
            lastEventAt: message.at,
          },
    trackingIdSearchKey: trackingId?.toLowerCase() ?? null,
    suppression:
      parts.suppression === undefined
        ? null
        : {
            hash: hashEmail(parts.suppression.email),
            email: parts.suppression.email,
            reason: parts.suppression.reason,
            createdAt: parts.suppression.at,
          },
  };
}

/** Tracking-ID rows as the store keeps them, next to the same figures derived from the messages. */
async function countersAndTheirMessages(schema: string, projectId: string) {
  const kept = await sql.unsafe(
    `SELECT tracking_id, messages, delivered, bounced, complained, last_event_at::float8 AS last_event_at
     FROM "${schema}".tracking_ids WHERE project_id = $1 ORDER BY tracking_id`,
    [projectId],
  );
  const derived = await sql.unsafe(
    `SELECT tracking_id, count(*)::int AS messages, count(*) FILTER (WHERE facts & 4 <> 0)::int AS delivered,
            count(*) FILTER (WHERE facts & 24 <> 0)::int AS bounced, count(*) FILTER (WHERE facts & 32 <> 0)::int AS complained,
            max(last_event_at)::float8 AS last_event_at
     FROM "${schema}".messages WHERE project_id = $1 AND tracking_id IS NOT NULL GROUP BY 1 ORDER BY 1`,
    [projectId],
  );
  return { kept: [...kept], derived: [...derived] };
}

describe('what the store persists, read through SQL', () => {
  test('suppressions: one row per hash, reason as its rank, times as epoch ms', async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      const project = 'acme';
      const email = 'ana@example.com';
      const hash = hashEmail(email);
      await store.addSuppression(project, { hash, email, reason: 'manual', createdAt: T + 5 });
      await store.addSuppression(project, { hash, email, reason: 'complaint', createdAt: T + 1 });
      await store.applyEvents(project, [event({ suppression: { email, reason: 'complaint', at: T + 3 } })]);
      const rows = await sql.unsafe(`SELECT project_id, hash, email, reason, created_at FROM "${schema}".suppressions`);
      // addSuppression never changes a present row; the event upgraded the reason and moved createdAt back.
      expect([...rows]).toStrictEqual([{ project_id: project, hash, email, reason: 3, created_at: String(T + 3) }]);

      expect(await store.removeSuppression(project, hash)).toMatchObject({ hash, reason: 'complaint', createdAt: T + 3 });
      expect([...(await sql.unsafe(`SELECT count(*)::int AS n FROM "${schema}".suppressions`))]).toStrictEqual([{ n: 0 }]);
    } finally {
      await drop();
    }
  });

  test('events: one key row per event, one row per message and tracking ID; replays add nothing', async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      const project = 'acme';
      const batch = [
        event({ message: { id: 'm1', trackingId: 'Promo', facts: Fact.sent, at: T + 1 } }),
        event({ message: { id: 'm1', trackingId: 'Promo', facts: Fact.delivered, at: T + 2 } }),
        event({
          message: { id: 'm2', trackingId: 'Promo', facts: Fact.hard_bounced, at: T + 3 },
          suppression: { email: 'm2@example.com', reason: 'hard_bounce', at: T + 3 },
        }),
        event({ message: { id: 'm3', facts: Fact.delivered, at: T + 4 } }),
      ];
      expect(await store.applyEvents(project, batch)).toStrictEqual(['applied', 'applied', 'suppressed', 'applied']);
      expect(await store.applyEvents(project, [...batch].reverse())).toStrictEqual(batch.map(() => 'duplicate'));

      const count = async (table: string) =>
        (
          await sql.unsafe(
            `SELECT count(*)::int AS n, count(DISTINCT (project_id, ${table === 'tracking_ids' ? 'tracking_id' : table === 'suppressions' ? 'hash' : 'key'}))::int AS d FROM "${schema}".${table}`,
          )
        )[0];
      expect(await count('event_keys')).toStrictEqual({ n: 4, d: 4 });
      expect(await count('messages')).toStrictEqual({ n: 3, d: 3 });
      expect(await count('tracking_ids')).toStrictEqual({ n: 1, d: 1 });
      expect(await count('suppressions')).toStrictEqual({ n: 1, d: 1 });

      const messages = await sql.unsafe(
        `SELECT message_id, tracking_id, facts, status, first_event_at::float8 AS first, last_event_at::float8 AS last
         FROM "${schema}".messages ORDER BY message_id`,
      );
      expect([...messages]).toStrictEqual([
        { message_id: 'm1', tracking_id: 'Promo', facts: Fact.sent | Fact.delivered, status: 3, first: T + 1, last: T + 2 },
        { message_id: 'm2', tracking_id: 'Promo', facts: Fact.hard_bounced, status: 1, first: T + 3, last: T + 3 },
        { message_id: 'm3', tracking_id: null, facts: Fact.delivered, status: 3, first: T + 4, last: T + 4 },
      ]);
      const [tracking] = await sql.unsafe(`SELECT tracking_id, search_key, messages, delivered, bounced FROM "${schema}".tracking_ids`);
      expect(tracking).toStrictEqual({ tracking_id: 'Promo', search_key: 'promo', messages: 2, delivered: 1, bounced: 1 });
      const { kept, derived } = await countersAndTheirMessages(schema, project);
      expect(kept).toStrictEqual(derived);
    } finally {
      await drop();
    }
  });

  test("the previous release's batches (one object per event) are applied as the columns this release sends", async () => {
    // During a rolling deploy, instances of the previous release call this release's function.
    const previousRow = (stored: StoredEvent): Record<string, unknown> => ({
      key: stored.key,
      ...(stored.message === null
        ? {}
        : {
            message_key: stored.message.key,
            provider: stored.message.provider,
            message_id: stored.message.messageId,
            recipient: stored.message.recipient,
            facts: stored.message.facts,
            first_event_at: stored.message.firstEventAt,
            last_event_at: stored.message.lastEventAt,
            ...(stored.timelineEntry === undefined ? {} : { timeline: stored.timelineEntry }),
            ...(stored.message.trackingId === null
              ? {}
              : { tracking_id: stored.message.trackingId, search_key: stored.trackingIdSearchKey }),
          }),
      ...(stored.suppression === null
        ? {}
        : {
            hash: stored.suppression.hash,
            email: stored.suppression.email,
            reason: { manual: 1, hard_bounce: 2, complaint: 3 }[stored.suppression.reason],
            created_at: stored.suppression.createdAt,
            ...(stored.suppression.provenance?.event === undefined
              ? {}
              : {
                  source: stored.suppression.provenance.source,
                  source_at: stored.suppression.provenance.at,
                  cause_event_id: stored.suppression.provenance.event.eventId,
                  cause_provider: stored.suppression.provenance.event.provider,
                  cause_message_id: stored.suppression.provenance.event.messageId,
                  cause_diagnostic: stored.suppression.provenance.event.diagnostic,
                }),
          }),
    });
    const withEntry = (stored: StoredEvent, type: 'sent' | 'delivered' | 'bounced'): StoredEvent => ({
      ...stored,
      timelineEntry: {
        id: randomBytes(16).toString('hex'),
        eventKey: stored.key,
        type,
        provider: 'ses',
        occurredAt: stored.message!.firstEventAt,
      },
    });
    const withCause = (stored: StoredEvent): StoredEvent => ({
      ...stored,
      suppression: {
        ...stored.suppression!,
        provenance: {
          source: 'webhook',
          at: stored.suppression!.createdAt,
          event: { provider: 'ses', messageId: 'm2', eventId: `cause-${stored.key}`, diagnostic: null },
        },
      },
    });
    const first = [
      withEntry(event({ message: { id: 'm1', trackingId: 'Promo', facts: Fact.sent, at: T + 1 } }), 'sent'),
      withEntry(event({ message: { id: 'm2', facts: Fact.delivered, at: T + 2 } }), 'delivered'),
    ];
    const second = [
      first[0]!,
      withEntry(event({ message: { id: 'm1', trackingId: 'Promo', facts: Fact.delivered, at: T + 3 } }), 'delivered'),
      withCause(
        withEntry(
          event({
            message: { id: 'm2', facts: Fact.hard_bounced, at: T + 4 },
            suppression: { email: 'm2@example.com', reason: 'hard_bounce', at: T + 4 },
          }),
          'bounced',
        ),
      ),
      event({ suppression: { email: 'm2@example.com', reason: 'complaint', at: T + 5 } }),
    ];
    const current = await freshStore(sql);
    const previous = await freshStore(sql);
    try {
      const applyAsPrevious = async (events: StoredEvent[]) => {
        const [row] = await sql.unsafe(`SELECT "${previous.schema}".mailwarden_apply_events($1, $2::text::jsonb) AS codes`, [
          'acme',
          JSON.stringify(events.map(previousRow)),
        ]);
        return Array.from(row!.codes as string, eventOutcomeOfCode);
      };
      const outcomes = [];
      for (const batch of [first, second]) {
        const expected = await current.store.applyEvents('acme', batch);
        expect(await applyAsPrevious(batch)).toStrictEqual(expected);
        outcomes.push(...expected);
      }
      expect(outcomes).toStrictEqual(['applied', 'applied', 'duplicate', 'applied', 'suppressed', 'upgraded_from_hard_bounce']);
      const state = async (schema: string) => {
        const read = async (text: string) => [...(await sql.unsafe(text.replaceAll('<s>', `"${schema}"`)))];
        return {
          messages: await read(
            `SELECT key, provider, message_id, recipient, tracking_id, facts, first_event_at, last_event_at, fact_times FROM <s>.messages ORDER BY key`,
          ),
          trackingIds: await read(
            `SELECT tracking_id, search_key, messages, delivered, bounced, complained, last_event_at FROM <s>.tracking_ids ORDER BY 1`,
          ),
          timelines: await read(`SELECT message_key, occurred_at, id, entry FROM <s>.timeline_entries ORDER BY 1, 2, 3`),
          suppressions: await read(
            `SELECT hash, email, reason, created_at, source, source_at, cause_provider, cause_message_id, cause_event_id FROM <s>.suppressions ORDER BY hash`,
          ),
          buckets: await read(`SELECT tracking_id, hour, delivered, hard_bounced FROM <s>.stat_buckets ORDER BY 1, 2`),
        };
      };
      // Project 'acme' of the previous schema went through the previous shape: the same as the columns.
      expect(await state(previous.schema)).toStrictEqual(await state(current.schema));
    } finally {
      await Promise.all([current.drop(), previous.drop()]);
    }
  });

  test('a batch that fails part-way leaves nothing behind, so the caller may retry it whole', async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      const good = event({ message: { id: 'm1', trackingId: 'promo', facts: Fact.delivered, at: T } });
      // Not a hash: the suppressions table refuses it, after the key and message rows were written.
      const bad = { ...event({ suppression: { email: 'x@example.com', reason: 'manual', at: T } }) };
      bad.suppression = { ...bad.suppression!, hash: 'NOT-A-HASH' };
      await expect(store.applyEvents('acme', [good, bad])).rejects.toThrow();
      for (const table of ['event_keys', 'messages', 'tracking_ids', 'suppressions']) {
        expect([...(await sql.unsafe(`SELECT count(*)::int AS n FROM "${schema}".${table}`))], table).toStrictEqual([{ n: 0 }]);
      }
      expect(await store.applyEvents('acme', [good])).toStrictEqual(['applied']);
    } finally {
      await drop();
    }
  });
});

describe('hot paths use indexes, and pages cost the same at any depth', () => {
  const SUPPRESSIONS = 1_000_000;
  const MESSAGES = 100_000;
  const TRACKING_IDS = 100_000;
  const project = 'big';
  let schema: string;
  let drop: () => Promise<void>;
  const captured: { query: string; parameters: unknown[] }[] = [];
  // A client that records what the store sends, so the plans below are those of the store's own SQL.
  const recording = connect({ max: 1, debug: (_connection, query, parameters) => captured.push({ query, parameters }) });

  beforeAll(async () => {
    ({ schema, drop } = await freshStore(sql));
    const s = `"${schema}"`;
    // Inserted in key order, so filling a million rows takes seconds, not minutes; hashes are hex
    // numbers and times descend with them, with ties (three rows per millisecond). One in a thousand is a
    // complaint, and one message in a thousand is Mandrill's, so those filters are rare, as they are in life.
    await sql.unsafe(
      `INSERT INTO ${s}.suppressions (project_id, hash, email, reason, created_at)
       SELECT $1, lpad(to_hex(i), 64, '0'), 'user' || i || '@example.com', CASE WHEN i % 1000 = 0 THEN 3 ELSE 1 + i % 2 END, $2::bigint - i / 3
       FROM generate_series(1, $3::int) AS i`,
      [project, T + SUPPRESSIONS, SUPPRESSIONS],
    );
    // A stream's list, a tenth as long: half of it addresses the project-wide list holds too (a check
    // of those finds the project-wide row), half only its own, all added after the project-wide ones.
    await sql.unsafe(
      `INSERT INTO ${s}.suppressions (project_id, stream, hash, email, reason, created_at)
       SELECT $1, 'marketing', lpad(to_hex(i), 64, '0'), 'user' || i || '@example.com', CASE WHEN i % 1000 = 0 THEN 3 ELSE 1 END, $2::bigint - i / 3
       FROM generate_series($3::int, $4::int) AS i`,
      [project, T + 2 * SUPPRESSIONS, SUPPRESSIONS - 49_999, SUPPRESSIONS + 50_000],
    );
    // Other projects, so that the planner sees project_id as selective, as in a shared database.
    await sql.unsafe(
      `INSERT INTO ${s}.suppressions (project_id, hash, email, reason, created_at)
       SELECT 'other-' || (i % 20), lpad(to_hex(i), 64, '0'), 'user' || i || '@example.org', 1, $1::bigint + i
       FROM generate_series(1, 200000) AS i`,
      [T],
    );
    await sql.unsafe(
      `INSERT INTO ${s}.messages (project_id, key, provider, message_id, recipient, tracking_id, stream, facts, first_event_at, last_event_at)
       SELECT p, lpad(to_hex(i), 32, '0'), CASE WHEN i % 1000 = 0 THEN 'mandrill' ELSE 'ses' END, 'm' || i,
              'user' || i || CASE WHEN i % 1000 = 7 THEN '@rare.example' ELSE '@example.com' END,
              'campaign-' || (i % $2::int),
              CASE WHEN i % 1000 = 3 THEN 'receipts' WHEN i % 5 = 0 THEN 'marketing' END,
              1 << (i % 10), $3::bigint + i * 10, $3::bigint + i * 10 + 5
       FROM (VALUES ('big', $1::int), ('other-1', 10000), ('other-2', 10000)) AS projects(p, n), generate_series(1, n) AS i`,
      [MESSAGES, TRACKING_IDS / 10, T],
    );
    // The search index is built after the rows, by migrate(), which recreates it when it is missing.
    await sql.unsafe(`DROP INDEX ${s}.tracking_ids_search`);
    await sql.unsafe(
      `INSERT INTO ${s}.tracking_ids (project_id, tracking_id, search_key, messages, delivered, bounced, complained, last_event_at)
       SELECT p, 'Campaign-' || i, 'campaign-' || i, 10, 5, 2, 0, $2::bigint
       FROM (VALUES ('big', $1::int), ('other-1', 10000), ('other-2', 10000)) AS projects(p, n), generate_series(0, n - 1) AS i`,
      [TRACKING_IDS, T],
    );
    await migrate(sql, { schema });
    // The plans below follow from these statistics: keep autovacuum from re-sampling the tables midway
    // (seen once under load: a fresh sample flipped the rare-substring plan), and sample every tracking
    // ID, so the trigram statistics do not depend on which rows a random sample picked.
    for (const table of ['suppressions', 'messages', 'tracking_ids']) {
      await sql.unsafe(`ALTER TABLE ${s}.${table} SET (autovacuum_enabled = false)`);
    }
    await sql.unsafe(`ALTER TABLE ${s}.tracking_ids ALTER COLUMN search_key SET STATISTICS 1000`);
    await sql.unsafe(`ANALYZE ${s}.suppressions, ${s}.messages, ${s}.tracking_ids`);
  }, 120_000);
  afterAll(async () => {
    await recording.end();
    await drop?.();
  });

  /** Runs a store call, and EXPLAIN ANALYZEs the statement it sent, as sent (custom plan). */
  async function planOf(call: (store: ReturnType<typeof createPostgresStore>) => Promise<unknown>): Promise<string> {
    captured.length = 0;
    await call(createPostgresStore({ sql: recording, schema }));
    const sent = captured.at(-1)!;
    const rows = await sql.unsafe(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) ${sent.query}`, sent.parameters as never[]);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  }

  /** The plan a prepared statement gets once PostgreSQL switches it to a generic plan. */
  async function genericPlanOf(call: (store: ReturnType<typeof createPostgresStore>) => Promise<unknown>): Promise<string> {
    captured.length = 0;
    await call(createPostgresStore({ sql: recording, schema }));
    const sent = captured.at(-1)!;
    // The parameter types the server inferred when the store prepared the statement on that connection.
    const [prepared] = await recording.unsafe('SELECT parameter_types::text[] AS types FROM pg_prepared_statements WHERE statement = $1', [
      sent.query,
    ]);
    const types = prepared!.types as string[];
    // EXECUTE takes its arguments as literals (a utility statement cannot take bind parameters).
    const literal = (value: unknown) =>
      value === null ? 'NULL' : typeof value === 'number' ? String(value) : `'${String(value).replace(/'/g, "''")}'`;
    const args = sent.parameters.map((value, i) => `${literal(value)}::${types[i]}`).join(', ');
    // On the recording client's one connection, where the store's statements live; not in a transaction,
    // so the statement is deallocated whatever happens.
    await recording.unsafe(`PREPARE generic_plan_check (${types.join(', ')}) AS ${sent.query}`);
    try {
      await recording.unsafe('SET plan_cache_mode = force_generic_plan');
      const rows = await recording.unsafe(`EXPLAIN (COSTS OFF) EXECUTE generic_plan_check(${args})`);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    } finally {
      await recording.unsafe('RESET plan_cache_mode; DEALLOCATE generic_plan_check');
    }
  }

  const buffers = (plan: string) => {
    const line = plan.split('\n').find((text) => text.includes('Buffers:'))!;
    return [...line.matchAll(/(?:hit|read)=(\d+)/g)].reduce((total, match) => total + Number(match[1]), 0);
  };
  const hashOf = (i: number) => i.toString(16).padStart(64, '0');
  const hot: [string, (store: ReturnType<typeof createPostgresStore>) => Promise<unknown>][] = [
    ['check', (store) => store.getSuppression(project, hashOf(123_456))],
    [
      'checkMany of 100',
      (store) =>
        store.getSuppressions(
          project,
          Array.from({ length: 100 }, (_, i) => hashOf(1 + i * 9_973)),
        ),
    ],
    ['check in a stream, found in it', (store) => store.getSuppression(project, hashOf(1_000_500), 'marketing')],
    ['check in a stream, found project-wide', (store) => store.getSuppression(project, hashOf(960_000), 'marketing')],
    [
      'checkMany of 100 in a stream',
      (store) =>
        store.getSuppressions(
          project,
          Array.from({ length: 100 }, (_, i) => hashOf(1 + i * 9_973)),
          'marketing',
        ),
    ],
    ['first page of suppressions', (store) => store.listSuppressions(project, { limit: 100 })],
    // Expiry: the caller's clock skips expired rows on the walk; expiring ones are a range of their partial index.
    ['check at a time', (store) => store.getSuppression(project, hashOf(123_456), undefined, T + 2_000_000)],
    ['first page of suppressions at a time', (store) => store.listSuppressions(project, { limit: 100, now: T + 2_000_000 })],
    ['expiring suppressions', (store) => store.listSuppressions(project, { limit: 100, expiring: true, now: T + 2_000_000 })],
    ["first page of a stream's suppressions", (store) => store.listSuppressions(project, { limit: 100, stream: 'marketing' })],
    [
      "deep page of a stream's suppressions",
      (store) =>
        store.listSuppressions(project, { limit: 100, stream: 'marketing', after: { createdAt: T + 1_670_000, hash: hashOf(990_000) } }),
    ],
    [
      "a stream's suppressions by reason",
      (store) => store.listSuppressions(project, { limit: 100, stream: 'marketing', reason: 'complaint' }),
    ],
    [
      "a stream's suppressions by email prefix, rare",
      (store) => store.listSuppressions(project, { limit: 100, stream: 'marketing', emailPrefix: 'user4242' }),
    ],
    [
      'deep page of suppressions',
      (store) => store.listSuppressions(project, { limit: 100, after: { createdAt: T + 400, hash: hashOf(999_000) } }),
    ],
    ['messages by tracking ID', (store) => store.listMessages(project, { limit: 50, trackingId: 'campaign-77' })],
    ['deep page of messages', (store) => store.listMessages(project, { limit: 50, after: { firstEventAt: T + 500, key: 'f'.repeat(32) } })],
    ['messages by status', (store) => store.listMessages(project, { limit: 50, status: 'complained' })],
    ['messages by recipient', (store) => store.listMessages(project, { limit: 50, recipient: 'user4242@example.com' })],
    ['messages by provider, rare', (store) => store.listMessages(project, { limit: 50, provider: 'mandrill' })],
    ['messages by provider, common', (store) => store.listMessages(project, { limit: 50, provider: 'ses' })],
    ['messages by stream, rare', (store) => store.listMessages(project, { limit: 50, stream: 'receipts' })],
    ['messages by stream, common', (store) => store.listMessages(project, { limit: 50, stream: 'marketing' })],
    ['messages by stream, absent', (store) => store.listMessages(project, { limit: 50, stream: 'weekly-digest' })],
    ['messages in a time range, recent', (store) => store.listMessages(project, { limit: 50, from: T + 990_000 })],
    ['messages in a time range, old and narrow', (store) => store.listMessages(project, { limit: 50, from: T + 10_000, to: T + 11_000 })],
    ['messages in a time range, before a time', (store) => store.listMessages(project, { limit: 50, to: T + 500_000 })],
    [
      'messages by recipient, provider, status and time range',
      (store) =>
        store.listMessages(project, {
          limit: 50,
          recipient: 'user4000@example.com',
          provider: 'mandrill',
          status: 'delivered',
          from: T,
          to: T + 50_000,
        }),
    ],
    // Partial searches: user4242… are 11 of the messages and 111 of the suppressions; every address starts with user.
    ['messages by recipient prefix, rare', (store) => store.listMessages(project, { limit: 50, recipientPrefix: 'user4242' })],
    ['messages by recipient prefix, common', (store) => store.listMessages(project, { limit: 50, recipientPrefix: 'user' })],
    [
      'messages by recipient prefix, rare, with provider and status',
      (store) => store.listMessages(project, { limit: 50, recipientPrefix: 'user4242', provider: 'ses', status: 'delivered' }),
    ],
    ['messages by recipient domain, rare', (store) => store.listMessages(project, { limit: 50, recipientDomain: 'rare.example' })],
    ['messages by recipient domain, common', (store) => store.listMessages(project, { limit: 50, recipientDomain: 'example.com' })],
    [
      'messages by recipient domain, deep',
      (store) =>
        store.listMessages(project, {
          limit: 50,
          recipientDomain: 'rare.example',
          after: { firstEventAt: T + 500_000, key: 'f'.repeat(32) },
        }),
    ],
    ['suppressions by email prefix, rare', (store) => store.listSuppressions(project, { limit: 100, emailPrefix: 'user4242' })],
    ['suppressions by email prefix, common', (store) => store.listSuppressions(project, { limit: 100, emailPrefix: 'user' })],
    [
      'suppressions by email prefix and reason, rare',
      (store) => store.listSuppressions(project, { limit: 100, emailPrefix: 'user4242', reason: 'manual' }),
    ],
    ['suppressions by reason, rare', (store) => store.listSuppressions(project, { limit: 100, reason: 'complaint' })],
    [
      'suppressions by reason, deep',
      (store) =>
        store.listSuppressions(project, { limit: 100, reason: 'manual', after: { createdAt: T + 700_000, hash: hashOf(900_000) } }),
    ],
    ['suppressions in a time range', (store) => store.listSuppressions(project, { limit: 100, from: T + 700_000, to: T + 700_100 })],
    [
      'suppressions by reason in a time range',
      (store) => store.listSuppressions(project, { limit: 100, reason: 'complaint', from: T + 700_000, to: T + 900_000 }),
    ],
    ['tracking IDs', (store) => store.listTrackingIds(project, { limit: 50, after: 'Campaign-5' })],
    ['tracking-ID search, rare', (store) => store.listTrackingIds(project, { limit: 50, search: 'gn-7777' })],
    ['tracking-ID search, common', (store) => store.listTrackingIds(project, { limit: 50, search: 'campaign' })],
    ['tracking-ID search, one character', (store) => store.listTrackingIds(project, { limit: 50, search: '7' })],
  ];

  test.each(hot)('%s: no sequential scan', async (_name, call) => {
    const plan = await planOf(call);
    expect(plan).not.toMatch(/Seq Scan/);
    expect(plan).toMatch(/Index (Only )?Scan|Bitmap Index Scan/);
  });

  // Searches, prefixes and message time ranges are planned for their values (unnamed statements), so they have no generic plan.
  test.each(hot.filter(([name]) => !name.startsWith('tracking-ID search') && !/^messages.* time range| prefix/.test(name)))(
    '%s: the generic plan of the prepared statement uses an index too',
    async (_name, call) => {
      const plan = await genericPlanOf(call);
      expect(plan).not.toMatch(/Seq Scan/);
    },
  );

  test('a rare substring is found through the trigram index; a common one by walking the ID order', async () => {
    const rare = await planOf((store) => store.listTrackingIds(project, { limit: 50, search: 'gn-7777' }));
    expect(rare).toMatch(/Bitmap Index Scan on tracking_ids_search/);
    const common = await planOf((store) => store.listTrackingIds(project, { limit: 50, search: 'campaign' }));
    expect(common).toMatch(/Index Scan using tracking_ids_pkey/);
    expect(common).not.toMatch(/Sort/);
  });

  test('each listing filter walks an index in the listing order: no sort, the filter in the index condition', async () => {
    const byRecipient = await planOf((store) => store.listMessages(project, { limit: 50, recipient: 'user4242@example.com' }));
    expect(byRecipient).toMatch(/Index Scan using messages_by_recipient/);
    const byProvider = await planOf((store) => store.listMessages(project, { limit: 50, provider: 'mandrill' }));
    expect(byProvider).toMatch(/Index Scan using messages_by_provider/);
    expect(byProvider).toMatch(/Index Cond: .*provider = /);
    const byStream = await planOf((store) => store.listMessages(project, { limit: 50, stream: 'receipts' }));
    expect(byStream).toMatch(/Index Scan using messages_by_stream/);
    expect(byStream).toMatch(/Index Cond: .*stream = /);
    expect(byStream).not.toMatch(/Sort/);
    // `to` bounds -first_event_at (first ≤ last < to): the newest-first range starts at the first message that can match.
    const before = await planOf((store) => store.listMessages(project, { limit: 50, to: T + 500_000 }));
    expect(before).toMatch(/Index Scan using messages_newest_first/);
    expect(before).toMatch(/Index Cond: .*\(- first_event_at\) > /);
    // A narrow range of old messages: found through messages_by_last_event_at (then a sort of those few
    // rows), or by starting the newest-first range at `to`; the planner weighs them for these values.
    const narrow = await planOf((store) => store.listMessages(project, { limit: 50, from: T + 10_000, to: T + 11_000 }));
    expect(narrow).toMatch(/Index Cond: .*(\(last_event_at >= .*\(last_event_at < |\(- first_event_at\) > )/);
    expect(buffers(narrow)).toBeLessThan(100);
    const byReason = await planOf((store) => store.listSuppressions(project, { limit: 100, reason: 'complaint' }));
    expect(byReason).toMatch(/Index Scan using suppressions_by_reason/);
    // A createdAt range is a range of the newest-first index itself, both ends in its condition.
    let page: unknown[] = [];
    const range = await planOf(async (store) => {
      page = await store.listSuppressions(project, { limit: 100, from: T + 700_000, to: T + 700_100 });
    });
    expect(page).toHaveLength(100);
    expect(buffers(range)).toBeLessThan(110);
    expect(range).toMatch(/Index Scan using suppressions_newest_first/);
    expect(range).toMatch(
      /Index Cond: .*\(- created_at\) > .*\(- created_at\) <= |Index Cond: .*\(- created_at\) <= .*\(- created_at\) > /,
    );
    for (const plan of [byRecipient, byProvider, before, byReason, range]) expect(plan).not.toMatch(/Sort|Seq Scan/);
  });

  test('a rare prefix is a range of its pattern index, sorted; a common one walks the newest-first order; a domain walks its own', async () => {
    let page: { recipient?: string; email?: string }[] = [];
    const rareMessages = await planOf(async (store) => {
      page = await store.listMessages(project, { limit: 50, recipientPrefix: 'user4242' });
    });
    expect(page.map((message) => message.recipient)).toStrictEqual([
      ...Array.from({ length: 10 }, (_, i) => `user4242${9 - i}@example.com`),
      'user4242@example.com',
    ]);
    // In a database whose collation is "C" (the test server's), messages_by_recipient holds addresses in the
    // same order, and the planner, by its statistics' sample, sometimes takes the same range of it instead.
    expect(rareMessages).toMatch(/Index Scan using messages_by_recipient(_prefix)? |Bitmap Index Scan on messages_by_recipient_prefix/);
    expect(rareMessages).toMatch(/recipient ~>=~ 'user4242'.*recipient ~<~ 'user4243'|recipient >= 'user4242'.*recipient < 'user4243'/);
    expect(buffers(rareMessages)).toBeLessThan(100);
    const commonMessages = await planOf((store) => store.listMessages(project, { limit: 50, recipientPrefix: 'user' }));
    expect(commonMessages).toMatch(/Index Scan using messages_newest_first/);

    const rareDomain = await planOf(async (store) => {
      page = await store.listMessages(project, { limit: 50, recipientDomain: 'rare.example' });
    });
    expect(page).toHaveLength(50);
    expect(page.every((message) => message.recipient!.endsWith('@rare.example'))).toBe(true);
    expect(rareDomain).toMatch(/Index Scan using messages_by_recipient_domain/);
    expect(rareDomain).toMatch(/Index Cond: .*substr\(recipient, \(strpos\(recipient, '@'::text\) \+ 1\)\) = /);
    // An index range in the listing order: a page reads about as much as its rows.
    expect(buffers(rareDomain)).toBeLessThan(120);

    const rareSuppressions = await planOf(async (store) => {
      page = await store.listSuppressions(project, { limit: 100, emailPrefix: 'user4242' });
    });
    expect(page).toHaveLength(100);
    expect(page.every((record) => record.email!.startsWith('user4242'))).toBe(true);
    expect(rareSuppressions).toMatch(/Index Scan using suppressions_by_email_prefix|Bitmap Index Scan on suppressions_by_email_prefix/);
    const commonSuppressions = await planOf((store) => store.listSuppressions(project, { limit: 100, emailPrefix: 'user' }));
    expect(commonSuppressions).toMatch(/Index Scan using suppressions_newest_first/);
    for (const plan of [commonMessages, rareDomain, commonSuppressions]) expect(plan).not.toMatch(/Sort|Seq Scan/);
  });

  test('a check is one range of the primary key: the project-wide row without a stream; the hash in every list with one', async () => {
    const projectWide = await planOf((store) => store.getSuppression(project, hashOf(123_456)));
    expect(projectWide).toMatch(/Index Scan using suppressions_pkey/);
    expect(projectWide).toMatch(/Index Cond: .*hash = /);
    expect(projectWide).not.toMatch(/Seq Scan|Bitmap|Sort/);
    let found: unknown;
    const inStream = await planOf(async (store) => {
      found = await store.getSuppression(project, hashOf(1_000_500), 'marketing');
    });
    expect(found).toMatchObject({ hash: hashOf(1_000_500), stream: 'marketing' });
    // (project_id, hash, stream): the hash's rows of every list are adjacent, in stream order ('' first).
    expect(inStream).toMatch(/Index Scan using suppressions_pkey/);
    expect(inStream).toMatch(/Index Cond: .*hash = /);
    expect(inStream).not.toMatch(/Seq Scan|Bitmap|Sort/);
    expect(buffers(inStream)).toBeLessThanOrEqual(buffers(projectWide) + 1);
    // The previous release's check, during a rolling deploy, still probes the primary key.
    const previous = await sql.unsafe(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF)
       SELECT hash, email, reason, created_at FROM "${schema}".suppressions WHERE project_id = $1 AND hash = $2`,
      [project, hashOf(960_000)],
    );
    const previousPlan = previous.map((row) => row['QUERY PLAN']).join('\n');
    expect(previousPlan).toMatch(/Index Scan using suppressions_pkey/);
    expect(buffers(previousPlan)).toBeLessThanOrEqual(buffers(projectWide) + 1);
    let many: unknown[] = [];
    const batch = await planOf(async (store) => {
      many = await store.getSuppressions(project, [hashOf(960_000), hashOf(1_000_500), hashOf(1_234_567)], 'marketing');
    });
    expect(many).toStrictEqual([
      expect.not.objectContaining({ stream: expect.anything() }),
      expect.objectContaining({ stream: 'marketing' }),
      undefined,
    ]);
    expect(batch).toMatch(/Index Scan using suppressions_pkey/);
    expect(batch).not.toMatch(/Seq Scan|Hash Join|Merge Join/);
  });

  test("a stream's pages are ranges of the same indexes as the project-wide list's, reading as much", async () => {
    const first = await planOf((store) => store.listSuppressions(project, { limit: 100, stream: 'marketing' }));
    const [position] = await sql.unsafe(
      `SELECT created_at::float8, hash FROM "${schema}".suppressions WHERE project_id = $1 AND stream = 'marketing'
       ORDER BY -created_at, hash OFFSET 99899 LIMIT 1`,
      [project],
    );
    let page: { stream?: string }[] = [];
    const deep = await planOf(async (store) => {
      page = await store.listSuppressions(project, {
        limit: 100,
        stream: 'marketing',
        after: { createdAt: position!.created_at, hash: position!.hash },
      });
    });
    expect(page).toHaveLength(100);
    expect(page.every((record) => record.stream === 'marketing')).toBe(true);
    for (const plan of [first, deep]) {
      expect(plan).toMatch(/Index Scan using suppressions_newest_first/);
      expect(plan).toMatch(/Index Cond: .*stream = /);
      expect(plan).not.toMatch(/Sort|Seq Scan/);
    }
    expect(buffers(deep)).toBeLessThanOrEqual(buffers(first) + 4);
    const byReason = await planOf((store) => store.listSuppressions(project, { limit: 100, stream: 'marketing', reason: 'complaint' }));
    expect(byReason).toMatch(/Index Scan using suppressions_by_reason/);
    expect(byReason).not.toMatch(/Sort|Seq Scan/);
  });

  test('a page a million rows deep is an index range scan, with no sort, reading as much as the first page', async () => {
    const first = await planOf((store) => store.listSuppressions(project, { limit: 100 }));
    // The position of the 999 900th row: its time and hash, as a cursor carries them.
    const [position] = await sql.unsafe(
      `SELECT created_at::float8, hash FROM "${schema}".suppressions WHERE project_id = $1
       ORDER BY -created_at, hash OFFSET 999899 LIMIT 1`,
      [project],
    );
    let page: unknown[] = [];
    const deep = await planOf(async (store) => {
      page = await store.listSuppressions(project, { limit: 100, after: { createdAt: position!.created_at, hash: position!.hash } });
    });
    expect(page).toHaveLength(100);
    for (const plan of [first, deep]) {
      expect(plan).toMatch(/Index Scan using suppressions_newest_first/);
      expect(plan).not.toMatch(/Sort|Seq Scan/);
    }
    expect(deep).toMatch(/Index Cond: .*ROW\(\(- created_at\), hash\) > ROW\(/);
    // Buffers touched: the same handful of pages (a descent and a leaf or two) at either depth.
    expect(buffers(deep)).toBeLessThanOrEqual(buffers(first) + 4);
  });
});

describe('store_unavailable', () => {
  test('every operation on an unreachable server throws MailwardenError(store_unavailable)', async () => {
    // A port nothing listens on.
    // No reconnection backoff: postgres.js would otherwise wait longer before each new attempt.
    const unreachable = connect({ host: '127.0.0.1', port: 1, max: 1, connect_timeout: 2, backoff: () => 0 });
    const store = createPostgresStore({ sql: unreachable, schema: 'mailwarden', retention: { messagesMs: 1 } });
    const calls: [string, () => Promise<unknown>][] = [
      ['getSuppression', () => store.getSuppression('p', 'a'.repeat(64))],
      ['getSuppressions', () => store.getSuppressions('p', ['a'.repeat(64)])],
      ['addSuppression', () => store.addSuppression('p', { hash: 'a'.repeat(64), email: 'a@example.com', reason: 'manual', createdAt: 1 })],
      ['removeSuppression', () => store.removeSuppression('p', 'a'.repeat(64))],
      [
        'mergeSuppressions',
        () => store.mergeSuppressions('p', [{ hash: 'a'.repeat(64), email: 'a@example.com', reason: 'manual', createdAt: 1 }]),
      ],
      ['removeSuppressions', () => store.removeSuppressions('p', ['a'.repeat(64)])],
      ['listSuppressions', () => store.listSuppressions('p', { limit: 1 })],
      ['applyEvents', () => store.applyEvents('p', [event({})])],
      ['listMessages', () => store.listMessages('p', { limit: 1 })],
      ['listTrackingIds', () => store.listTrackingIds('p', { limit: 1, search: 'x' })],
      ['claimWebhookToken', () => store.claimWebhookToken('p', 'mailgun:token', 'a'.repeat(64), Date.now() + 60_000)],
      ['subscribeInvalidations', () => store.subscribeInvalidations(() => {})],
      ['purgeExpired', () => store.purgeExpired(Date.now())],
    ];
    try {
      for (const [name, call] of calls) {
        const error = await call().then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(isMailwardenError(error) && error.code, name).toBe('store_unavailable');
        expect((error as Error).cause, name).toMatchObject({ code: 'ECONNREFUSED' });
      }
    } finally {
      await unreachable.end({ timeout: 0 });
    }
  });

  test('a connection terminated in the middle of a call is store_unavailable, and the next call reconnects', async () => {
    const { schema, store: setup, drop } = await freshStore(sql);
    const name = `mw-terminated-${randomUUID().slice(0, 8)}`;
    const victim = connect({ max: 1, connection: { application_name: name } });
    const store = createPostgresStore({ sql: victim, schema });
    const hash = hashEmail('held@example.com');
    try {
      await setup.addSuppression('p', { hash, email: 'held@example.com', reason: 'manual', createdAt: 1 });
      // Another session holds the row, so the store's DELETE waits until its connection is terminated.
      const outcome = await sql.begin(async (tx) => {
        await tx.unsafe(`SELECT FROM "${schema}".suppressions WHERE project_id = 'p' AND hash = $1 FOR UPDATE`, [hash]);
        const pending = store.removeSuppression('p', hash).then(
          () => undefined,
          (error: unknown) => error,
        );
        for (let tries = 0; ; tries++) {
          // Outside the transaction: pg_stat_activity is read once per transaction.
          const [row] = await sql.unsafe(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, [
            name,
          ]);
          if (row !== undefined) {
            await sql.unsafe('SELECT pg_terminate_backend($1)', [row.pid]);
            break;
          }
          if (tries > 200) throw new Error('the store never waited for the lock');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return pending;
      });
      expect(isMailwardenError(outcome) && outcome.code).toBe('store_unavailable');
      // postgres.js opens a new connection for the calls that follow (one may still meet the old one).
      let found: unknown;
      for (let tries = 0; found === undefined; tries++) {
        found = await store.getSuppression('p', hash).catch((error: unknown) => {
          if (!isMailwardenError(error) || error.code !== 'store_unavailable' || tries > 20) throw error;
          return new Promise((resolve) => setTimeout(() => resolve(undefined), 50));
        });
      }
      expect(found).toMatchObject({ hash });
    } finally {
      await victim.end();
      await drop();
    }
  });

  test('while the server is unreachable, calls fail at once but for one that reconnects first, and the first call after it returns gets through', async () => {
    const { schema, drop } = await freshStore(sql);
    const server = new URL(databaseUrl);
    const relay = await startTcpRelay({ host: server.hostname, port: Number(server.port) });
    // A second between reconnection attempts: calls that waited for them would still be pending below.
    const client = connect({ port: relay.port, max: 2, backoff: () => 1 });
    const store = createPostgresStore({ sql: client, schema });
    const hash = hashEmail('anyone@example.com');
    const outcome = (call: Promise<unknown>) =>
      call.then(
        () => 'answered',
        (error: unknown) => (isMailwardenError(error) ? error.code : error),
      );
    try {
      expect(await store.getSuppression('p', hash)).toBeUndefined();
      await relay.cut();
      expect(await outcome(store.getSuppression('p', hash))).toBe('store_unavailable');

      // Unreachable now: the next call tries to reconnect; the calls made meanwhile do not wait for it.
      const settled: string[] = [];
      const reconnecting = outcome(store.getSuppression('p', hash)).finally(() => settled.push('the call that reconnects'));
      const meanwhile = await Promise.all(
        Array.from({ length: 5 }, () =>
          outcome(store.addSuppression('p', { hash, email: 'anyone@example.com', reason: 'manual', createdAt: T })),
        ),
      );
      settled.push('the calls made meanwhile');
      expect(meanwhile).toStrictEqual(Array(5).fill('store_unavailable'));
      expect(await reconnecting).toBe('store_unavailable');
      expect(settled).toStrictEqual(['the calls made meanwhile', 'the call that reconnects']);

      await relay.restore();
      expect(await outcome(store.getSuppression('p', hash))).toBe('answered');
      expect(await Promise.all(Array.from({ length: 5 }, () => outcome(store.getSuppression('p', hash))))).toStrictEqual(
        Array(5).fill('answered'),
      );
    } finally {
      await client.end({ timeout: 0 });
      await relay.cut();
      await drop();
    }
  });
});

describe('invalidations through LISTEN/NOTIFY', () => {
  /** Collects invalidations; `next(n)` waits for n more. */
  function collector() {
    const received: SuppressionInvalidation[] = [];
    let wake: (() => void) | undefined;
    return {
      received,
      listener: (invalidation: SuppressionInvalidation) => {
        received.push(invalidation);
        wake?.();
      },
      async until(predicate: () => boolean, what: string) {
        const deadline = Date.now() + 5000;
        while (!predicate()) {
          if (Date.now() > deadline) throw new Error(`no invalidation: ${what}`);
          await new Promise<void>((resolve) => {
            wake = resolve;
            setTimeout(resolve, 50);
          });
        }
      },
    };
  }

  test("another instance's writes reach this one, after commit, once per write that changed something", async () => {
    const { schema, store: writer, drop } = await freshStore(sql);
    const otherClient = connect({ max: 2 });
    const reader = createPostgresStore({ sql: otherClient, schema });
    const { store: otherSchema, drop: dropOther } = await freshStore(sql);
    const seen = collector();
    const stop = await reader.subscribeInvalidations(seen.listener);
    try {
      const [a, b, c] = ['a@example.com', 'b@example.com', 'c@example.com'];
      const record = (email: string) => ({ hash: hashEmail(email), email, reason: 'manual' as const, createdAt: T });

      await writer.addSuppression('acme', record(a));
      await seen.until(() => seen.received.length === 1, 'add');
      expect(seen.received).toStrictEqual([{ projectId: 'acme', hashes: [hashEmail(a)] }]);

      // Not created, not removed, not changed, or another schema: no invalidation. The write after them
      // is delivered after anything they would have sent (notifications arrive in commit order).
      await writer.addSuppression('acme', record(a));
      await writer.removeSuppression('acme', hashEmail(c));
      await writer.applyEvents('acme', [event({ suppression: { email: a, reason: 'manual', at: T + 9 } })]);
      await otherSchema.addSuppression('acme', record(c));
      await writer.removeSuppression('acme', hashEmail(a));
      await seen.until(() => seen.received.length === 2, 'remove');
      expect(seen.received[1]).toStrictEqual({ projectId: 'acme', hashes: [hashEmail(a)] });

      await writer.applyEvents('acme', [
        event({ suppression: { email: b, reason: 'hard_bounce', at: T } }),
        event({ suppression: { email: c, reason: 'complaint', at: T } }),
      ]);
      await seen.until(() => seen.received.length === 3, 'applyEvents');
      expect(seen.received[2]).toStrictEqual({ projectId: 'acme', hashes: [hashEmail(b), hashEmail(c)].sort() });

      await stop();
      await writer.addSuppression('acme', record(a));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(seen.received).toHaveLength(3);
    } finally {
      await reader.close();
      await otherClient.end();
      await dropOther();
      await drop();
    }
  });

  test('probeInvalidations tells whether every subscription listens now: false while one is reconnecting', async () => {
    const { schema, store: writer, drop } = await freshStore(sql);
    // A role of its own, so that its connections can be kept from coming back while those already open work.
    const role = `mw_listener_${randomBytes(6).toString('hex')}`;
    await sql.unsafe(`CREATE ROLE ${role} LOGIN`);
    const own = connect({ user: role, max: 1, backoff: () => 0.02 });
    const store = createPostgresStore({ sql: own, schema });
    const seen = collector();
    try {
      expect(await store.probeInvalidations(1000)).toBe(true); // nothing to hear it
      await store.subscribeInvalidations(seen.listener);
      expect(await store.probeInvalidations(1000)).toBe(true);

      // The LISTEN connection drops and cannot come back; the pool's connection still works.
      await sql.unsafe(`ALTER ROLE ${role} NOLOGIN`);
      const terminated = await sql.unsafe(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1 AND query ILIKE 'listen %'`,
        [role],
      );
      expect(terminated).toHaveLength(1);
      expect(await store.probeInvalidations(300)).toBe(false);

      await sql.unsafe(`ALTER ROLE ${role} LOGIN`);
      const deadline = Date.now() + 5000;
      while (!(await store.probeInvalidations(300))) {
        if (Date.now() > deadline) throw new Error('the listener did not come back');
      }
      // Back for real: an invalidation reaches it, and probes never reach a listener.
      await writer.addSuppression('acme', { hash: hashEmail('a@example.com'), email: 'a@example.com', reason: 'manual', createdAt: T });
      await seen.until(() => seen.received.length === 1, 'add');
      expect(seen.received).toStrictEqual([{ projectId: 'acme', hashes: [hashEmail('a@example.com')] }]);
    } finally {
      await store.close();
      await own.end({ timeout: 0 });
      await sql.unsafe(`DROP ROLE ${role}`);
      await drop();
    }
  });

  test('a batch suppressing many addresses is split into notifications under 8000 bytes', async () => {
    const { schema, store, drop } = await freshStore(sql);
    const payloads: string[] = [];
    const listening = await sql.listen(INVALIDATION_CHANNEL, (payload) => {
      if (JSON.parse(payload).schema === schema) payloads.push(payload);
    });
    const seen = collector();
    const stop = await store.subscribeInvalidations(seen.listener);
    try {
      const emails = Array.from({ length: 300 }, (_, i) => `user${i}@example.com`);
      const projectId = `project-${'x'.repeat(200)}`;
      await store.applyEvents(
        projectId,
        emails.map((email) => event({ suppression: { email, reason: 'complaint', at: T } })),
      );
      const hashes = () => seen.received.flatMap((invalidation) => invalidation.hashes);
      await seen.until(() => hashes().length === 300, 'all 300 hashes');
      expect(new Set(hashes())).toStrictEqual(new Set(emails.map((email) => hashEmail(email))));
      expect(seen.received.every((invalidation) => invalidation.projectId === projectId)).toBe(true);
      expect(payloads.length).toBeGreaterThan(1);
      for (const payload of payloads) expect(Buffer.byteLength(payload)).toBeLessThan(8000);
    } finally {
      await stop();
      await listening.unlisten();
      await drop();
    }
  });
});

describe('retention: purgeExpired', () => {
  const DAY = 86_400_000;

  test('deletes messages whose last event is older than the retention and dedup keys seen before then; counters and suppressions stay', async () => {
    const { schema, store, drop } = await freshStore(sql, { retention: { messagesMs: 30 * DAY } });
    try {
      const now = Date.now();
      const old = now - 40 * DAY;
      const project = 'acme';
      await store.applyEvents(project, [
        event({ message: { id: 'old-1', trackingId: 'camp', facts: Fact.delivered, at: old } }),
        event({ message: { id: 'old-2', trackingId: 'camp', facts: Fact.complained, at: old + 1 } }),
        event({ message: { id: 'new-1', trackingId: 'camp', facts: Fact.hard_bounced, at: now - DAY } }),
        event({ message: { id: 'old-3', trackingId: 'gone', facts: Fact.delivered, at: old } }),
        event({ message: { id: 'old-4', facts: Fact.delivered, at: old } }),
        // Old first event, recent last one: kept.
        event({ message: { id: 'kept', trackingId: 'gone', facts: Fact.sent, at: old } }),
        event({ message: { id: 'kept', trackingId: 'gone', facts: Fact.delivered, at: now - 2 * DAY } }),
        event({ suppression: { email: 'old@example.com', reason: 'hard_bounce', at: old } }),
      ]);
      await store.applyEvents('other', [event({ message: { id: 'old-5', trackingId: 'x', facts: Fact.sent, at: old } })]);
      const counters = await store.listTrackingIds(project, { limit: 10 });
      expect(counters).toStrictEqual([
        {
          trackingId: 'camp',
          messages: 3,
          delivered: 1,
          bounced: 1,
          complained: 1,
          lastEventAt: now - DAY,
          opened: 0,
          clicked: 0,
          unsubscribed: 0,
        },
        {
          trackingId: 'gone',
          messages: 2,
          delivered: 2,
          bounced: 0,
          complained: 0,
          lastEventAt: now - 2 * DAY,
          opened: 0,
          clicked: 0,
          unsubscribed: 0,
        },
      ]);

      expect(await store.purgeExpired(now)).toBe(5);
      const ids = async (projectId: string) => (await store.listMessages(projectId, { limit: 10 })).map((message) => message.messageId);
      expect((await ids(project)).sort()).toStrictEqual(['kept', 'new-1']);
      expect(await ids('other')).toStrictEqual([]);
      // Counters are totals of what was recorded: purging messages does not lower them.
      expect(await store.listTrackingIds(project, { limit: 10 })).toStrictEqual(counters);
      expect(await store.getSuppression(project, hashEmail('old@example.com'))).toMatchObject({ reason: 'hard_bounce' });
      expect(await store.purgeExpired(now)).toBe(0);

      // A message leaving a row whose other messages were purged: lastEventAt has nothing to be
      // recomputed from, and stays.
      await store.applyEvents(project, [event({ message: { id: 'kept', trackingId: 'a-first', facts: Fact.sent, at: now } })]);
      expect(await store.listTrackingIds(project, { limit: 10 })).toStrictEqual([
        {
          trackingId: 'a-first',
          messages: 1,
          delivered: 1,
          bounced: 0,
          complained: 0,
          lastEventAt: now,
          opened: 0,
          clicked: 0,
          unsubscribed: 0,
        },
        counters[0],
        {
          trackingId: 'gone',
          messages: 1,
          delivered: 1,
          bounced: 0,
          complained: 0,
          lastEventAt: now - 2 * DAY,
          opened: 0,
          clicked: 0,
          unsubscribed: 0,
        },
      ]);

      // Dedup keys are kept for the retention after they were first seen (by the database clock).
      const keys = async () => (await sql.unsafe(`SELECT count(*)::int AS n FROM "${schema}".event_keys`))[0]!.n;
      expect(await keys()).toBe(10);
      expect(await store.purgeExpired(now + 31 * DAY)).toBe(2);
      expect(await keys()).toBe(0);
    } finally {
      await drop();
    }
  });

  test("a message's timeline goes with it, whoever deletes it; the others' stay", async () => {
    const { schema, store, drop } = await freshStore(sql, { retention: { messagesMs: DAY } });
    try {
      const now = Date.now();
      const withEntry = (stored: StoredEvent): StoredEvent => ({
        ...stored,
        timelineEntry: {
          id: randomBytes(16).toString('hex'),
          eventKey: stored.key,
          type: 'delivered',
          provider: 'ses',
          occurredAt: stored.message!.firstEventAt,
        },
      });
      const events = ['old-1', 'old-2', 'fresh', 'by-hand'].map((id) =>
        withEntry(event({ message: { id, facts: Fact.delivered, at: id.startsWith('old') ? now - 2 * DAY : now } })),
      );
      await store.applyEvents('acme', events);
      await store.applyEvents('other', [withEntry(event({ message: { id: 'old-1', facts: Fact.delivered, at: now } }))]);
      const entries = async () =>
        (
          await sql.unsafe(`SELECT project_id || ':' || m.message_id AS message FROM "${schema}".timeline_entries t
           LEFT JOIN "${schema}".messages m USING (project_id) WHERE m.key = t.message_key ORDER BY 1`)
        ).map((row) => row.message as string);
      const orphans = async () =>
        (
          await sql.unsafe(`SELECT count(*)::int AS n FROM "${schema}".timeline_entries t
           WHERE NOT EXISTS (SELECT FROM "${schema}".messages m WHERE m.project_id = t.project_id AND m.key = t.message_key)`)
        )[0]!.n;

      expect(await store.purgeExpired(now)).toBe(2);
      expect(await entries()).toStrictEqual(['acme:by-hand', 'acme:fresh', 'other:old-1']);
      await sql.unsafe(`DELETE FROM "${schema}".messages WHERE project_id = 'acme' AND message_id = 'by-hand'`);
      expect(await entries()).toStrictEqual(['acme:fresh', 'other:old-1']);
      expect(await orphans()).toBe(0);
    } finally {
      await drop();
    }
  });

  test('purges in bounded batches', async () => {
    const { store, drop } = await freshStore(sql, { retention: { messagesMs: DAY } });
    try {
      const now = Date.now();
      const project = 'acme';
      // 2 500 expired messages: three statements of the sweep.
      const expired = Array.from({ length: 2500 }, (_, i) =>
        event({ message: { id: `old-${i}`, trackingId: i % 2 === 0 ? 'even' : 'odd', facts: Fact.delivered, at: now - 10 * DAY + i } }),
      );
      for (let i = 0; i < expired.length; i += 500) await store.applyEvents(project, expired.slice(i, i + 500));
      await store.applyEvents(project, [event({ message: { id: 'fresh', trackingId: 'even', facts: Fact.sent, at: now } })]);
      expect(await store.purgeExpired(now)).toBe(2500);
      expect((await store.listMessages(project, { limit: 10 })).map((message) => message.messageId)).toStrictEqual(['fresh']);
      expect((await store.listMessages(project, { limit: 10, trackingId: 'odd' })).length).toBe(0);
    } finally {
      await drop();
    }
  });

  test('without a retention nothing expires', async () => {
    const { store, drop } = await freshStore(sql);
    try {
      await store.applyEvents('acme', [event({ message: { id: 'm', facts: Fact.sent, at: 0 } })]);
      expect(await store.purgeExpired(Date.now())).toBe(0);
      expect(await store.listMessages('acme', { limit: 10 })).toHaveLength(1);
    } finally {
      await drop();
    }
  });
});
