// What expiry, the soft-bounce rule and the allowlist persist, read through SQL (docs/storage-internals.md,
// "Expiry, the soft-bounce rule and the allowlist"): nothing new without configuration, the rule's
// provenance in packProvenance's layout, the history one row per address, the bounded sweep, and
// migration 12 on a schema at version 11.
import {
  createEmailHasher,
  packProvenance,
  packRuleBounce,
  storedSoftBounceRule,
  type StoredEvent,
  type SuppressionCause,
  type SuppressionRecord,
} from '@mailwarden/core/store';
import { afterAll, describe, expect, test } from 'vitest';
import { migrate, migrations } from '../src/index.js';
import { connect, freshStore, randomSchema } from './database.js';

const sql = connect({ max: 4 });
const hashEmail = createEmailHasher();
afterAll(() => sql.end());

const T = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;
const project = 'acme';
const email = 'ana@example.com';
const hash = hashEmail(email);
const rule = storedSoftBounceRule({ softBounces: { bounces: 2, days: 1 } })!;

/** A soft bounce of message `message` at `at`, as the service prepares it for a store. */
function softBounce(message: string, at: number): StoredEvent {
  const eventId = `${message}${'0'.repeat(32)}`.slice(0, 32);
  const cause: SuppressionCause = { provider: 'postmark', messageId: message, eventId, diagnostic: '452 mailbox full' };
  return {
    key: `postmark:${message}`,
    message: null,
    trackingIdSearchKey: null,
    suppression: null,
    ruleInput: {
      kind: 'soft_bounce',
      hash,
      email,
      at,
      message,
      cause,
      packed: packRuleBounce(cause, at),
      causeJson: JSON.stringify([cause.provider, cause.messageId, cause.diagnostic]),
    },
  };
}

/** A hard bounce as the policy suppresses it: a webhook suppression of its own. */
function hardBounce(key: string, at: number): StoredEvent {
  const event = { provider: 'postmark' as const, messageId: key, eventId: `${key}${'1'.repeat(32)}`.slice(0, 32), diagnostic: null };
  return {
    key: `postmark:${key}`,
    message: null,
    trackingIdSearchKey: null,
    suppression: { hash, email, reason: 'hard_bounce', createdAt: at, provenance: { source: 'webhook', at, event } },
  };
}

describe('expiry, the rule and the allowlist, read through SQL', () => {
  test('without a rule, an expiry or an allowlist, every new column is NULL and the new tables stay empty', async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      await store.applyEvents(project, [hardBounce('h1', T), softBounce('m1', T + 1)], { now: T + 2 });
      await store.addSuppression(
        project,
        { hash: hashEmail('bo@example.com'), email: 'bo@example.com', reason: 'manual', createdAt: T },
        T,
      );
      await store.mergeSuppressions(
        project,
        [{ hash: hashEmail('cy@example.com'), email: 'cy@example.com', reason: 'complaint', createdAt: T }],
        T,
      );
      const [row] = await sql.unsafe(`SELECT count(*)::int AS rows,
          count(*) FILTER (WHERE expires_at IS NULL AND cause_rule IS NULL AND allowlisted IS NULL)::int AS unset
        FROM "${schema}".suppressions`);
      expect(row).toStrictEqual({ rows: 3, unset: 3 });
      const [tables] = await sql.unsafe(`SELECT (SELECT count(*)::int FROM "${schema}".soft_bounces) AS soft_bounces,
          (SELECT count(*)::int FROM "${schema}".allowlist) AS allowlist`);
      expect(tables).toStrictEqual({ soft_bounces: 0, allowlist: 0 });
    } finally {
      await drop();
    }
  });

  test("the rule's suppression keeps packProvenance's rule part; the history is one row per address, gone with the removal", async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      const options = { now: T + 2 * HOUR, softBounces: rule };
      expect(await store.applyEvents(project, [softBounce('m1', T)], options)).toStrictEqual(['applied']);
      const [history] = await sql.unsafe(
        `SELECT hash, bounces, last_delivery, forget_at::float8 AS forget_at FROM "${schema}".soft_bounces`,
      );
      expect(history).toStrictEqual({
        hash,
        bounces: [[T, cause('m1').eventId, 'm1', packRuleBounce(cause('m1'), T)]],
        last_delivery: null,
        forget_at: T + rule.keepMs,
      });

      expect(await store.applyEvents(project, [softBounce('m2', T + HOUR)], options)).toStrictEqual(['suppressed']);
      const record = (await store.getSuppression(project, hash, undefined, options.now)) as SuppressionRecord;
      const [stored] = await sql.unsafe(`SELECT cause_rule, expires_at::float8 AS expires_at FROM "${schema}".suppressions`);
      // The rule part of the packed provenance, as Redis keeps it whole.
      const packed = JSON.parse(packProvenance(record.provenance!).split(',').slice(2).join(',')) as unknown[];
      expect(JSON.parse(stored!.cause_rule)).toStrictEqual(packed[3]);
      expect(stored!.expires_at).toBe(T + HOUR + rule.expiresAfterMs!);
      expect(record.expiresAt).toBe(T + HOUR + rule.expiresAfterMs!);

      await store.removeSuppression(project, hash);
      expect([...(await sql.unsafe(`SELECT count(*)::int AS n FROM "${schema}".soft_bounces`))]).toStrictEqual([{ n: 0 }]);
    } finally {
      await drop();
    }
  });

  test('purgeExpired deletes expired suppressions of every list in bounded statements, and history nothing is left of', async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      // 1 005 expired (two statements of the sweep), in the project-wide list and a stream's; one not yet.
      await sql.unsafe(
        `INSERT INTO "${schema}".suppressions (project_id, hash, email, reason, created_at, expires_at, stream)
         SELECT 'acme', lpad(to_hex(i), 64, '0'), 'user' || i || '@example.com', 1, $1::bigint, $1::bigint + i,
                CASE WHEN i % 2 = 0 THEN '' ELSE 'marketing' END
         FROM generate_series(1, 1006) AS i`,
        [T],
      );
      await sql.unsafe(
        `INSERT INTO "${schema}".soft_bounces (project_id, hash, bounces, last_delivery, forget_at)
         VALUES ('acme', $1, '[]', $2::bigint, $2::bigint + 10), ('acme', $3, '[]', $2::bigint, $2::bigint + 2000)`,
        [hash, T, hashEmail('bo@example.com')],
      );
      expect(await store.purgeExpired(T + 1005)).toBe(1005);
      const [left] = await sql.unsafe(`SELECT (SELECT array_agg(expires_at::float8) FROM "${schema}".suppressions) AS suppressions,
          (SELECT array_agg(hash) FROM "${schema}".soft_bounces) AS histories`);
      expect(left).toStrictEqual({ suppressions: [T + 1006], histories: [hashEmail('bo@example.com')] });
      expect(await store.purgeExpired(T + 1005)).toBe(0);
    } finally {
      await drop();
    }
  });

  test("the previous release's merge rows, a bare array without a clock, still join (a rolling deploy)", async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      // Expired long ago by any clock, but the previous release sends none: nothing counts as expired.
      await store.addSuppression(project, { hash, email, reason: 'manual', createdAt: T, expiresAt: T + 1 });
      const rows = JSON.stringify([{ hash, email, reason: 2, created_at: T + 5, source: 'import', source_at: T + 5 }]);
      const [row] = await sql.unsafe(`SELECT "${schema}".mailwarden_merge_suppressions($1, $2::text::jsonb) AS codes`, [project, rows]);
      expect(row!.codes).toBe('1');
      expect(await store.getSuppression(project, hash)).toStrictEqual({
        hash,
        email,
        reason: 'hard_bounce',
        createdAt: T,
        provenance: { source: 'import', at: T + 5 },
      });
    } finally {
      await drop();
    }
  });

  test('an allowlisted address that hard-bounces is recorded and not suppressed; its soft bounces keep no history', async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      await store.addAllowlistEntry(project, { key: '@example.com', entry: '@example.com', createdAt: T });
      const options = { now: T + 2 * HOUR, softBounces: rule };
      expect(await store.applyEvents(project, [hardBounce('h1', T), softBounce('m1', T), softBounce('m2', T + 1)], options)).toStrictEqual([
        'applied',
        'applied',
        'applied',
      ]);
      const [counts] = await sql.unsafe(`SELECT (SELECT count(*)::int FROM "${schema}".suppressions) AS suppressions,
          (SELECT count(*)::int FROM "${schema}".soft_bounces) AS histories, (SELECT count(*)::int FROM "${schema}".event_keys) AS keys`);
      expect(counts).toStrictEqual({ suppressions: 0, histories: 0, keys: 3 });
    } finally {
      await drop();
    }
  });
});

describe('migration 12 on a schema at version 11', () => {
  test('keeps every row as it was, each new column NULL', async () => {
    const schema = randomSchema();
    const names = { identifier: `"${schema}"`, literal: `'${schema}'` };
    try {
      await sql.begin(async (tx) => {
        await tx.unsafe(`CREATE SCHEMA "${schema}"`);
        await tx.unsafe(`CREATE TABLE "${schema}".mailwarden_migrations (
          version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
        for (const migration of migrations.filter(({ version }) => version <= 11)) {
          await tx.unsafe(migration.sql(names));
          await tx.unsafe(`INSERT INTO "${schema}".mailwarden_migrations (version, name) VALUES ($1, $2)`, [
            migration.version,
            migration.name,
          ]);
        }
        await tx.unsafe(
          `INSERT INTO "${schema}".suppressions (project_id, hash, email, reason, created_at, source, source_at, stream)
           SELECT 'acme', lpad(to_hex(i), 64, '0'), 'user' || i || '@example.com', 1 + i % 3, $1::bigint + i, 'api', $1::bigint + i,
                  CASE WHEN i % 5 = 0 THEN 'marketing' ELSE '' END
           FROM generate_series(1, 50) AS i`,
          [T],
        );
      });
      const before = await sql.unsafe(`SELECT * FROM "${schema}".suppressions ORDER BY hash, stream`);
      expect((await migrate(sql, { schema })).applied).toStrictEqual([12, 13, 14]);
      const after = await sql.unsafe(
        `SELECT *, expires_at IS NULL AND cause_rule IS NULL AND allowlisted IS NULL AS unset FROM "${schema}".suppressions ORDER BY hash, stream`,
      );
      expect(after.map(({ expires_at: _e, cause_rule: _r, allowlisted: _a, unset: _u, ...row }) => row)).toStrictEqual([...before]);
      expect(after.every((row) => row.unset)).toBe(true);
    } finally {
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});

function cause(message: string): SuppressionCause {
  const input = softBounce(message, 0).ruleInput;
  if (input?.kind !== 'soft_bounce') throw new Error('a soft bounce');
  return input.cause;
}
