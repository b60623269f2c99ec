import type { Sql } from 'postgres';

/**
 * One versioned step of the schema. The SQL is a function of the quoted schema name, so one database can
 * hold several mailwarden schemas. A shipped migration never changes: a change is a new version.
 * Kept as TypeScript strings rather than .sql files so the bundler ships them inside `dist`.
 */
export interface Migration {
  version: number;
  name: string;
  sql: (schema: SchemaNames) => string;
}

/** The schema as an identifier (`"mailwarden"`) and as a string literal (`'mailwarden'`), both quoted. */
export interface SchemaNames {
  identifier: string;
  literal: string;
}

/** The channel every mailwarden schema of a database notifies on; payloads name their schema. */
export const INVALIDATION_CHANNEL = 'mailwarden_invalidations';

/** Taken by every migrate() of any schema, so concurrent starts (and CREATE EXTENSION) never race. */
const MIGRATION_LOCK = 7_366_231_861_020_554_051n;

// Facts bits (core's `Fact`) as the SQL below uses them: delivered 4, soft_bounced 8, hard_bounced 16,
// complained 32, rejected 64, deferred 2. A test checks the status expression against `messageStatus`.
const DELIVERED = 4;
const BOUNCED = 8 | 16;
const COMPLAINED = 32;

const initial: Migration = {
  version: 1,
  name: 'initial',
  sql: ({ identifier: s, literal }) => `
-- Every primary key and index leads with project_id; text keys use the "C" collation, so they compare
-- as bytes: code-point order, the order of every mailwarden store.

CREATE TABLE ${s}.suppressions (
  project_id text COLLATE "C" NOT NULL,
  -- Lower-case hex only, as in every store (an upper-case hash would be another key). Not '^[0-9a-f]{64}$':
  -- PostgreSQL's regex engine takes about 13 µs for that bounded repetition, this test about 3 µs.
  hash text COLLATE "C" NOT NULL CHECK (octet_length(hash) = 64 AND hash !~ '[^0-9a-f]'),
  email text NOT NULL,
  -- reasonRank: 1 manual, 2 hard_bounce, 3 complaint, so "only upgrade" is greatest().
  reason smallint NOT NULL CHECK (reason BETWEEN 1 AND 3),
  created_at bigint NOT NULL,
  PRIMARY KEY (project_id, hash)
);
-- Newest first as one ascending key, so "after (createdAt, hash)" is the row comparison
-- (-created_at, hash) > (-$createdAt, $hash): the start of an index range, whatever the depth.
CREATE INDEX suppressions_newest_first ON ${s}.suppressions (project_id, (-created_at), hash);

CREATE TABLE ${s}.event_keys (
  project_id text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  -- Epoch ms of the database clock when first seen: only the retention sweep reads it.
  seen_at bigint NOT NULL,
  PRIMARY KEY (project_id, key)
);
CREATE INDEX event_keys_by_seen_at ON ${s}.event_keys (project_id, seen_at);

CREATE TABLE ${s}.messages (
  project_id text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  provider text NOT NULL,
  message_id text NOT NULL,
  recipient text NOT NULL,
  tracking_id text COLLATE "C",
  facts integer NOT NULL,
  -- messageStatus(facts) as its index in messageStatuses: 0 complained, 1 bounced, 2 rejected,
  -- 3 delivered, 4 soft_bounced, 5 deferred, 6 sent.
  status smallint NOT NULL GENERATED ALWAYS AS (
    CASE
      WHEN facts & 32 <> 0 THEN 0
      WHEN facts & 16 <> 0 THEN 1
      WHEN facts & 64 <> 0 THEN 2
      WHEN facts & 4 <> 0 THEN 3
      WHEN facts & 8 <> 0 THEN 4
      WHEN facts & 2 <> 0 THEN 5
      ELSE 6
    END
  ) STORED,
  first_event_at bigint NOT NULL,
  last_event_at bigint NOT NULL,
  PRIMARY KEY (project_id, key)
);
CREATE INDEX messages_newest_first ON ${s}.messages (project_id, (-first_event_at), key);
CREATE INDEX messages_by_tracking_id ON ${s}.messages (project_id, tracking_id, (-first_event_at), key)
  WHERE tracking_id IS NOT NULL;
CREATE INDEX messages_by_status ON ${s}.messages (project_id, status, (-first_event_at), key);
CREATE INDEX messages_by_last_event_at ON ${s}.messages (project_id, last_event_at);

CREATE TABLE ${s}.tracking_ids (
  project_id text COLLATE "C" NOT NULL,
  tracking_id text COLLATE "C" NOT NULL,
  -- trackingIdSearchKey(tracking_id), computed by core: search is a plain substring match on it.
  search_key text COLLATE "C" NOT NULL,
  messages integer NOT NULL,
  delivered integer NOT NULL,
  bounced integer NOT NULL,
  complained integer NOT NULL,
  last_event_at bigint NOT NULL,
  PRIMARY KEY (project_id, tracking_id)
);
-- The trigram index for search is created by migrate() when pg_trgm is available (see searchIndex).

-- applyEvents: one call per batch, one transaction. Set-based, with the semantics of applying each
-- event in order: the first occurrence of a key not seen before is applied, the rest are duplicates;
-- messages, counters and suppressions are joins, so their end state does not depend on the order.
-- Every writer locks rows table by table (event_keys, messages, tracking_ids, suppressions), each in
-- key order, so concurrent batches wait for each other instead of deadlocking.
-- p_events: a JSON array of flat events (see toEventRow in postgres-store.ts).
-- Returns one character per event: 'a' applied, 'd' duplicate.
CREATE FUNCTION ${s}.mailwarden_apply_events(p_project_id text, p_events jsonb) RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  v_outcomes boolean[];
  v_created text[];
  v_recompute text[];
  v_emptied text[];
  v_hashes text[];
  v_chunk integer;
BEGIN
  -- 1. Dedup: record the first occurrence of each key; ON CONFLICT waits for a concurrent batch that
  --    holds the same key and then treats it as seen.
  WITH keys AS (
    SELECT (x.event->>'key') COLLATE "C" AS key, x.ord
    FROM jsonb_array_elements(p_events) WITH ORDINALITY AS x(event, ord)
  ), firsts AS (
    SELECT DISTINCT ON (key) key, ord FROM keys ORDER BY key, ord
  ), recorded AS (
    INSERT INTO ${s}.event_keys (project_id, key, seen_at)
    SELECT p_project_id, key, (extract(epoch FROM transaction_timestamp()) * 1000)::bigint
    FROM firsts ORDER BY key
    ON CONFLICT DO NOTHING
    RETURNING key
  )
  SELECT array_agg(r.key IS NOT NULL ORDER BY k.ord) INTO v_outcomes
  FROM keys k LEFT JOIN firsts f ON f.ord = k.ord LEFT JOIN recorded r ON r.key = f.key;

  -- 2. Messages the batch creates are inserted whole; existing ones are only locked (WHERE false
  --    updates nothing but still locks), so step 3 reads them unchanged by anyone else.
  WITH seen AS (
    SELECT (x.event->>'message_key') COLLATE "C" AS key,
           min(x.event->>'provider') AS provider,
           min(x.event->>'message_id') AS message_id,
           min(x.event->>'recipient') AS recipient,
           -- joinTrackingIds: min() ignores nulls, and compares in code-point order.
           min((x.event->>'tracking_id') COLLATE "C") AS tracking_id,
           bit_or((x.event->>'facts')::integer) AS facts,
           min((x.event->>'first_event_at')::bigint) AS first_event_at,
           max((x.event->>'last_event_at')::bigint) AS last_event_at
    FROM jsonb_array_elements(p_events) WITH ORDINALITY AS x(event, ord)
    WHERE v_outcomes[x.ord::integer] AND x.event ? 'message_key'
    GROUP BY 1
  ), created AS (
    INSERT INTO ${s}.messages AS m
      (project_id, key, provider, message_id, recipient, tracking_id, facts, first_event_at, last_event_at)
    SELECT p_project_id, key, provider, message_id, recipient, tracking_id, facts, first_event_at, last_event_at
    FROM seen ORDER BY key
    ON CONFLICT (project_id, key) DO UPDATE SET facts = m.facts WHERE false
    RETURNING m.key
  )
  SELECT coalesce(array_agg(key), '{}') INTO v_created FROM created;

  -- 3. mergeMessage on the existing messages, then trackingIdDeltas of every message the batch
  --    touched, summed per tracking ID and applied in tracking-ID order.
  WITH seen AS (
    SELECT (x.event->>'message_key') COLLATE "C" AS key,
           min((x.event->>'tracking_id') COLLATE "C") AS tracking_id,
           bit_or((x.event->>'facts')::integer) AS facts,
           min((x.event->>'first_event_at')::bigint) AS first_event_at,
           max((x.event->>'last_event_at')::bigint) AS last_event_at
    FROM jsonb_array_elements(p_events) WITH ORDINALITY AS x(event, ord)
    WHERE v_outcomes[x.ord::integer] AND x.event ? 'message_key'
    GROUP BY 1
  ), new_messages AS (
    SELECT s.* FROM seen s JOIN unnest(v_created) AS c(key) ON c.key = s.key
  ), known AS (
    SELECT m.key, m.tracking_id, m.facts, m.first_event_at, m.last_event_at
    FROM (SELECT key FROM seen EXCEPT ALL SELECT key FROM new_messages) e
    JOIN ${s}.messages m ON m.project_id = p_project_id AND m.key = e.key
  ), merged AS (
    UPDATE ${s}.messages m SET
      tracking_id = least(k.tracking_id, s.tracking_id),
      facts = k.facts | s.facts,
      first_event_at = least(k.first_event_at, s.first_event_at),
      last_event_at = greatest(k.last_event_at, s.last_event_at)
    FROM known k JOIN seen s ON s.key = k.key
    WHERE m.project_id = p_project_id AND m.key = k.key
      AND (least(k.tracking_id, s.tracking_id) IS DISTINCT FROM k.tracking_id OR k.facts | s.facts <> k.facts
           OR s.first_event_at < k.first_event_at OR s.last_event_at > k.last_event_at)
    RETURNING k.tracking_id AS before_id, k.facts AS before_facts, m.tracking_id, m.facts, m.last_event_at
  ), changes AS (
    SELECT before_id, before_facts, tracking_id, facts, last_event_at FROM merged
    UNION ALL
    SELECT NULL, NULL, tracking_id, facts, last_event_at FROM new_messages
  ), deltas AS (
    -- A message leaving its tracking ID takes its counts along; the row's lastEventAt is recomputed.
    SELECT before_id AS tracking_id, -1 AS messages,
           -(before_facts & ${DELIVERED} <> 0)::integer AS delivered,
           -(before_facts & ${BOUNCED} <> 0)::integer AS bounced,
           -(before_facts & ${COMPLAINED} <> 0)::integer AS complained,
           NULL::bigint AS raise, true AS recompute
    FROM changes WHERE before_id IS NOT NULL AND before_id IS DISTINCT FROM tracking_id
    UNION ALL
    -- Counters move only when a fact flips from false to true.
    SELECT tracking_id, (before_id IS DISTINCT FROM tracking_id)::integer,
           (facts & ${DELIVERED} <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & ${DELIVERED} <> 0)::integer ELSE 0 END,
           (facts & ${BOUNCED} <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & ${BOUNCED} <> 0)::integer ELSE 0 END,
           (facts & ${COMPLAINED} <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & ${COMPLAINED} <> 0)::integer ELSE 0 END,
           last_event_at, false
    FROM changes WHERE tracking_id IS NOT NULL
  ), totals AS (
    SELECT tracking_id, sum(messages)::integer AS messages, sum(delivered)::integer AS delivered,
           sum(bounced)::integer AS bounced, sum(complained)::integer AS complained,
           max(raise) AS raise, bool_or(recompute) AS recompute
    FROM deltas GROUP BY tracking_id
  ), search_keys AS (
    SELECT DISTINCT ON (tracking_id) tracking_id, search_key
    FROM (SELECT (x.event->>'tracking_id') COLLATE "C" AS tracking_id, x.event->>'search_key' AS search_key
          FROM jsonb_array_elements(p_events) AS x(event) WHERE x.event ? 'tracking_id') e
  ), moved AS (
    INSERT INTO ${s}.tracking_ids AS t
      (project_id, tracking_id, search_key, messages, delivered, bounced, complained, last_event_at)
    -- NOT NULL is checked before the conflict is: a row only left has no raise, and is recomputed.
    SELECT p_project_id, d.tracking_id, coalesce(k.search_key, lower(d.tracking_id)),
           d.messages, d.delivered, d.bounced, d.complained, coalesce(d.raise, -9223372036854775808)
    FROM totals d LEFT JOIN search_keys k ON k.tracking_id = d.tracking_id
    ORDER BY d.tracking_id
    ON CONFLICT (project_id, tracking_id) DO UPDATE SET
      messages = t.messages + excluded.messages,
      delivered = t.delivered + excluded.delivered,
      bounced = t.bounced + excluded.bounced,
      complained = t.complained + excluded.complained,
      last_event_at = greatest(t.last_event_at, excluded.last_event_at)
    RETURNING t.tracking_id, t.messages
  )
  SELECT array_agg(m.tracking_id) FILTER (WHERE m.messages > 0 AND d.recompute),
         array_agg(m.tracking_id) FILTER (WHERE m.messages <= 0)
  INTO v_recompute, v_emptied
  FROM moved m JOIN totals d ON d.tracking_id = m.tracking_id;

  -- 4. Rows this transaction holds locked: a new snapshot sees every message change committed before.
  IF v_emptied IS NOT NULL THEN
    DELETE FROM ${s}.tracking_ids WHERE project_id = p_project_id AND tracking_id = ANY (v_emptied);
  END IF;
  IF v_recompute IS NOT NULL THEN
    -- From the messages still there; when retention purged them all, the row keeps its time.
    UPDATE ${s}.tracking_ids t SET last_event_at = coalesce((
      SELECT max(m.last_event_at) FROM ${s}.messages m
      WHERE m.project_id = p_project_id AND m.tracking_id = t.tracking_id
    ), t.last_event_at)
    WHERE t.project_id = p_project_id AND t.tracking_id = ANY (v_recompute);
  END IF;

  -- 5. Suppressions: the reason only upgrades, createdAt is the earliest. Only rows that changed are
  --    written, and only they are invalidated.
  WITH seen AS (
    SELECT (x.event->>'hash') COLLATE "C" AS hash,
           (array_agg(x.event->>'email' ORDER BY x.ord))[1] AS email,
           max((x.event->>'reason')::smallint) AS reason,
           min((x.event->>'created_at')::bigint) AS created_at
    FROM jsonb_array_elements(p_events) WITH ORDINALITY AS x(event, ord)
    WHERE v_outcomes[x.ord::integer] AND x.event ? 'hash'
    GROUP BY 1
  ), written AS (
    INSERT INTO ${s}.suppressions AS s (project_id, hash, email, reason, created_at)
    SELECT p_project_id, hash, email, reason, created_at FROM seen ORDER BY hash
    ON CONFLICT (project_id, hash) DO UPDATE SET
      reason = greatest(s.reason, excluded.reason),
      created_at = least(s.created_at, excluded.created_at)
    WHERE excluded.reason > s.reason OR excluded.created_at < s.created_at
    RETURNING s.hash
  )
  SELECT array_agg(hash) INTO v_hashes FROM written;

  -- 6. Delivered to listeners on commit; payloads stay under NOTIFY's 8000-byte limit.
  IF v_hashes IS NOT NULL THEN
    v_chunk := greatest(1, (7900 - octet_length(
      json_build_object('schema', ${literal}, 'projectId', p_project_id, 'hashes', '[]'::json)::text)) / 67);
    FOR i IN 1 .. cardinality(v_hashes) BY v_chunk LOOP
      PERFORM pg_notify('${INVALIDATION_CHANNEL}', json_build_object(
        'schema', ${literal}, 'projectId', p_project_id, 'hashes', v_hashes[i : i + v_chunk - 1])::text);
    END LOOP;
  END IF;

  RETURN (SELECT string_agg(CASE WHEN applied THEN 'a' ELSE 'd' END, '' ORDER BY ord)
          FROM unnest(v_outcomes) WITH ORDINALITY AS o(applied, ord));
END
$fn$;
`,
};

/**
 * One-time webhook tokens (Mailgun's), for `claimWebhookToken`: the body digest of the request that
 * first used each token, until `expires_at` (epoch ms, from the caller). `purgeExpired` deletes rows
 * past it, project by project, through `webhook_tokens_by_expires_at` (which leads with project_id,
 * like every index here).
 */
const webhookTokens: Migration = {
  version: 2,
  name: 'webhook_tokens',
  sql: ({ identifier: s }) => `
CREATE TABLE ${s}.webhook_tokens (
  project_id text COLLATE "C" NOT NULL,
  token text COLLATE "C" NOT NULL,
  digest text COLLATE "C" NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (project_id, token)
);
CREATE INDEX webhook_tokens_by_expires_at ON ${s}.webhook_tokens (project_id, expires_at);
`,
};

/** Every migration, in order. Append only. */
export const migrations: readonly Migration[] = [initial, webhookTokens];

/**
 * The trigram index behind tracking-ID search. Not a versioned step: it needs the pg_trgm extension,
 * which a database may not offer or the role may not be allowed to create, so every migrate() tries
 * again until it exists. Without it, search scans the project's tracking IDs in order (correct, slower).
 * With btree_gin too, the index leads with project_id like every other one. fastupdate is off: new
 * tracking IDs are rare and searches frequent, and a pending list would be scanned by every search.
 */
const searchIndex = ({ literal }: SchemaNames) => `
DO $do$
DECLARE
  v_schema text := ${literal};
  v_trgm name;
BEGIN
  IF to_regclass(format('%I.tracking_ids_search', v_schema)) IS NOT NULL THEN
    RETURN;
  END IF;
  BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
  EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'mailwarden: pg_trgm is not available (%); tracking-ID search will scan', SQLERRM;
  END;
  BEGIN
    CREATE EXTENSION IF NOT EXISTS btree_gin;
  EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'mailwarden: btree_gin is not available (%)', SQLERRM;
  END;
  SELECT n.nspname INTO v_trgm
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
  WHERE e.extname = 'pg_trgm';
  IF v_trgm IS NULL THEN
    RETURN;
  END IF;
  IF EXISTS (SELECT FROM pg_extension WHERE extname = 'btree_gin') THEN
    EXECUTE format('CREATE INDEX tracking_ids_search ON %I.tracking_ids USING gin (project_id, search_key %I.gin_trgm_ops)'
      ' WITH (fastupdate = off)', v_schema, v_trgm);
  ELSE
    EXECUTE format('CREATE INDEX tracking_ids_search ON %I.tracking_ids USING gin (search_key %I.gin_trgm_ops)'
      ' WITH (fastupdate = off)', v_schema, v_trgm);
  END IF;
END
$do$;
`;

export function schemaNames(schema: string): SchemaNames {
  if (typeof schema !== 'string' || schema.length === 0 || Buffer.byteLength(schema) > 63) {
    // Longer names would be silently truncated by PostgreSQL (NAMEDATALEN).
    throw new TypeError(`schema must be a name of 1 to 63 bytes, got ${JSON.stringify(schema)}`);
  }
  return { identifier: `"${schema.replace(/"/g, '""')}"`, literal: `'${schema.replace(/'/g, "''")}'` };
}

export interface MigrateOptions {
  /** The schema to create or bring up to date. Default `mailwarden`. */
  schema?: string;
}

export interface MigrateResult {
  /** Versions this call applied, oldest first; empty when the schema was already up to date. */
  applied: number[];
}

/**
 * Creates the schema, or brings it up to the latest version. Idempotent, and safe when many app
 * instances start at once: everything runs in one transaction holding an advisory lock, and each
 * applied version is recorded in `<schema>.mailwarden_migrations`.
 *
 * @example
 * import postgres from 'postgres';
 * import { migrate } from '@mailwarden/postgres';
 *
 * const sql = postgres(process.env.DATABASE_URL!);
 * await migrate(sql, { schema: 'mailwarden' });
 */
export async function migrate(sql: Sql<any>, options: MigrateOptions = {}): Promise<MigrateResult> {
  const schemaName = options.schema ?? 'mailwarden';
  const names = schemaNames(schemaName);
  const s = names.identifier;
  return sql.begin(async (tx) => {
    await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    // Keeps "already exists, skipping" notices out of the client's log; fallbacks raise warnings.
    await tx.unsafe('SET LOCAL client_min_messages = warning');
    // Checked first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege on the database even when
    // the schema exists, and a role may be given only a schema that an administrator created.
    const [existing] = await tx.unsafe('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schemaName]).values();
    if (existing === undefined) await tx.unsafe(`CREATE SCHEMA ${s}`);
    await tx.unsafe(`
      CREATE TABLE IF NOT EXISTS ${s}.mailwarden_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      );
    `);
    const rows = await tx.unsafe(`SELECT version FROM ${s}.mailwarden_migrations`).values();
    const done = new Set(rows.map(([version]) => Number(version)));
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await tx.unsafe(migration.sql(names));
      await tx.unsafe(`INSERT INTO ${s}.mailwarden_migrations (version, name) VALUES ($1, $2)`, [
        migration.version,
        migration.name,
      ]);
      applied.push(migration.version);
    }
    await tx.unsafe(searchIndex(names));
    return { applied };
  });
}
