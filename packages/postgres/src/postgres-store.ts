import { randomUUID } from 'node:crypto';
import { MailwardenError, type Provider, type Store } from '@mailwarden/core';
import {
  eventOutcomeOfCode,
  packRule,
  packRuleBounce,
  reasonFromRank,
  reasonRank,
  statusCodes,
  statColumns,
  sumHours,
  trackingIdSearchKey,
  HOUR_MS,
  changeFeedRetention,
  ruleActors,
  type AlertWindow,
  type AddressErasure,
  type AllowlistEntry,
  type ApplyEventsOptions,
  type Change,
  type ChangeFeedOptions,
  type ChangeKind,
  type ChangeQuery,
  type KeyChange,
  type MessageStatus,
  type OutboundState,
  type DeliveryInput,
  type SoftBounceInput,
  type MessageRecord,
  type SoftBounceRuleCause,
  type SuppressionMergeOutcome,
  type StoredEvent,
  type SuppressionInvalidation,
  type SuppressionRecord,
  type TimelineEntry,
  type TrackingIdRecord,
  type WebhookTokenClaim,
} from '@mailwarden/core/store';
import type { ListenMeta, Sql } from 'postgres';
import { INVALIDATION_CHANNEL, schemaNames } from './schema-names.js';

export interface PostgresStoreOptions {
  /** A postgres.js client. It stays the caller's: `close()` does not end it. */
  sql: Sql<any>;
  /** The schema `migrate()` created. Default `mailwarden`. */
  schema?: string;
  /**
   * How long messages and their dedup keys are kept. `purgeExpired(now)` deletes messages whose last
   * event is older than `messagesMs`, and dedup keys first seen before then; nothing expires by itself.
   * Tracking-ID counters are totals and stay. Default: kept forever. (Expired one-time webhook tokens,
   * suppressions past their `expiresAt` and forgotten soft-bounce history are purged whatever this says.)
   */
  retention?: { messagesMs: number };
  /**
   * Keeps a change feed (docs/storage.md, "The change feed"): every write appends what it changed, in
   * its transaction. Absent: nothing is appended and writes run the statements they ran before.
   */
  changes?: ChangeFeedOptions;
}

/** A `Store` whose optional parts this store always has, and a probe of its invalidation listeners. */
export type PostgresStore = Store &
  Required<Pick<Store, 'subscribeInvalidations' | 'claimWebhookToken' | 'purgeExpired' | 'hitRateLimits'>> & {
    /**
     * Whether invalidations reach this store's subscriptions now: sends a probe notification on the
     * invalidation channel (other listeners ignore it) and resolves `true` once every subscription has
     * heard it, or `false` if one has not within `timeoutMs`: its connection is down or not listening
     * again yet, and invalidations sent meanwhile are lost to it. `true` at once without subscriptions.
     * Rejects with `store_unavailable` when the probe cannot be sent. For readiness checks.
     */
    probeInvalidations(timeoutMs: number): Promise<boolean>;
  };

/** Messages deleted per statement by `purgeExpired` (dedup keys and webhook tokens: ten times as many), so no sweep holds locks for long. */
const PURGE_BATCH = 1000;
/** Suppressions per `mailwarden_merge_suppressions` call, and hashes per bulk delete: one round trip each. */
const MERGE_BATCH = 1000;
/** Rows a store merges in bulk between two ANALYZEs of the suppressions table (see `mergeSuppressions`). */
const ANALYZE_EVERY = 50_000;

/** What a `mailwarden_apply_events` older than the columns answers them with ("cannot extract elements from an object"). */
const OBJECT_NOT_ARRAY = '22023';

/** Deadlocks and serialization failures are retried this many times before giving up. */
const CONFLICT_RETRIES = 4;

/**
 * A `Store` in PostgreSQL, over an injected postgres.js client. Every operation is one statement, so
 * one round trip and one transaction; `applyEvents` is one call of a function that `migrate()`
 * installs. Run `migrate(sql, { schema })` before the first use.
 *
 * Rows are read as arrays (`.values()`) and times cast to float8, so the client's own `transform` and
 * `types` settings cannot change what the store returns.
 *
 * @example
 * import postgres from 'postgres';
 * import { createMailwarden } from '@mailwarden/core';
 * import { createPostgresStore, migrate } from '@mailwarden/postgres';
 *
 * const sql = postgres(process.env.DATABASE_URL!);
 * await migrate(sql, { schema: 'mailwarden' });
 * const mailwarden = createMailwarden({ store: createPostgresStore({ sql, schema: 'mailwarden' }) });
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  const { sql } = options;
  const schema = options.schema ?? 'mailwarden';
  const { identifier: s, literal } = schemaNames(schema);
  const messagesMs = options.retention?.messagesMs;
  if (messagesMs !== undefined && !(Number.isSafeInteger(messagesMs) && messagesMs > 0)) {
    throw new RangeError(`retention.messagesMs must be a positive integer: ${messagesMs}`);
  }
  const feed = options.changes === undefined ? undefined : changeFeedRetention(options.changes);
  /** One `subscribeInvalidations` call: its LISTEN, once it holds. */
  interface Subscription {
    listening?: ListenMeta;
  }
  const subscriptions = new Set<Subscription>();
  /** Probes on their way: the subscriptions that have not heard each yet, and what to call when none is left. */
  const probes = new Map<string, { unheard: Set<Subscription>; heard: () => void }>();
  const hear = (probe: string, subscription: Subscription) => {
    const waiting = probes.get(probe);
    if (waiting?.unheard.delete(subscription) && waiting.unheard.size === 0) waiting.heard();
  };
  /** Set when a statement found the server unreachable, cleared by the next one that gets through (see `attempt`). */
  let unreachable: { cause: unknown; reconnecting: boolean } | undefined;
  /** Rows merged in bulk since this store last analyzed the suppressions table. */
  let mergedSinceAnalyze = 0;

  /** One statement, prepared unless told otherwise; rows as arrays. */
  const query = (text: string, params: unknown[], prepare = true): Promise<any[][]> =>
    sql.unsafe(text, params as never[], { prepare }).values() as Promise<any[][]>;

  const invalidationOf = (hash: string) =>
    `pg_notify('${INVALIDATION_CHANNEL}', json_build_object('schema', ${literal}, 'projectId', $1::text, 'hashes', json_build_array(${hash}))::text)`;

  // Last, the list a row is in: '' for the project-wide one (docs/storage-internals.md, "Suppression lists per stream").
  const suppressionColumns =
    'hash, email, reason, created_at::float8, source, source_at::float8, cause_provider, cause_message_id, cause_event_id, cause_diagnostic, ' +
    'expires_at::float8, cause_rule, allowlisted, stream';
  /** A row that is not expired at `$n` (NULL: none is), as an SQL condition. */
  const unexpired = (n: number) => `NOT coalesce(expires_at <= $${n}::bigint, false)`;
  const trackingIdColumns = 'tracking_id, messages, delivered, bounced, complained, last_event_at::float8, opened, clicked, unsubscribed';
  // `addSuppression`'s insert, with and without the feed: the row, or one written over a row expired at $16.
  const insertSuppression = `INSERT INTO ${s}.suppressions AS s (project_id, hash, email, reason, created_at,
          source, source_at, cause_provider, cause_message_id, cause_event_id, cause_diagnostic, expires_at, cause_rule, allowlisted, stream)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $13, $14, $15, $12)
        ON CONFLICT (project_id, hash, stream) DO UPDATE SET email = excluded.email, reason = excluded.reason,
          created_at = excluded.created_at, source = excluded.source, source_at = excluded.source_at,
          cause_provider = excluded.cause_provider, cause_message_id = excluded.cause_message_id,
          cause_event_id = excluded.cause_event_id, cause_diagnostic = excluded.cause_diagnostic,
          expires_at = excluded.expires_at, cause_rule = excluded.cause_rule, allowlisted = excluded.allowlisted
        WHERE s.expires_at <= $16::bigint`;
  const statements = {
    // A check reads every list's row of the hash, one range of the primary key (project_id, hash, stream),
    // and `listOf` picks. No condition on `stream`: with `stream = ''`, the listing indexes, which lead
    // with (project_id, stream), matched as many columns as the primary key, and on a table not analyzed
    // yet (a fresh install that imports a list and checks at once) a generic plan walked the whole list
    // (1.9 ms a check at 10 000 rows, bench/check-probe.ts). These are the release before streams' statements.
    getSuppression: `SELECT ${suppressionColumns} FROM ${s}.suppressions WHERE project_id = $1 AND hash = $2`,
    // The hashes travel as one text parameter, so the call needs no array type set up in the client.
    // One primary-key probe per hash (LATERAL … OFFSET 0 keeps the planner from turning it into a join):
    // a prepared statement's generic plan, made while statistics said the table was small, scanned the
    // whole project per call once a bulk import had grown it (44 ms a call at 500 000 rows).
    getSuppressions: `SELECT x.* FROM unnest(string_to_array($2, ',')) AS h(hash)
      CROSS JOIN LATERAL (SELECT ${suppressionColumns} FROM ${s}.suppressions
                          WHERE project_id = $1 AND hash = h.hash OFFSET 0) x`,
    // Inserted, or written over a row expired at $16: one row (true). Present: the stored row (false).
    // No row: the conflicting row was committed after this statement's snapshot, so it cannot be read
    // here; the caller asks again.
    addSuppression: `WITH created AS (
        ${insertSuppression}
        RETURNING hash
      ), notified AS (
        SELECT ${invalidationOf('hash')} FROM created
      )
      SELECT true, NULL, NULL, NULL::float8, NULL, NULL::float8, NULL, NULL, NULL, NULL, NULL::float8, NULL, NULL, NULL FROM notified
      UNION ALL
      SELECT false, ${suppressionColumns.slice('hash, '.length)} FROM ${s}.suppressions
      WHERE project_id = $1 AND stream = $12 AND hash = $2 AND NOT EXISTS (SELECT FROM created)`,
    // From the project-wide list, the hash's soft-bounce history goes too: the rule counts afresh.
    removeSuppression: `WITH removed AS (
        DELETE FROM ${s}.suppressions WHERE project_id = $1 AND stream = $3 AND hash = $2 RETURNING ${suppressionColumns}
      ), forgotten AS (
        DELETE FROM ${s}.soft_bounces WHERE project_id = $1 AND $3 = '' AND hash = $2
      )
      SELECT ${suppressionColumns}, ${invalidationOf('hash')} FROM removed`,
    // Newest first is ascending (-created_at, hash): a row comparison starts an index range.
    // Rows expired at $n are skipped as the walk meets them (purgeExpired deletes them within the hour).
    firstSuppressions: `SELECT ${suppressionColumns} FROM ${s}.suppressions
      WHERE project_id = $1 AND stream = $2 AND ${unexpired(4)} ORDER BY -created_at, hash LIMIT $3`,
    nextSuppressions: `SELECT ${suppressionColumns} FROM ${s}.suppressions
      WHERE project_id = $1 AND stream = $2 AND (-created_at, hash) > ($3::bigint, $4) AND ${unexpired(6)} ORDER BY -created_at, hash LIMIT $5`,
    getTrackingId: `SELECT ${trackingIdColumns} FROM ${s}.tracking_ids WHERE project_id = $1 AND tracking_id = $2`,
    applyEvents: `SELECT ${s}.mailwarden_apply_events($1, $2::text::jsonb)`,
    mergeSuppressions: `SELECT ${s}.mailwarden_merge_suppressions($1, $2::text::jsonb)`,
    analyzeSuppressions: `ANALYZE ${s}.suppressions`,
    // One NOTIFY per 100 hashes, under its 8000-byte limit; the scalar subquery makes it run once.
    removeSuppressions: `WITH removed AS (
        DELETE FROM ${s}.suppressions WHERE project_id = $1 AND stream = $3 AND hash = ANY (string_to_array($2, ','))
        RETURNING ${suppressionColumns}
      ), forgotten AS (
        DELETE FROM ${s}.soft_bounces WHERE project_id = $1 AND $3 = '' AND hash = ANY (string_to_array($2, ','))
      ), notified AS (
        SELECT pg_notify('${INVALIDATION_CHANNEL}', json_build_object('schema', ${literal}, 'projectId', $1::text, 'hashes', json_agg(hash))::text)
        FROM (SELECT hash, (row_number() OVER () - 1) / 100 AS chunk FROM removed) r GROUP BY chunk
      )
      SELECT ${suppressionColumns}, (SELECT count(*) FROM notified) FROM removed`,
    // Hours summed per bucket of $5 hours ('' is the project's scope); zero buckets are dropped by sumHours.
    getStats: `SELECT floor(hour / $5::numeric)::float8 * $5,
        sum(delivered)::float8, sum(hard_bounced)::float8, sum(soft_bounced)::float8, sum(complained)::float8,
        sum(opened)::float8, sum(clicked)::float8, sum(unsubscribed)::float8
      FROM ${s}.stat_buckets WHERE project_id = $1 AND tracking_id = $2 AND hour >= $3 AND hour < $4
      GROUP BY 1`,
    // The message and its timeline in one statement; the entries as one JSON text, in timeline order.
    getMessage: `SELECT key, provider, message_id, recipient, tracking_id, facts, first_event_at::float8, last_event_at::float8, stream,
        (SELECT coalesce(json_agg(t.entry ORDER BY t.occurred_at, t.id), '[]')::text FROM ${s}.timeline_entries t
         WHERE t.project_id = m.project_id AND t.message_key = m.key)
      FROM ${s}.messages m WHERE project_id = $1 AND key = $2`,
    // The oldest expired messages, locked in key order as applyEvents locks them (so the two never
    // deadlock); one that got a newer event meanwhile fails the recheck and stays.
    purgeMessages: `WITH expired AS (
        SELECT key FROM ${s}.messages
        WHERE project_id = $1 AND last_event_at < $2 AND key IN (
          SELECT key FROM ${s}.messages WHERE project_id = $1 AND last_event_at < $2 ORDER BY last_event_at LIMIT $3)
        ORDER BY key
        FOR UPDATE
      )
      DELETE FROM ${s}.messages m USING expired e WHERE m.project_id = $1 AND m.key = e.key`,
    purgeEventKeys: `DELETE FROM ${s}.event_keys WHERE project_id = $1 AND key IN (
      SELECT key FROM ${s}.event_keys WHERE project_id = $1 AND seen_at < $2 LIMIT $3)`,
    // Insert-if-absent, then read, as addSuppression does. Inserted: 'first'. Present: the stored
    // digest decides. No row at all: a concurrent claim of the same token committed after this
    // statement's snapshot (ON CONFLICT waited for it, then did nothing, but the SELECT reads the
    // snapshot, which cannot see it), so the caller asks again, in a new snapshot that does. This
    // avoids ON CONFLICT DO UPDATE … RETURNING (xmax = 0), which would answer in one statement every
    // time but write a new row version for every repeated claim and rest on an undocumented xmax.
    // An existing row is answered from even past its expires_at: the store reads no clock, the
    // contract only allows forgetting, and a token claimed after its expiry is a replay that the
    // caller's timestamp check already refused (expiresAt is past the signature's tolerance);
    // purgeExpired(now) deletes it.
    claimWebhookToken: `WITH claimed AS (
        INSERT INTO ${s}.webhook_tokens (project_id, token, digest, expires_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT 'first' FROM claimed
      UNION ALL
      SELECT CASE WHEN digest = $3 THEN 'same' ELSE 'conflict' END FROM ${s}.webhook_tokens
      WHERE project_id = $1 AND token = $2 AND NOT EXISTS (SELECT FROM claimed)`,
    purgeWebhookTokens: `DELETE FROM ${s}.webhook_tokens WHERE project_id = $1 AND token IN (
      SELECT token FROM ${s}.webhook_tokens WHERE project_id = $1 AND expires_at < $2 LIMIT $3)`,
    probeInvalidations: `SELECT pg_notify('${INVALIDATION_CHANNEL}', $1)`,
    // Suppressions expired at $2, the soonest first, through the partial index suppressions_by_expires_at;
    // the DELETE checks again, so a row an event wrote over meanwhile stays. Notified as removals are.
    purgeSuppressions: `WITH removed AS (
        DELETE FROM ${s}.suppressions WHERE project_id = $1 AND expires_at <= $2 AND (hash, stream) IN (
          SELECT hash, stream FROM ${s}.suppressions WHERE project_id = $1 AND expires_at <= $2 ORDER BY expires_at LIMIT $3)
        RETURNING hash
      ), notified AS (
        SELECT pg_notify('${INVALIDATION_CHANNEL}', json_build_object('schema', ${literal}, 'projectId', $1::text, 'hashes', json_agg(hash))::text)
        FROM (SELECT hash, (row_number() OVER () - 1) / 100 AS chunk FROM (SELECT DISTINCT hash FROM removed) d) r GROUP BY chunk
      )
      SELECT count(*)::float8, (SELECT count(*) FROM notified) FROM removed`,
    // Histories whose every time is older than their rule keeps it (forget_at: the latest plus keepMs).
    purgeSoftBounces: `DELETE FROM ${s}.soft_bounces WHERE project_id = $1 AND hash IN (
      SELECT hash FROM ${s}.soft_bounces WHERE project_id = $1 AND forget_at < $2 LIMIT $3)`,
    listAllowlist: `SELECT key, entry, created_at::float8 FROM ${s}.allowlist
      WHERE project_id = $1 AND entry > $2 ORDER BY entry LIMIT $3`,
    // As addSuppression: inserted (true), or the stored entry (false), or, after a concurrent insert, ask again.
    addAllowlistEntry: `WITH created AS (
        INSERT INTO ${s}.allowlist (project_id, key, entry, created_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT true, NULL, NULL::float8 FROM created
      UNION ALL
      SELECT false, entry, created_at::float8 FROM ${s}.allowlist WHERE project_id = $1 AND key = $2 AND NOT EXISTS (SELECT FROM created)`,
    removeAllowlistEntry: `DELETE FROM ${s}.allowlist WHERE project_id = $1 AND key = $2 RETURNING key, entry, created_at::float8`,
    // One primary-key probe per key, as getSuppressions; the keys travel as one JSON text.
    findAllowlisted: `SELECT x.key FROM jsonb_array_elements_text($2::text::jsonb) AS k(key)
      CROSS JOIN LATERAL (SELECT key FROM ${s}.allowlist WHERE project_id = $1 AND key = k.key OFFSET 0) x`,
    eraseAddress: `SELECT ${s}.mailwarden_erase_address($1, $2::text::jsonb)::text`,
    syncApiKeys: `SELECT ${s}.mailwarden_sync_api_keys($1, $2::text::jsonb)::text`,
    // Every bucket of the call in one upsert, in bucket order (so concurrent calls lock alike); $1 holds
    // [bucket, hits] pairs, and a bucket named twice counts both. The window is named by its length ($2)
    // and end ($3): purgeExpired compares the end with now.
    hitRateLimits: `WITH hits AS (
        SELECT (b.hit->>0) COLLATE "C" AS bucket, sum((b.hit->>1)::integer)::integer AS n FROM jsonb_array_elements($1::text::jsonb) AS b(hit) GROUP BY 1
      )
      INSERT INTO ${s}.rate_limits AS r (bucket, window_ms, window_end, count)
      SELECT bucket, $2::bigint, $3::bigint, n FROM hits ORDER BY bucket
      ON CONFLICT (bucket, window_ms, window_end) DO UPDATE SET count = r.count + excluded.count
      RETURNING bucket, count`,
    purgeRateLimits: `DELETE FROM ${s}.rate_limits WHERE (bucket, window_ms, window_end) IN (
      SELECT bucket, window_ms, window_end FROM ${s}.rate_limits WHERE window_end <= $1 LIMIT $2)`,
  };

  const allowlistEntryJson = `jsonb_build_object('entry', jsonb_build_object('key', key, 'entry', entry, 'createdAt', created_at))`;
  const streamJson = (cause: string) => `jsonb_build_object('stream', $2::text, 'cause', ${cause})`;
  /** A change of the feed, as its `data` object is appended (mailwarden_append_changes): `kind`, `at` and `actor` (NULL: none) bound by the statement. */
  const change = (kind: string, at: string, data: string, actor: string) =>
    `jsonb_build_object('kind', ${kind}, 'at', ${at}, 'actor', ${actor}, 'data', ${data})`;
  /** A rule's actor (core's ruleActors) as an SQL literal: the changes a store makes by a rule carry it. */
  const rule = (actor: string) => `'${actor}'`;
  /** A suppressions row as a change carries it (toSuppression reads it back through suppressionOfJson). */
  const rowJson = (alias: string) => `to_jsonb(${alias}) - 'project_id'`;
  /**
   * The feed's variants of the writes above (docs/storage.md, "The change feed"), used only when the store
   * keeps a feed, so a store without one runs the statements it ran before. Each appends what it changed
   * with mailwarden_append_changes, after its own rows are written (the changes are its argument), so the
   * project's counter is the statement's last lock.
   */
  const feedStatements = {
    // `old` is the row before the statement: one that the insert wrote over had expired.
    addSuppression: `WITH old AS (
        SELECT ${rowJson('o')} AS record_json FROM ${s}.suppressions o WHERE project_id = $1 AND stream = $12 AND hash = $2
      ), created AS (
        ${insertSuppression}
        RETURNING hash, ${rowJson('s')} AS record_json
      ), notified AS (
        SELECT ${invalidationOf('hash')} FROM created
      ), appended AS (
        SELECT ${s}.mailwarden_append_changes($1, (SELECT jsonb_agg(c ORDER BY n) FROM (
          SELECT 1 AS n, ${change(`'suppression.expired'`, 'coalesce($16::bigint, $5::bigint)', `jsonb_build_object('record', old.record_json)`, rule(ruleActors.expiry))} AS c
          FROM old, created
          UNION ALL
          SELECT 2, ${change(`'suppression.added'`, 'coalesce($16::bigint, $5::bigint)', `jsonb_build_object('record', created.record_json)`, '$17::text')} FROM created) x)) AS seq
      )
      SELECT true, NULL, NULL, NULL::float8, NULL, NULL::float8, NULL, NULL, NULL, NULL, NULL::float8, NULL, NULL, NULL FROM notified
      WHERE (SELECT count(*) FROM appended) >= 0
      UNION ALL
      SELECT false, ${suppressionColumns.slice('hash, '.length)} FROM ${s}.suppressions
      WHERE project_id = $1 AND stream = $12 AND hash = $2 AND NOT EXISTS (SELECT FROM created)`,
    removeSuppression: `WITH removed AS (
        DELETE FROM ${s}.suppressions x WHERE project_id = $1 AND stream = $3 AND hash = $2 RETURNING ${suppressionColumns}, ${rowJson('x')} AS record_json
      ), forgotten AS (
        DELETE FROM ${s}.soft_bounces WHERE project_id = $1 AND $3 = '' AND hash = $2
      ), appended AS (
        SELECT ${s}.mailwarden_append_changes($1, (SELECT jsonb_agg(${change(`'suppression.removed'`, 'coalesce($4::bigint, 0)', `jsonb_build_object('record', record_json)`, '$5::text')}) FROM removed))
      )
      SELECT ${suppressionColumns}, ${invalidationOf('hash')}, (SELECT count(*) FROM appended) FROM removed`,
    // The removals appended in the order the hashes were given.
    removeSuppressions: `WITH removed AS (
        DELETE FROM ${s}.suppressions x WHERE project_id = $1 AND stream = $3 AND hash = ANY (string_to_array($2, ','))
        RETURNING ${suppressionColumns}, ${rowJson('x')} AS record_json
      ), forgotten AS (
        DELETE FROM ${s}.soft_bounces WHERE project_id = $1 AND $3 = '' AND hash = ANY (string_to_array($2, ','))
      ), notified AS (
        SELECT pg_notify('${INVALIDATION_CHANNEL}', json_build_object('schema', ${literal}, 'projectId', $1::text, 'hashes', json_agg(hash))::text)
        FROM (SELECT hash, (row_number() OVER () - 1) / 100 AS chunk FROM removed) r GROUP BY chunk
      ), appended AS (
        SELECT ${s}.mailwarden_append_changes($1, (SELECT jsonb_agg(${change(`'suppression.removed'`, 'coalesce($4::bigint, 0)', `jsonb_build_object('record', record_json)`, '$5::text')}
          ORDER BY array_position(string_to_array($2, ','), hash)) FROM removed))
      )
      SELECT ${suppressionColumns}, (SELECT count(*) FROM notified), (SELECT count(*) FROM appended) FROM removed`,
    // Appended soonest expiry first, each at the sweep's `now`.
    purgeSuppressions: `WITH removed AS (
        DELETE FROM ${s}.suppressions x WHERE project_id = $1 AND expires_at <= $2 AND (hash, stream) IN (
          SELECT hash, stream FROM ${s}.suppressions WHERE project_id = $1 AND expires_at <= $2 ORDER BY expires_at LIMIT $3)
        RETURNING hash, stream, expires_at, ${rowJson('x')} AS record_json
      ), notified AS (
        SELECT pg_notify('${INVALIDATION_CHANNEL}', json_build_object('schema', ${literal}, 'projectId', $1::text, 'hashes', json_agg(hash))::text)
        FROM (SELECT hash, (row_number() OVER () - 1) / 100 AS chunk FROM (SELECT DISTINCT hash FROM removed) d) r GROUP BY chunk
      ), appended AS (
        SELECT ${s}.mailwarden_append_changes($1, (SELECT jsonb_agg(${change(`'suppression.expired'`, '$2::bigint', `jsonb_build_object('record', record_json)`, rule(ruleActors.expiry))}
          ORDER BY expires_at, hash, stream) FROM removed))
      )
      SELECT count(*)::float8, (SELECT count(*) FROM notified), (SELECT count(*) FROM appended) FROM removed`,
    mergeSuppressions: `SELECT codes, ${s}.mailwarden_append_changes($1, NULL)
      FROM (SELECT ${s}.mailwarden_merge_suppressions($1, $2::text::jsonb) AS codes OFFSET 0) m`,
    addAllowlistEntry: `WITH created AS (
        INSERT INTO ${s}.allowlist (project_id, key, entry, created_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT DO NOTHING
        RETURNING key, entry, created_at
      ), appended AS (
        SELECT ${s}.mailwarden_append_changes($1, (SELECT jsonb_agg(${change(`'allowlist.added'`, 'created_at', allowlistEntryJson, '$5::text')}) FROM created))
      )
      SELECT true, NULL, NULL::float8 FROM created WHERE (SELECT count(*) FROM appended) >= 0
      UNION ALL
      SELECT false, entry, created_at::float8 FROM ${s}.allowlist WHERE project_id = $1 AND key = $2 AND NOT EXISTS (SELECT FROM created)`,
    removeAllowlistEntry: `WITH removed AS (
        DELETE FROM ${s}.allowlist WHERE project_id = $1 AND key = $2 RETURNING key, entry, created_at
      ), appended AS (
        SELECT ${s}.mailwarden_append_changes($1, (SELECT jsonb_agg(${change(`'allowlist.removed'`, 'coalesce($3::bigint, 0)', allowlistEntryJson, '$4::text')}) FROM removed))
      )
      SELECT key, entry, created_at::float8, (SELECT count(*) FROM appended) FROM removed`,
  };

  /** Appends `changes` (an SQL expression of a jsonb array, or NULL) when the store keeps a feed; a CTE named `appended`. */
  const appended = (changes: string) =>
    feed === undefined ? 'appended AS (SELECT NULL)' : `appended AS (SELECT ${s}.mailwarden_append_changes($1, ${changes}))`;
  const outboundColumns =
    'cursor::float8, failures, failing_since::float8, next_attempt_at::float8, paused_at::float8, last_error, last_success_at::float8';
  /** Statements of the feed, the alert windows, paused streams and outbound delivery (docs/storage.md, "The change feed"). */
  const feedReads = {
    // The page and the counter in one snapshot. `looked`: at most $3 changes after the cursor (a range of
    // the primary key), of which those that match every filter given (NULL: none) are returned, at most
    // $5: the kinds ($4, a JSON array), the actors ($6, a JSON array; each equal, or a prefix then `:`),
    // the hash ($7: a suppression change's record, an allowlist change's entry key, an erasure's). The
    // last looked-at seq tells the reader where to go on when the filters skipped them all.
    listChanges: `WITH looked AS (
        SELECT seq, at, kind, data, actor FROM ${s}.changes WHERE project_id = $1 AND seq > $2 ORDER BY seq LIMIT $3
      )
      SELECT NULL::float8, (SELECT last_seq FROM ${s}.change_counters WHERE project_id = $1)::float8,
             (SELECT trimmed FROM ${s}.change_counters WHERE project_id = $1)::float8, (SELECT max(seq) FROM looked)::float8, NULL, NULL
      UNION ALL
      (SELECT seq::float8, at::float8, NULL, NULL, jsonb_build_object('kind', kind, 'data', data)::text, actor FROM looked
       WHERE ($4::text IS NULL OR kind IN (SELECT jsonb_array_elements_text($4::text::jsonb)))
         AND ($6::text IS NULL OR EXISTS (SELECT FROM jsonb_array_elements_text($6::text::jsonb) AS f(actor)
                                          WHERE looked.actor = f.actor OR starts_with(looked.actor, f.actor || ':')))
         AND ($7::text IS NULL OR coalesce(data->'record'->>'hash',
                                           CASE WHEN kind IN ('allowlist.added', 'allowlist.removed') THEN data->'entry'->>'key' END,
                                           CASE WHEN kind = 'address.erased' THEN data->>'hash' END) = $7::text)
       ORDER BY seq LIMIT $5)`,
    getAlertWindows: `SELECT scope, messages, bounced, complained, bounce_firing, complaint_firing FROM ${s}.alert_windows
      WHERE project_id = $1 AND scope IN (SELECT jsonb_array_elements_text($2::text::jsonb)) AND messages > 0`,
    listPausedStreams: `SELECT stream, paused_at::float8, cause FROM ${s}.paused_streams WHERE project_id = $1 ORDER BY stream`,
    // As addAllowlistEntry: inserted (true), or the stored one (false), or, after a concurrent insert, ask again.
    pauseStream: `WITH created AS (
        INSERT INTO ${s}.paused_streams (project_id, stream, paused_at, cause) VALUES ($1, $2, $3, 'operator')
        ON CONFLICT DO NOTHING
        RETURNING stream
      ), ${appended(`(SELECT jsonb_agg(${change(`'stream.paused'`, '$3::bigint', streamJson(`'operator'`), '$4::text')}) FROM created)`)}
      SELECT true, $3::float8, 'operator' FROM created WHERE (SELECT count(*) FROM appended) >= 0
      UNION ALL
      SELECT false, paused_at::float8, cause FROM ${s}.paused_streams WHERE project_id = $1 AND stream = $2 AND NOT EXISTS (SELECT FROM created)`,
    resumeStream: `WITH removed AS (
        DELETE FROM ${s}.paused_streams WHERE project_id = $1 AND stream = $2 RETURNING stream, paused_at, cause
      ), ${appended(`(SELECT jsonb_agg(${change(`'stream.resumed'`, '$3::bigint', streamJson('cause'), '$4::text')}) FROM removed)`)}
      SELECT paused_at::float8, cause, (SELECT count(*) FROM appended) FROM removed`,
    // Granted when new (its cursor the project's latest seq), held by $3, or its lease ended at $4.
    leaseOutbound: `INSERT INTO ${s}.outbound_endpoints AS o (project_id, endpoint, cursor, failures, failing_since, next_attempt_at,
        paused_at, last_error, last_success_at, owner, lease_until)
      VALUES ($1, $2, coalesce((SELECT last_seq FROM ${s}.change_counters WHERE project_id = $1), 0), 0, NULL, 0, NULL, NULL, NULL, $3, $5)
      ON CONFLICT (project_id, endpoint) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until
      WHERE o.owner = excluded.owner OR o.lease_until <= $4::bigint
      RETURNING ${outboundColumns}`,
    // Written while $3 holds the lease; `endpoint.paused` when paused_at goes from NULL to a time. The
    // update reads `old`, so it runs after `old` locked the row (and read it as it was).
    saveOutbound: `WITH old AS (
        SELECT paused_at FROM ${s}.outbound_endpoints WHERE project_id = $1 AND endpoint = $2 AND owner = $3 FOR UPDATE
      ), saved AS (
        UPDATE ${s}.outbound_endpoints o SET cursor = $4, failures = $5, failing_since = $6, next_attempt_at = $7, paused_at = $8,
          last_error = $9, last_success_at = $10, lease_until = $11
        FROM old WHERE o.project_id = $1 AND o.endpoint = $2 AND o.owner = $3
        RETURNING old.paused_at AS was_paused_at
      ), ${appended(`(SELECT jsonb_agg(${change(`'endpoint.paused'`, '$8::bigint', `jsonb_strip_nulls(jsonb_build_object('endpoint', $2::text, 'error', $9::text))`, rule(ruleActors.outbound))})
          FROM saved WHERE was_paused_at IS NULL AND $8::bigint IS NOT NULL)`)}
      SELECT count(*), (SELECT count(*) FROM appended) FROM saved`,
    getOutbound: `SELECT endpoint, ${outboundColumns} FROM ${s}.outbound_endpoints
      WHERE project_id = $1 AND endpoint IN (SELECT jsonb_array_elements_text($2::text::jsonb))`,
    // A paused endpoint resumes (`endpoint.resumed`); a running one is answered as it is.
    resumeOutbound: `WITH old AS (
        SELECT * FROM ${s}.outbound_endpoints WHERE project_id = $1 AND endpoint = $2 FOR UPDATE
      ), resumed AS (
        UPDATE ${s}.outbound_endpoints o SET paused_at = NULL, failures = 0, failing_since = NULL, last_error = NULL, next_attempt_at = 0
        FROM old WHERE o.project_id = $1 AND o.endpoint = $2 AND old.paused_at IS NOT NULL
        RETURNING o.*
      ), ${appended(`(SELECT jsonb_agg(${change(`'endpoint.resumed'`, '$3::bigint', `jsonb_build_object('endpoint', $2::text)`, '$4::text')}) FROM resumed)`)}
      SELECT ${outboundColumns}, (SELECT count(*) FROM appended) FROM resumed
      UNION ALL
      SELECT ${outboundColumns}, 0 FROM old WHERE NOT EXISTS (SELECT FROM resumed)`,
    // Retention (purgeExpired): the oldest changes, at most $4, up to the first one kept: within the
    // last $3 of the project and not older than $2. `trimmed` records the highest deleted.
    trimChanges: `WITH head AS (
        SELECT seq, at FROM ${s}.changes WHERE project_id = $1 ORDER BY seq LIMIT $4
      ), kept AS (
        SELECT min(seq) AS seq FROM head
        WHERE at >= $2 AND seq > coalesce((SELECT last_seq FROM ${s}.change_counters WHERE project_id = $1), 0) - $3
      ), deleted AS (
        DELETE FROM ${s}.changes WHERE project_id = $1
          AND seq IN (SELECT seq FROM head WHERE seq < coalesce((SELECT seq FROM kept), 9223372036854775807))
        RETURNING seq
      ), trimmed AS (
        UPDATE ${s}.change_counters SET trimmed = greatest(trimmed, (SELECT max(seq) FROM deleted))
        WHERE project_id = $1 AND EXISTS (SELECT FROM deleted)
        RETURNING 1
      )
      SELECT count(*)::float8, (SELECT count(*) FROM trimmed) FROM deleted`,
  };

  const toSuppression = ([hash, email, reason, createdAt, ...rest]: any[]): SuppressionRecord => {
    const record: SuppressionRecord = { hash, email, reason: reasonFromRank(reason), createdAt };
    const [source, at, provider, messageId, eventId, diagnostic, expiresAt, rule, allowlisted, stream] = rest;
    if (source !== null) {
      record.provenance = { source, at };
      if (eventId !== null) record.provenance.event = { provider, messageId, eventId, diagnostic };
      if (rule !== null) record.provenance.rule = unpackRule(rule);
      if (allowlisted === true) record.provenance.allowlisted = true;
    }
    if (stream !== '') record.stream = stream;
    if (expiresAt !== null) record.expiresAt = expiresAt;
    return record;
  };

  /** A change as mailwarden_append_changes stored it, with its actor when it has one. */
  const toChange = (seq: number, at: number, stored: { kind: ChangeKind; data: any }, actor: string | null): Change => {
    const change = changeOf(seq, at, stored);
    if (actor !== null) change.actor = actor;
    return change;
  };

  /** A change as mailwarden_append_changes stored it: `data` holds the rest of it, its records as their rows. */
  const changeOf = (seq: number, at: number, { kind, data }: { kind: ChangeKind; data: any }): Change => {
    switch (kind) {
      case 'suppression.added':
      case 'suppression.upgraded':
      case 'suppression.updated':
      case 'suppression.removed':
      case 'suppression.expired': {
        const record = toSuppression(suppressionColumnsOf(data.record));
        if (data.previous === undefined) return { seq, at, kind, record };
        return { seq, at, kind, record, previous: toSuppression(suppressionColumnsOf(data.previous)) };
      }
      case 'message.status_changed': {
        // One array: the message's columns, from and to as status codes, the event's id, type and time.
        const [from, to, id, type, occurredAt] = data.slice(9);
        return {
          seq,
          at,
          kind,
          message: toMessageRecord(data.slice(0, 9)),
          from: from === null ? null : statusOfCode.get(from)!,
          to: statusOfCode.get(to)!,
          event: { id, type, occurredAt },
        };
      }
      case 'alert.bounce_rate':
      case 'alert.complaint_rate': {
        const { trackingId, firing, messages, count, thresholdPpm } = data;
        return { seq, at, kind, trackingId, firing, messages, count, thresholdPpm };
      }
      case 'allowlist.added':
      case 'allowlist.removed':
        return { seq, at, kind, entry: data.entry };
      case 'stream.paused':
      case 'stream.resumed':
        return { seq, at, kind, stream: data.stream, cause: data.cause };
      case 'endpoint.paused':
      case 'endpoint.resumed':
        return data.error === undefined
          ? { seq, at, kind, endpoint: data.endpoint }
          : { seq, at, kind, endpoint: data.endpoint, error: data.error };
      case 'address.erased':
        return {
          seq,
          at,
          kind,
          hash: data.hash,
          records: data.records.map((row: Record<string, unknown>) => toSuppression(suppressionColumnsOf(row))),
          messages: data.messages,
          changes: data.changes,
        };
      case 'key.added':
      case 'key.updated':
      case 'key.removed':
        return data.previous === undefined ? { seq, at, kind, key: data.key } : { seq, at, kind, key: data.key, previous: data.previous };
    }
  };

  const toTrackingIdRecord = ([
    trackingId,
    messages,
    delivered,
    bounced,
    complained,
    lastEventAt,
    opened,
    clicked,
    unsubscribed,
  ]: any[]): TrackingIdRecord => ({
    trackingId,
    messages,
    delivered,
    bounced,
    complained,
    lastEventAt,
    opened,
    clicked,
    unsubscribed,
  });

  return {
    async getSuppression(projectId, hash, stream, now) {
      const rows = await attempt(() => query(statements.getSuppression, [projectId, hash]));
      const row = listOf(rows.filter(unexpiredAt(now)), stream);
      return row === undefined ? undefined : toSuppression(row);
    },

    async getSuppressions(projectId, hashes, stream, now) {
      if (hashes.length === 0) return [];
      const joined = [...new Set(hashes)].join(',');
      const rows = (await attempt(() => query(statements.getSuppressions, [projectId, joined]))).filter(unexpiredAt(now));
      // Per hash, the row `listOf` picks among its lists' rows.
      const found = new Map<string, unknown[]>();
      for (const row of rows) {
        const hash = row[0] as string;
        if (listOf([found.get(hash), row], stream) === row) found.set(hash, row);
      }
      return hashes.map((hash) => {
        const row = found.get(hash);
        return row === undefined ? undefined : toSuppression(row);
      });
    },

    async addSuppression(projectId, record, now, actor) {
      const params = [
        projectId,
        record.hash,
        record.email,
        reasonRank(record.reason),
        record.createdAt,
        ...provenanceColumns(record),
        record.stream ?? '',
        record.expiresAt ?? null,
        ...ruleColumns(record),
        now ?? null,
      ];
      // The actor only to the feed's statement, which appends it.
      if (feed !== undefined) params.push(actor ?? null);
      for (;;) {
        const [row] = await attempt(() => query(feed === undefined ? statements.addSuppression : feedStatements.addSuppression, params));
        if (row === undefined) continue; // a concurrent insert won; read it in a new snapshot
        if (row[0] === true) return { record: { ...record }, created: true };
        return { record: toSuppression([record.hash, ...row.slice(1)]), created: false };
      }
    },

    async removeSuppression(projectId, hash, stream, now, actor) {
      const [row] = await attempt(() =>
        feed === undefined
          ? query(statements.removeSuppression, [projectId, hash, stream ?? ''])
          : query(feedStatements.removeSuppression, [projectId, hash, stream ?? '', now ?? null, actor ?? null]),
      );
      return row === undefined ? undefined : toSuppression(row);
    },

    async listSuppressions(projectId, { stream = '', reason, emailPrefix, from, to, expiring, now, limit, after }) {
      // PostgreSQL text cannot hold NUL, so no stored email starts with text that has one.
      if (emailPrefix?.includes('\0')) return [];
      if (reason === undefined && emailPrefix === undefined && from === undefined && to === undefined && expiring === undefined) {
        const rows = await attempt(() =>
          after === undefined
            ? query(statements.firstSuppressions, [projectId, stream, limit, now ?? null])
            : query(statements.nextSuppressions, [projectId, stream, -after.createdAt, after.hash, limit, now ?? null]),
        );
        return rows.map(toSuppression);
      }
      // Every index of the table leads with (project_id, stream): a list is a range of each.
      const params: unknown[] = [projectId, stream];
      const where = ['project_id = $1', 'stream = $2'];
      const param = (value: unknown) => `$${params.push(value)}`;
      // Only rows with an expiry: a range of the partial index suppressions_expiring, in the listing order.
      if (expiring !== undefined) where.push(expiring ? 'expires_at IS NOT NULL' : 'expires_at IS NULL');
      if (now !== undefined) where.push(unexpired(params.push(now)));
      // With a reason, suppressions_by_reason; without, suppressions_newest_first. A time range bounds
      // -created_at, the order's leading column in either: the index range starts and stops there.
      if (reason !== undefined) where.push(`reason = ${param(reasonRank(reason))}::smallint`);
      // Through suppressions_by_email_prefix when the prefix is rare (see messages' recipientPrefix).
      if (emailPrefix !== undefined) where.push(`email LIKE ${param(likePrefix(emailPrefix))}`);
      if (to !== undefined) where.push(`-created_at > ${param(-to)}::bigint`);
      if (from !== undefined) where.push(`-created_at <= ${param(-from)}::bigint`);
      if (after !== undefined) where.push(`(-created_at, hash) > (${param(-after.createdAt)}::bigint, ${param(after.hash)})`);
      const text = `SELECT ${suppressionColumns} FROM ${s}.suppressions
        WHERE ${where.join(' AND ')} ORDER BY -created_at, hash LIMIT ${param(limit)}`;
      // A prefix is planned for its own text (an unnamed statement), as a tracking-ID search is.
      const rows = await attempt(() => query(text, params, emailPrefix === undefined));
      return rows.map(toSuppression);
    },

    async mergeSuppressions(projectId, records, now, actor) {
      const outcomes: SuppressionMergeOutcome[] = [];
      // With the feed, each row carries the actor its changes get (mailwarden_feed_suppressions).
      const toRow =
        feed === undefined || actor === undefined
          ? toSuppressionRow
          : (record: SuppressionRecord) => ({ ...toSuppressionRow(record), actor });
      for (let from = 0; from < records.length; from += MERGE_BATCH) {
        const rows = records.slice(from, from + MERGE_BATCH).map(toRow);
        const batch = JSON.stringify(feed === undefined ? { now: now ?? null, rows } : { now: now ?? null, rows, feed: true });
        const [row] = await attempt(() =>
          query(feed === undefined ? statements.mergeSuppressions : feedStatements.mergeSuppressions, [projectId, batch]),
        );
        for (const code of row![0] as string) outcomes.push(eventOutcomeOfCode(code) as SuppressionMergeOutcome);
      }
      // A bulk import grows the table faster than autovacuum re-analyzes it, and a plan made from
      // statistics of a small table probes a point by scanning a listing index of the whole project
      // (measured: a batch check went from 0.3 ms to 44 ms during a 1 000 000-row import). Analyzing
      // every ANALYZE_EVERY merged rows keeps the statistics, and so the plans, up with it.
      mergedSinceAnalyze += records.length;
      if (mergedSinceAnalyze >= ANALYZE_EVERY) {
        mergedSinceAnalyze = 0;
        await attempt(() => query(statements.analyzeSuppressions, [], false));
      }
      return outcomes;
    },

    async removeSuppressions(projectId, hashes, stream, now, actor) {
      const removed: (SuppressionRecord | undefined)[] = [];
      for (let from = 0; from < hashes.length; from += MERGE_BATCH) {
        const batch = hashes.slice(from, from + MERGE_BATCH);
        // NUL cannot be in a PostgreSQL text, nor in a hash: no such row.
        const joined = batch.filter((hash) => !hash.includes('\0')).join(',');
        const rows = await attempt(() =>
          feed === undefined
            ? query(statements.removeSuppressions, [projectId, joined, stream ?? ''])
            : query(feedStatements.removeSuppressions, [projectId, joined, stream ?? '', now ?? null, actor ?? null]),
        );
        const byHash = new Map(rows.map((row) => [row[0] as string, toSuppression(row)]));
        // Each row is deleted once: a hash given twice finds nothing the second time.
        for (const hash of batch) {
          removed.push(byHash.get(hash));
          byHash.delete(hash);
        }
      }
      return removed;
    },

    async applyEvents(projectId, events, options = {}) {
      if (events.length === 0) return [];
      const batch = JSON.stringify(toEventColumns(events, options, feed !== undefined));
      const [row] = await attempt(() => query(statements.applyEvents, [projectId, batch])).catch((error: unknown) => {
        // A function older than this release (its schema not migrated yet) reads one object per event
        // and refuses columns before it writes anything: the batch goes again in that shape.
        if ((error as { code?: unknown } | null)?.code !== OBJECT_NOT_ARRAY) throw error;
        return attempt(() => query(statements.applyEvents, [projectId, JSON.stringify(events.map(toEventRow))]));
      });
      const outcomes = row![0] as string;
      return Array.from(outcomes, eventOutcomeOfCode);
    },

    async listMessages(
      projectId,
      { trackingId, status, recipient, recipientPrefix, recipientDomain, provider, stream, from, to, limit, after },
    ) {
      // PostgreSQL text cannot hold NUL, so no stored tracking ID or recipient has one.
      if ([trackingId, recipient, recipientPrefix, recipientDomain].some((text) => text?.includes('\0'))) return [];
      const params: unknown[] = [projectId];
      const where = ['project_id = $1'];
      const param = (value: unknown) => `$${params.push(value)}`;
      if (trackingId !== undefined) where.push(`tracking_id = ${param(trackingId)}`);
      if (status !== undefined) where.push(`status = ${param(statusCodes[status])}`);
      // Each has an index in the newest-first order (messages_by_recipient, messages_by_provider, messages_by_stream).
      if (recipient !== undefined) where.push(`recipient = ${param(recipient)}`);
      if (provider !== undefined) where.push(`provider = ${param(provider)}`);
      if (stream !== undefined) where.push(`stream = ${param(stream)}`);
      // A prefix is a range of messages_by_recipient_prefix, whose matches are then sorted, or a filter
      // on the newest-first walk: planned for its own text (an unnamed statement), the planner picks by
      // how many it matches. A domain is an equality on messages_by_recipient_domain, written as it is.
      if (recipientPrefix !== undefined) where.push(`recipient LIKE ${param(likePrefix(recipientPrefix))}`);
      if (recipientDomain !== undefined) where.push(`substr(recipient, strpos(recipient, '@') + 1) = ${param(recipientDomain)}`);
      if (from !== undefined) where.push(`last_event_at >= ${param(from)}::bigint`);
      if (to !== undefined) {
        // first_event_at <= last_event_at < to: the bound on -first_event_at starts the range of every
        // newest-first index at the first message that can match.
        const bound = param(to);
        where.push(`last_event_at < ${bound}::bigint`, `-first_event_at > -${bound}::bigint`);
      }
      if (after !== undefined) {
        where.push(`(-first_event_at, key) > (${param(-after.firstEventAt)}::bigint, ${param(after.key)})`);
      }
      const text = `SELECT key, provider, message_id, recipient, tracking_id, facts, first_event_at::float8, last_event_at::float8, stream
        FROM ${s}.messages WHERE ${where.join(' AND ')} ORDER BY -first_event_at, key LIMIT ${param(limit)}`;
      // A time range is planned for its values (an unnamed statement): a narrow range of old messages
      // is best found through messages_by_last_event_at, a recent one by walking the newest-first order.
      const timed = from !== undefined || to !== undefined;
      const rows = await attempt(() => query(text, params, !timed && recipientPrefix === undefined));
      return rows.map(toMessageRecord);
    },

    async listTrackingIds(projectId, { search, limit, after }) {
      if (search?.includes('\0')) return [];
      const params: unknown[] = [projectId];
      const where = ['project_id = $1'];
      const param = (value: unknown) => `$${params.push(value)}`;
      // Stored IDs hold no NUL: being after "a\0…" is being after "a".
      if (after !== undefined) where.push(`tracking_id > ${param(after.split('\0')[0])}`);
      if (search !== undefined) where.push(`search_key LIKE ${param(`%${escapeLike(search)}%`)}`);
      const text = `SELECT ${trackingIdColumns}
        FROM ${s}.tracking_ids WHERE ${where.join(' AND ')} ORDER BY tracking_id LIMIT ${param(limit)}`;
      // A search is planned for its own pattern (an unnamed statement): the trigram index pays off only
      // for rare substrings, and a generic plan would pick one way for every pattern.
      const rows = await attempt(() => query(text, params, search === undefined));
      return rows.map(toTrackingIdRecord);
    },

    async getMessage(projectId, key) {
      // PostgreSQL text cannot hold NUL, so no stored key has one.
      if (key.includes('\0')) return undefined;
      const [row] = await attempt(() => query(statements.getMessage, [projectId, key]));
      if (row === undefined) return undefined;
      return { ...toMessageRecord(row), timeline: JSON.parse(row[9] as string) as TimelineEntry[] };
    },

    async getTrackingId(projectId, trackingId) {
      // PostgreSQL text cannot hold NUL, so no stored tracking ID has one.
      if (trackingId.includes('\0')) return undefined;
      const [row] = await attempt(() => query(statements.getTrackingId, [projectId, trackingId]));
      return row === undefined ? undefined : toTrackingIdRecord(row);
    },

    async getStats(projectId, { trackingId, interval, from, to }) {
      if (trackingId?.includes('\0')) return [];
      const params = [projectId, trackingId ?? '', Math.ceil(from / HOUR_MS), Math.ceil(to / HOUR_MS), interval === 'day' ? 24 : 1];
      const rows = await attempt(() => query(statements.getStats, params));
      return sumHours(
        rows.map(([hour, ...counts]: any[]) => [hour, counts.slice(0, statColumns.length)] as const),
        interval,
        from,
        to,
      );
    },

    async listAllowlist(projectId, { limit, after }) {
      // Stored entries hold no NUL: being after "a\0…" is being after "a".
      const rows = await attempt(() => query(statements.listAllowlist, [projectId, after?.split('\0')[0] ?? '', limit]));
      return rows.map(([key, entry, createdAt]) => ({ key, entry, createdAt }));
    },

    async addAllowlistEntry(projectId, entry, actor) {
      const params: unknown[] = [projectId, entry.key, entry.entry, entry.createdAt];
      if (feed !== undefined) params.push(actor ?? null);
      for (;;) {
        const [row] = await attempt(() =>
          query(feed === undefined ? statements.addAllowlistEntry : feedStatements.addAllowlistEntry, params),
        );
        if (row === undefined) continue; // a concurrent insert won; read it in a new snapshot
        if (row[0] === true) return { entry: { ...entry }, created: true };
        return { entry: { key: entry.key, entry: row[1], createdAt: row[2] }, created: false };
      }
    },

    async removeAllowlistEntry(projectId, key, now, actor) {
      if (key.includes('\0')) return undefined;
      const [row] = await attempt(() =>
        feed === undefined
          ? query(statements.removeAllowlistEntry, [projectId, key])
          : query(feedStatements.removeAllowlistEntry, [projectId, key, now ?? null, actor ?? null]),
      );
      return row === undefined ? undefined : ({ key: row[0], entry: row[1], createdAt: row[2] } satisfies AllowlistEntry);
    },

    async findAllowlisted(projectId, recipients) {
      if (recipients.length === 0) return [];
      const keysOf = ({ hash, email }: { hash: string; email: string }) => [hash, `@${email.slice(email.lastIndexOf('@') + 1)}`];
      // NUL cannot be in a PostgreSQL text (nor in JSON it parses): no such key.
      const keys = [...new Set(recipients.flatMap(keysOf))].filter((key) => !key.includes('\0'));
      const rows = await attempt(() => query(statements.findAllowlisted, [projectId, JSON.stringify(keys)]));
      const found = new Set(rows.map(([key]) => key as string));
      return recipients.map((recipient) => keysOf(recipient).some((key) => found.has(key)));
    },

    async claimWebhookToken(projectId, token, digest, expiresAt) {
      if (!Number.isSafeInteger(expiresAt)) throw new RangeError(`expiresAt is not an integer number of milliseconds: ${expiresAt}`);
      const params = [projectId, token, digest, expiresAt];
      for (;;) {
        const [row] = await attempt(() => query(statements.claimWebhookToken, params));
        if (row !== undefined) return row[0] as WebhookTokenClaim;
        // A concurrent claim won; read its row in a new snapshot (or, if it was purged meanwhile, insert).
      }
    },

    async subscribeInvalidations(listener: (invalidation: SuppressionInvalidation) => void) {
      const subscription: Subscription = {};
      const onNotify = (payload: string) => {
        let message: { schema?: unknown; projectId?: unknown; hashes?: unknown; probe?: unknown };
        try {
          message = JSON.parse(payload);
        } catch {
          return;
        }
        if (message.schema !== schema) return;
        if (typeof message.probe === 'string') return hear(message.probe, subscription);
        if (typeof message.projectId !== 'string' || !Array.isArray(message.hashes)) return;
        listener({ projectId: message.projectId, hashes: message.hashes });
      };
      subscription.listening = await attempt(() => sql.listen(INVALIDATION_CHANNEL, onNotify));
      subscriptions.add(subscription);
      return async () => {
        if (!subscriptions.delete(subscription)) return;
        // A probe under way no longer waits for this one.
        for (const probe of probes.keys()) hear(probe, subscription);
        await attempt(() => subscription.listening!.unlisten());
      };
    },

    async probeInvalidations(timeoutMs) {
      if (subscriptions.size === 0) return true;
      const probe = randomUUID();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const heard = new Promise<boolean>((resolve) => probes.set(probe, { unheard: new Set(subscriptions), heard: () => resolve(true) }));
      try {
        await attempt(() => query(statements.probeInvalidations, [JSON.stringify({ schema, probe })]));
        return await Promise.race([heard, new Promise<boolean>((resolve) => (timer = setTimeout(resolve, timeoutMs, false)))]);
      } finally {
        clearTimeout(timer);
        probes.delete(probe);
      }
    },

    // Returns the number of messages and suppressions deleted; expired webhook tokens and forgotten
    // soft-bounce history are deleted too, always (with or without a message retention), but not counted.
    async purgeExpired(now) {
      /** Runs a bounded DELETE until it deletes less than a batch; returns how many rows it deleted. */
      const sweep = async (statement: string, projectId: string, before: number, batch: number) => {
        let deleted = 0;
        for (;;) {
          const { count } = await attempt(() => sql.unsafe(statement, [projectId, before, batch], { prepare: true }));
          deleted += count;
          if (count < batch) return deleted;
        }
      };
      let purged = 0;
      if (messagesMs !== undefined) {
        const before = now - messagesMs;
        for (const projectId of await projectsOf('messages'))
          purged += await sweep(statements.purgeMessages, projectId, before, PURGE_BATCH);
        for (const projectId of await projectsOf('event_keys')) await sweep(statements.purgeEventKeys, projectId, before, PURGE_BATCH * 10);
      }
      // A token is kept until its own expiresAt; `now` is the caller's clock, as for messages.
      for (const projectId of await projectsOf('webhook_tokens')) {
        await sweep(statements.purgeWebhookTokens, projectId, now, PURGE_BATCH * 10);
      }
      // Expiry is the records' own (docs/decisions.md, "Suppressions that expire"); `now` is the caller's.
      for (const projectId of await projectsOf('suppressions', 'expires_at IS NOT NULL')) {
        for (;;) {
          const statement = feed === undefined ? statements.purgeSuppressions : feedStatements.purgeSuppressions;
          const [row] = await attempt(() => query(statement, [projectId, now, PURGE_BATCH]));
          const count = row![0] as number;
          purged += count;
          if (count < PURGE_BATCH) break;
        }
      }
      for (const projectId of await projectsOf('soft_bounces')) await sweep(statements.purgeSoftBounces, projectId, now, PURGE_BATCH * 10);
      // Rate-limit windows that have ended (not a project's: one sweep for all).
      for (;;) {
        const { count } = await attempt(() => sql.unsafe(statements.purgeRateLimits, [now, PURGE_BATCH * 10], { prepare: true }));
        if (count < PURGE_BATCH * 10) break;
      }
      // The feed's retention: not counted either. Between sweeps a project may hold more than maxLength.
      if (feed !== undefined) {
        for (const projectId of await projectsOf('changes')) {
          for (;;) {
            const [row] = await attempt(() =>
              query(feedReads.trimChanges, [projectId, now - feed.maxAgeMs, feed.maxLength, PURGE_BATCH * 10]),
            );
            if ((row![0] as number) < PURGE_BATCH * 10) break;
          }
        }
      }
      return purged;
    },

    ...(feed !== undefined && { changes: feed }),

    async listChanges(projectId, { after, limit, kinds, actors, hash }: ChangeQuery) {
      if (feed === undefined) return { changes: [], next: after, last: 0 };
      const some = (list: readonly string[] | undefined) => (list !== undefined && list.length > 0 ? JSON.stringify(list) : null);
      const filters = [some(kinds), some(actors), hash ?? null];
      // With a filter, a bounded stretch is looked at (design: 10 × limit, at least 1 000).
      const look = filters.some((filter) => filter !== null) ? Math.max(10 * limit, 1000) : limit;
      const [kindsJson, actorsJson, hashText] = filters;
      const [head, ...rows] = await attempt(() =>
        query(feedReads.listChanges, [projectId, after, look, kindsJson, limit, actorsJson, hashText]),
      );
      const [, last, trimmed, lookedThrough] = head as [null, number | null, number | null, number | null];
      if (after < (trimmed ?? 0)) {
        throw new MailwardenError(
          'change_cursor_expired',
          `Changes after ${after} were deleted by the feed's retention: start again from a listing.`,
        );
      }
      const changes = rows.sort((a, b) => a[0] - b[0]).map(([seq, at, , , text, actor]) => toChange(seq, at, JSON.parse(text), actor));
      const next = changes.length === limit ? changes[changes.length - 1]!.seq : (lookedThrough ?? after);
      return { changes, next: Math.max(next, after), last: last ?? 0 };
    },

    async getAlertWindows(projectId, trackingIds) {
      if (trackingIds.length === 0) return [];
      const scopes = trackingIds.map((trackingId) => trackingId ?? '');
      const rows = await attempt(() => query(feedReads.getAlertWindows, [projectId, JSON.stringify(scopes)]));
      const byScope = new Map(rows.map((row) => [row[0] as string, row]));
      return scopes.map((scope): AlertWindow | undefined => {
        const row = byScope.get(scope);
        if (row === undefined) return undefined;
        const [, messages, bounced, complained, bounceFiring, complaintFiring] = row;
        return { trackingId: scope === '' ? null : scope, messages, bounced, complained, bounceFiring, complaintFiring };
      });
    },

    async listPausedStreams(projectId) {
      const rows = await attempt(() => query(feedReads.listPausedStreams, [projectId]));
      return rows.map(([stream, pausedAt, cause]) => ({ stream, pausedAt, cause }));
    },

    async pauseStream(projectId, stream, now, actor) {
      const params = feed === undefined ? [projectId, stream, now] : [projectId, stream, now, actor ?? null];
      for (;;) {
        const [row] = await attempt(() => query(feedReads.pauseStream, params));
        if (row === undefined) continue; // a concurrent pause won; read it in a new snapshot
        return { paused: { stream, pausedAt: row[1], cause: row[2] }, created: row[0] === true };
      }
    },

    async resumeStream(projectId, stream, now, actor) {
      // The time and actor are the change's: sent only to a store that appends one.
      const [row] = await attempt(() =>
        query(feedReads.resumeStream, feed === undefined ? [projectId, stream] : [projectId, stream, now, actor ?? null]),
      );
      return row === undefined ? undefined : { stream, pausedAt: row[0], cause: row[1] };
    },

    async leaseOutbound(projectId, endpoint, owner, now, until) {
      const [row] = await attempt(() => query(feedReads.leaseOutbound, [projectId, endpoint, owner, now, until]));
      return row === undefined ? undefined : toOutboundState(endpoint, row);
    },

    async saveOutbound(projectId, endpoint, owner, progress, until) {
      const { cursor, failures, failingSince, nextAttemptAt, pausedAt, lastError, lastSuccessAt } = progress;
      const params = [projectId, endpoint, owner, cursor, failures, failingSince, nextAttemptAt, pausedAt, lastError, lastSuccessAt, until];
      const [row] = await attempt(() => query(feedReads.saveOutbound, params));
      return Number(row![0]) > 0;
    },

    async getOutbound(projectId, endpoints) {
      if (endpoints.length === 0) return [];
      const rows = await attempt(() => query(feedReads.getOutbound, [projectId, JSON.stringify(endpoints)]));
      const byEndpoint = new Map(rows.map(([endpoint, ...state]) => [endpoint as string, toOutboundState(endpoint, state)]));
      return endpoints.map((endpoint) => byEndpoint.get(endpoint));
    },

    async resumeOutbound(projectId, endpoint, now, actor) {
      const [row] = await attempt(() =>
        query(feedReads.resumeOutbound, feed === undefined ? [projectId, endpoint] : [projectId, endpoint, now, actor ?? null]),
      );
      return row === undefined ? undefined : toOutboundState(endpoint, row);
    },

    async eraseAddress(projectId, erasure: AddressErasure) {
      const { hash, email, forms, suppression, now, actor } = erasure;
      // PostgreSQL text cannot hold NUL, so no stored key holds a form that has one.
      const sent: Record<string, unknown> = {
        hash,
        email,
        forms: forms.filter((form) => !form.includes('\0')),
        now,
        suppression: toSuppressionRow(suppression),
      };
      if (feed !== undefined) Object.assign(sent, { feed: true, actor: actor ?? null });
      const [row] = await attempt(() => query(statements.eraseAddress, [projectId, JSON.stringify(sent)]));
      const result = JSON.parse(row![0] as string) as { records: Record<string, unknown>[]; messages: number; changes: number };
      const records = result.records.map((stored) => toSuppression(suppressionColumnsOf(stored)));
      return { records, messages: result.messages, changes: result.changes };
    },

    async syncApiKeys(projectId, keys, now, actor) {
      const sent: Record<string, unknown> = { keys, now, actor };
      if (feed !== undefined) sent.feed = true;
      const [row] = await attempt(() => query(statements.syncApiKeys, [projectId, JSON.stringify(sent)]));
      const { changes, last } = JSON.parse(row![0] as string) as {
        changes: { kind: KeyChange['kind']; at: number; actor: string; data: any }[];
        last: number | null;
      };
      // Numbered as appended: the last one is the feed's latest seq; 0 without a feed.
      return changes.map(({ kind, at, data }, i) => {
        const seq = last === null ? 0 : last - changes.length + 1 + i;
        return { ...(changeOf(seq, at, { kind, data }) as KeyChange), actor };
      });
    },

    async hitRateLimits(buckets, windowMs, now, counts) {
      if (buckets.length === 0) return [];
      const windowEnd = (Math.floor(now / windowMs) + 1) * windowMs;
      const hits = JSON.stringify(buckets.map((bucket, i) => [bucket, counts?.[i] ?? 1]));
      const rows = await attempt(() => query(statements.hitRateLimits, [hits, windowMs, windowEnd]));
      const totals = new Map(rows.map(([bucket, count]) => [bucket as string, count as number]));
      return buckets.map((bucket) => totals.get(bucket)!);
    },

    async close() {
      const open = [...subscriptions];
      subscriptions.clear();
      await Promise.allSettled(open.map((subscription) => subscription.listening!.unlisten()));
    },
  } satisfies PostgresStore;

  /**
   * The projects of a table, by skipping through its primary key (or a partial index that holds the rows
   * of `only`): one index probe per project.
   */
  async function projectsOf(
    table: 'messages' | 'event_keys' | 'webhook_tokens' | 'suppressions' | 'soft_bounces' | 'changes',
    only = 'true',
  ): Promise<string[]> {
    const rows = await attempt(() =>
      query(
        `WITH RECURSIVE projects AS (
          (SELECT project_id FROM ${s}.${table} WHERE ${only} ORDER BY project_id LIMIT 1)
          UNION ALL
          SELECT (SELECT t.project_id FROM ${s}.${table} t WHERE ${only} AND t.project_id > p.project_id ORDER BY t.project_id LIMIT 1)
          FROM projects p WHERE p.project_id IS NOT NULL
        )
        SELECT project_id FROM projects WHERE project_id IS NOT NULL`,
        [],
      ),
    );
    return rows.map(([projectId]) => projectId as string);
  }

  /**
   * Runs one statement, failing fast while the server is unreachable. Once a statement found it
   * unreachable, calls fail at once with `store_unavailable` rather than queue behind postgres.js's
   * reconnection attempts (which can be seconds apart), except one at a time, which first waits for a
   * `SELECT 1` to find out whether the server is back: a caller waits for one reconnection attempt at
   * most, and the first call after the server returns gets through.
   */
  async function attempt<T>(run: () => Promise<T>): Promise<T> {
    if (unreachable !== undefined) {
      if (unreachable.reconnecting) throw unavailable(unreachable.cause);
      unreachable.reconnecting = true;
      try {
        await send(() => sql`SELECT 1`);
      } finally {
        if (unreachable !== undefined) unreachable.reconnecting = false;
      }
    }
    return send(run);
  }

  /** Runs one statement; retries a conflict a few times; reports an unreachable server as `store_unavailable`, and remembers it. */
  async function send<T>(run: () => Promise<T>): Promise<T> {
    for (let retry = 0; ; retry++) {
      try {
        const result = await run();
        unreachable = undefined;
        return result;
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        if (CONFLICT.has(code as string) && retry < CONFLICT_RETRIES) {
          await new Promise((resolve) => setTimeout(resolve, 5 * 2 ** retry * (1 + Math.random())));
          continue;
        }
        if (isUnreachable(code)) unreachable = { cause: error, reconnecting: unreachable?.reconnecting ?? false };
        if (isUnreachable(code) || REFUSED_FOR_NOW.has(code as string) || CONFLICT.has(code as string)) throw unavailable(error);
        throw error;
      }
    }
  }
}

/** An outbound endpoint's state from its columns (`outboundColumns`). */
function toOutboundState(
  endpoint: string,
  [cursor, failures, failingSince, nextAttemptAt, pausedAt, lastError, lastSuccessAt]: any[],
): OutboundState {
  return { endpoint, cursor, failures, failingSince, nextAttemptAt, pausedAt, lastError, lastSuccessAt };
}

/** The statuses by their codes (statusCodes), as the feed keeps a message's `from` and `to`. */
const statusOfCode = new Map(Object.entries(statusCodes).map(([status, code]) => [code as number, status as MessageStatus]));

/** A suppressions row as a change keeps it (to_jsonb, without project_id), as the columns toSuppression reads. */
function suppressionColumnsOf(row: Record<string, unknown>): unknown[] {
  return [
    row.hash,
    row.email,
    row.reason,
    row.created_at,
    row.source,
    row.source_at,
    row.cause_provider,
    row.cause_message_id,
    row.cause_event_id,
    row.cause_diagnostic,
    row.expires_at,
    row.cause_rule,
    row.allowlisted,
    row.stream,
  ];
}

/** Text LIKE matches literally: its pattern characters and the escape character escaped. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}

/** The LIKE pattern of the values that start with `prefix`. */
function likePrefix(prefix: string): string {
  return `${escapeLike(prefix)}%`;
}

/** A message row as the listing and getMessage select it: the record's columns first, in its order. */
function toMessageRecord([
  key,
  provider,
  messageId,
  recipient,
  trackingId,
  facts,
  firstEventAt,
  lastEventAt,
  stream,
]: any[]): MessageRecord {
  return { key, provider: provider as Provider, messageId, recipient, trackingId, stream, facts, firstEventAt, lastEventAt };
}

/**
 * A batch as `mailwarden_apply_events` reads it: one array per column, the n-th element of each the n-th
 * event's, null where an event has no such part; a column no event has is left out. Columns rather than
 * one object per event: half the JSON, without a key name per value, for PostgreSQL to parse.
 */
function toEventColumns(
  events: readonly StoredEvent[],
  { now, softBounces, alerts }: ApplyEventsOptions,
  feed: boolean,
): Record<string, unknown> {
  const columns = {
    key: [] as unknown[],
    message_key: [] as unknown[],
    provider: [] as unknown[],
    message_id: [] as unknown[],
    recipient: [] as unknown[],
    tracking_id: [] as unknown[],
    stream: [] as unknown[],
    search_key: [] as unknown[],
    facts: [] as unknown[],
    first_event_at: [] as unknown[],
    last_event_at: [] as unknown[],
    timeline: [] as unknown[],
    suppression: [] as unknown[],
    rule_input: [] as unknown[],
    actor: [] as unknown[],
  };
  for (const event of events) {
    const message = event.message;
    const trackingId = message?.trackingId ?? null;
    columns.key.push(event.key);
    columns.message_key.push(message?.key ?? null);
    columns.provider.push(message?.provider ?? null);
    columns.message_id.push(message?.messageId ?? null);
    columns.recipient.push(message?.recipient ?? null);
    columns.tracking_id.push(trackingId);
    columns.stream.push(message?.stream ?? null);
    columns.search_key.push(trackingId === null ? null : (event.trackingIdSearchKey ?? trackingIdSearchKey(trackingId)));
    columns.facts.push(message?.facts ?? null);
    columns.first_event_at.push(message?.firstEventAt ?? null);
    columns.last_event_at.push(message?.lastEventAt ?? null);
    columns.timeline.push(message === null ? null : (event.timelineEntry ?? null));
    columns.suppression.push(event.suppression === null ? null : toSuppressionRow(event.suppression));
    // Without the rule, its inputs are not sent: the function ignores them.
    columns.rule_input.push(softBounces === undefined || event.ruleInput === undefined ? null : toRuleInput(event.ruleInput));
    // Only the feed stores who sent it; left out (below) when no event names one.
    columns.actor.push(feed ? (event.actor ?? null) : null);
  }
  const sent: Record<string, unknown> = {};
  for (const [name, values] of Object.entries(columns)) if (name === 'key' || values.some((value) => value !== null)) sent[name] = values;
  if (now !== undefined) sent.now = now;
  if (softBounces !== undefined) sent.rule = softBounces;
  if (alerts !== undefined) sent.alerts = alerts;
  if (feed) sent.feed = true;
  return sent;
}

/** A rule input as mailwarden_soft_bounce reads it: a bounce's cause travels packed (`packRuleBounce`). */
function toRuleInput(input: SoftBounceInput | DeliveryInput): Record<string, unknown> {
  if (input.kind === 'delivery') return { kind: input.kind, hash: input.hash, at: input.at };
  const { kind, hash, email, at, message, cause, packed } = input;
  return { kind, hash, email, at, message, event_id: cause.eventId, packed };
}

/** One event as a `mailwarden_apply_events` older than the columns reads it; absent parts are left out. */
function toEventRow(event: StoredEvent): Record<string, unknown> {
  const row: Record<string, unknown> = { key: event.key };
  const message = event.message;
  if (message !== null) {
    row.message_key = message.key;
    row.provider = message.provider;
    row.message_id = message.messageId;
    row.recipient = message.recipient;
    row.facts = message.facts;
    row.first_event_at = message.firstEventAt;
    row.last_event_at = message.lastEventAt;
    if (event.timelineEntry !== undefined) row.timeline = event.timelineEntry;
    if (message.stream !== null) row.stream = message.stream;
    if (message.trackingId !== null) {
      row.tracking_id = message.trackingId;
      row.search_key = event.trackingIdSearchKey ?? trackingIdSearchKey(message.trackingId);
    }
  }
  if (event.suppression !== null) {
    // Its `stream` is the message's: a function that old has one suppression list, the project-wide one.
    const { stream: _, ...suppression } = toSuppressionRow(event.suppression);
    Object.assign(row, suppression);
  }
  return row;
}

/** A suppression as `mailwarden_merge_suppressions` takes it (and an event row carries it); no stream: the project-wide list. */
function toSuppressionRow(suppression: SuppressionRecord): Record<string, unknown> {
  const row: Record<string, unknown> = {
    hash: suppression.hash,
    email: suppression.email,
    reason: reasonRank(suppression.reason),
    created_at: suppression.createdAt,
  };
  if (suppression.stream !== undefined) row.stream = suppression.stream;
  const [source, sourceAt, provider, messageId, eventId, diagnostic] = provenanceColumns(suppression);
  if (source !== null) Object.assign(row, { source, source_at: sourceAt, cause_event_id: eventId });
  if (eventId !== null) Object.assign(row, { cause_provider: provider, cause_message_id: messageId, cause_diagnostic: diagnostic });
  // Only when set, so a batch without them is the JSON it was.
  if (suppression.expiresAt !== undefined) row.expires_at = suppression.expiresAt;
  const [rule, allowlisted] = ruleColumns(suppression);
  if (rule !== null) row.cause_rule = rule;
  if (allowlisted !== null) row.allowlisted = allowlisted;
  return row;
}

/** The rest of a suppression's provenance as its columns: cause_rule (the rule packed, as packProvenance writes it), allowlisted. */
function ruleColumns(record: SuppressionRecord): [string | null, true | null] {
  const rule = record.provenance?.rule;
  const packed =
    rule === undefined ? null : `[${packRule(rule)},[${rule.events.map((bounce) => packRuleBounce(bounce, bounce.at)).join(',')}]]`;
  return [packed, record.provenance?.allowlisted === true ? true : null];
}

/** cause_rule read back: `[bounces, days, 0|1, [[provider, messageId, eventId, at, diagnostic], …]]`. */
function unpackRule(packed: string): SoftBounceRuleCause {
  const [bounces, days, reset, events] = JSON.parse(packed) as [
    number,
    number,
    number,
    [Provider, string | null, string, number, string | null][],
  ];
  return {
    bounces,
    days,
    resetOnDelivery: reset === 1,
    events: events.map(([provider, messageId, eventId, at, diagnostic]) => ({ provider, messageId, eventId, at, diagnostic })),
  };
}

/** Whether a suppression row is not expired at `now` (every one is not, without `now`); its expiry is the fourth column from the end. */
function unexpiredAt(now: number | undefined): (row: unknown[]) => boolean {
  return (row) => {
    const expiresAt = row[row.length - 4] as number | null;
    return now === undefined || expiresAt === null || expiresAt > now;
  };
}

/** A suppression's provenance as its columns: source, source_at, cause_provider, cause_message_id, cause_event_id, cause_diagnostic. */
function provenanceColumns(record: SuppressionRecord): (string | number | null)[] {
  const provenance = record.provenance;
  if (provenance === undefined) return [null, null, null, null, null, null];
  const event = provenance.event;
  return [
    provenance.source,
    provenance.at,
    event?.provider ?? null,
    event?.messageId ?? null,
    event?.eventId ?? null,
    event?.diagnostic ?? null,
  ];
}

// --- errors -------------------------------------------------------------------------------------------

/** Errors meaning no connection to the server can be made or kept now: the caller should retry later. */
const UNREACHABLE = new Set([
  // Socket and DNS errors, and postgres.js's own connection errors.
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  // SQLSTATEs: too many connections, shutting down or starting up.
  '53300',
  '57P01',
  '57P02',
  '57P03',
]);
/** Errors meaning the server answers but cannot serve this call now: a read-only standby after a failover, a statement timeout. */
const REFUSED_FOR_NOW = new Set(['25006', '57014']);
/** Deadlock and serialization failure: the transaction was rolled back whole and may simply run again. */
const CONFLICT = new Set(['40P01', '40001']);

/**
 * Connection failures (class 08), and a login refused (class 28: a role locked, a password rotated), which
 * postgres.js reports on whichever call opened the new connection.
 */
function isUnreachable(code: unknown): boolean {
  return typeof code === 'string' && (UNREACHABLE.has(code) || code.startsWith('08') || code.startsWith('28'));
}

const unavailable = (cause: unknown) => new MailwardenError('store_unavailable', 'The PostgreSQL store cannot be reached.', { cause });

/**
 * Of a hash's rows in its lists, the one that answers a check (docs/decisions.md, "Streams"): without a
 * stream the project-wide row ('' in SQL); with one, the project-wide row when there is one, else that
 * stream's. `undefined` entries are skipped. The stream is a row's last column.
 */
function listOf(rows: readonly (unknown[] | undefined)[], stream: string | undefined): unknown[] | undefined {
  let inStream: unknown[] | undefined;
  for (const row of rows) {
    if (row === undefined) continue;
    const list = row[row.length - 1];
    if (list === '') return row;
    if (list === stream) inStream = row;
  }
  return inStream;
}
