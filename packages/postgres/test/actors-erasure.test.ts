// The PostgreSQL side of issue 27 beyond what conformance compares (docs/storage.md, "Actors, erasure,
// keys and rate limits (PostgreSQL)"): actors as the column `changes.actor`, NULL unless given; status
// changes of a batch with and without actors; migration 14 on a schema at version 13 keeps every row;
// the rate counters' table is UNLOGGED and the sweep deletes only ended windows; erasure as rows.
import { createEmailHasher, Fact, messageKey, timelineEntryId, type StoredEvent, type SuppressionRecord } from '@mailwarden/core/store';
import { afterAll, describe, expect, test } from 'vitest';
import { createPostgresStore, migrate, migrations } from '../src/index.js';
import { connect, dumpSchema, freshStore, randomSchema } from './database.js';

const sql = connect({ max: 4 });
afterAll(() => sql.end());

const hashEmail = createEmailHasher();
const T = Date.UTC(2026, 0, 1);
const project = 'acme';

/** A hard bounce of message `id` to `recipient`, its suppression with a diagnostic that quotes the address. */
function hardBounce(id: string, at: number, recipient: string, actor?: string): StoredEvent {
  const key = messageKey('postmark', id, recipient);
  const eventKey = `postmark:${id}:${recipient}`;
  const suppression: SuppressionRecord = {
    hash: hashEmail(recipient),
    email: recipient,
    reason: 'hard_bounce',
    createdAt: at,
    provenance: {
      source: 'webhook',
      at,
      event: { provider: 'postmark', messageId: id, eventId: timelineEntryId(eventKey), diagnostic: `550 ${recipient} unknown` },
    },
  };
  const facts = Fact.sent | Fact.hard_bounced;
  return {
    key: eventKey,
    message: {
      key,
      provider: 'postmark',
      messageId: id,
      recipient,
      trackingId: null,
      stream: null,
      facts,
      firstEventAt: at,
      lastEventAt: at,
    },
    trackingIdSearchKey: null,
    timelineEntry: { id: timelineEntryId(eventKey), eventKey: `${id}:${recipient}`, type: 'bounced', provider: 'postmark', occurredAt: at },
    suppression,
    ...(actor !== undefined && { actor }),
  };
}

describe('actors as a column of the feed', () => {
  test('stored only when given: a batch mixing events with and without one, and a write without one', async () => {
    const { schema, store, drop } = await freshStore(sql, { changes: {} });
    try {
      await store.applyEvents(
        project,
        [hardBounce('m1', T + 1, 'ana@example.com', 'webhook:postmark:bounced'), hardBounce('m2', T + 2, 'bo@example.com')],
        {
          now: T + 2,
        },
      );
      await store.removeSuppression(project, hashEmail('bo@example.com'), undefined, T + 3);
      const rows = await sql.unsafe(`SELECT seq::int, kind, actor, jsonb_typeof(data) AS shape, CASE WHEN jsonb_typeof(data) = 'array'
        THEN jsonb_array_length(data) END AS length FROM "${schema}".changes ORDER BY seq`);
      expect(rows.map((row) => ({ ...row }))).toEqual([
        { seq: 1, kind: 'suppression.added', actor: 'webhook:postmark:bounced', shape: 'object', length: null },
        { seq: 2, kind: 'message.status_changed', actor: 'webhook:postmark:bounced', shape: 'array', length: 14 },
        { seq: 3, kind: 'suppression.added', actor: null, shape: 'object', length: null },
        { seq: 4, kind: 'message.status_changed', actor: null, shape: 'array', length: 14 },
        { seq: 5, kind: 'suppression.removed', actor: null, shape: 'object', length: null },
      ]);
      const { changes } = await store.listChanges(project, { after: 0, limit: 10, actors: ['webhook'] });
      expect(changes.map(({ seq }) => seq)).toEqual([1, 2]);
      expect(changes.every((change) => change.actor === 'webhook:postmark:bounced')).toBe(true);
    } finally {
      await drop();
    }
  });
});

describe('migration 14 on a schema at version 13', () => {
  test('keeps every change as it was, without an actor', async () => {
    const schema = randomSchema();
    const names = { identifier: `"${schema}"`, literal: `'${schema}'` };
    try {
      await sql.begin(async (tx) => {
        await tx.unsafe(`CREATE SCHEMA "${schema}"`);
        await tx.unsafe(`CREATE TABLE "${schema}".mailwarden_migrations (
          version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
        for (const migration of migrations.filter(({ version }) => version <= 13)) {
          await tx.unsafe(migration.sql(names));
          await tx.unsafe(`INSERT INTO "${schema}".mailwarden_migrations (version, name) VALUES ($1, $2)`, [
            migration.version,
            migration.name,
          ]);
        }
        await tx.unsafe(
          `INSERT INTO "${schema}".changes (project_id, seq, at, kind, data)
          VALUES ('acme', 1, $1::bigint, 'stream.paused', '{"stream": "news", "cause": "operator"}')`,
          [T],
        );
        await tx.unsafe(`INSERT INTO "${schema}".change_counters (project_id, last_seq) VALUES ('acme', 1)`);
      });
      expect((await migrate(sql, { schema })).applied).toStrictEqual([14]);
      const store = createPostgresStore({ sql, schema, changes: {} });
      await store.pauseStream(project, 'promo', T + 1, 'key:ops');
      expect((await store.listChanges(project, { after: 0, limit: 10 })).changes).toStrictEqual([
        { seq: 1, at: T, kind: 'stream.paused', stream: 'news', cause: 'operator' },
        { seq: 2, at: T + 1, kind: 'stream.paused', stream: 'promo', cause: 'operator', actor: 'key:ops' },
      ]);
    } finally {
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});

describe('rate counters', () => {
  test('an UNLOGGED table; the sweep deletes ended windows and keeps the current one', async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      const [table] = await sql.unsafe(
        `SELECT c.relpersistence FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'rate_limits'`,
        [schema],
      );
      expect(table!.relpersistence).toBe('u');
      expect(await store.hitRateLimits(['client:a', 'key:ops', 'client:a'], 60_000, T + 1)).toEqual([2, 1, 2]);
      expect(await store.hitRateLimits(['client:a'], 60_000, T + 60_000)).toEqual([1]);
      // Another window length is another count, even where the windows end together.
      expect(await store.hitRateLimits(['client:a'], 120_000, T + 60_000)).toEqual([1]);
      await store.purgeExpired(T + 60_000);
      const rows = await sql.unsafe(`SELECT bucket, window_ms::int, window_end::float8, count FROM "${schema}".rate_limits ORDER BY 1, 2`);
      expect(rows.map((row) => ({ ...row }))).toEqual([
        { bucket: 'client:a', window_ms: 60_000, window_end: T + 120_000, count: 1 },
        { bucket: 'client:a', window_ms: 120_000, window_end: T + 120_000, count: 1 },
      ]);
    } finally {
      await drop();
    }
  });
});

describe('erasure as rows', () => {
  test('the diagnostic and the dedup keys that embed the address go; the other address keeps every row', async () => {
    const { schema, store, drop } = await freshStore(sql, { changes: {} });
    try {
      const ana = 'ana@example.com';
      await store.applyEvents(project, [hardBounce('m1', T + 1, ana), hardBounce('m2', T + 2, 'bo@example.com')], { now: T + 2 });
      const before = await dumpSchema(sql, schema);
      const hash = hashEmail(ana);
      const placeholder = `${hash.slice(0, 16)}@erased.invalid`;
      const result = await store.eraseAddress(project, {
        hash,
        email: ana,
        forms: [ana],
        suppression: { hash, email: placeholder, reason: 'manual', createdAt: T + 5, provenance: { source: 'api', at: T + 5 } },
        now: T + 5,
        actor: 'key:ops',
      });
      expect(result.messages).toBe(1);
      expect(result.changes).toBe(2);
      expect(result.records).toHaveLength(1);
      expect(result.records[0]!.email).toBe(placeholder);
      expect(result.records[0]!.provenance?.event?.diagnostic).toBeNull();
      const after = await dumpSchema(sql, schema);
      expect(after.includes(ana)).toBe(false);
      // Bo's rows, every one, are in the dump after as they were before.
      const bos = (dump: string) => dump.split('\n').filter((line) => line.includes('bo@example.com'));
      expect(bos(after)).toEqual(bos(before));
      expect(bos(before).length).toBeGreaterThanOrEqual(5);
    } finally {
      await drop();
    }
  });
});
