import { Fact, reasonRanks, statusCodes } from '@mailwarden/core/store';
import type { Sql, TransactionSql } from 'postgres';
import { schemaFunctions } from './schema-functions.js';
import { schemaNames, type SchemaNames } from './schema-names.js';

/**
 * One versioned step of the schema: tables and indexes, the state that must be changed in place. The
 * SQL is a function of the quoted schema name, so one database can hold several mailwarden schemas. A
 * shipped migration creates the same objects forever: a change is a new version. Functions are not
 * versioned steps (see schema-functions.ts). Kept as TypeScript strings rather than .sql files so the
 * bundler ships them inside `dist`.
 */
export interface Migration {
  version: number;
  name: string;
  sql: (schema: SchemaNames) => string;
}

/** Taken by every migrate() of any schema, so concurrent starts (and CREATE EXTENSION) never race. */
const MIGRATION_LOCK = 7_366_231_861_020_554_051n;

// Creates the tables it created when it shipped (test/upgrade.test.ts compares them with that version);
// the function it also created then is now defined on every migrate(). It names core's persisted numbers
// entry by entry (Fact.complained, not "32"): they never change, so neither does this text.
const initial: Migration = {
  version: 1,
  name: 'initial',
  sql: ({ identifier: s }) => `
-- Every primary key and index leads with project_id; text keys use the "C" collation, so they compare
-- as bytes: code-point order, the order of every mailwarden store.

CREATE TABLE ${s}.suppressions (
  project_id text COLLATE "C" NOT NULL,
  -- Lower-case hex only, as in every store (an upper-case hash would be another key). Not '^[0-9a-f]{64}$':
  -- PostgreSQL's regex engine takes about 13 µs for that bounded repetition, this test about 3 µs.
  hash text COLLATE "C" NOT NULL CHECK (octet_length(hash) = 64 AND hash !~ '[^0-9a-f]'),
  email text NOT NULL,
  -- reasonRank: 1 manual, 2 hard_bounce, 3 complaint, so "only upgrade" is greatest().
  reason smallint NOT NULL CHECK (reason BETWEEN ${reasonRanks.manual} AND ${reasonRanks.complaint}),
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
  -- messageStatus(facts) as its code (statusCodes): 0 complained, 1 bounced, 2 rejected,
  -- 3 delivered, 4 soft_bounced, 5 deferred, 6 sent.
  status smallint NOT NULL GENERATED ALWAYS AS (
    CASE
      WHEN facts & ${Fact.complained} <> 0 THEN ${statusCodes.complained}
      WHEN facts & ${Fact.hard_bounced} <> 0 THEN ${statusCodes.bounced}
      WHEN facts & ${Fact.rejected} <> 0 THEN ${statusCodes.rejected}
      WHEN facts & ${Fact.delivered} <> 0 THEN ${statusCodes.delivered}
      WHEN facts & ${Fact.soft_bounced} <> 0 THEN ${statusCodes.soft_bounced}
      WHEN facts & ${Fact.deferred} <> 0 THEN ${statusCodes.deferred}
      ELSE ${statusCodes.sent}
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
-- mailwarden_apply_events was created here until it moved to schema-functions.ts, which every
-- migrate() (re)defines: a schema migrated before then has it already and gets it replaced.
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

/**
 * Message timelines: one row per entry, at most TIMELINE_CAP per message (mailwarden_apply_events keeps
 * the cap). The primary key is the timeline order (`compareTimelineEntries`), so a message's timeline
 * is one index range, and an entry of the same time and id is not added twice. Rows go with their
 * message (ON DELETE CASCADE; since version 8 a statement trigger): the retention purge deletes messages only.
 */
const timelines: Migration = {
  version: 3,
  name: 'timelines',
  sql: ({ identifier: s }) => `
CREATE TABLE ${s}.timeline_entries (
  project_id text COLLATE "C" NOT NULL,
  message_key text COLLATE "C" NOT NULL,
  occurred_at bigint NOT NULL,
  id text COLLATE "C" NOT NULL,
  -- The whole TimelineEntry as core built it (no raw payload: only the capped detail fields).
  entry jsonb NOT NULL,
  PRIMARY KEY (project_id, message_key, occurred_at, id),
  FOREIGN KEY (project_id, message_key) REFERENCES ${s}.messages (project_id, key) ON DELETE CASCADE
);
`,
};

/**
 * Indexes for the listing filters: each filter walks an index in the listing's own order, so a page is an
 * index range however rare the matches (a time range needs none: it bounds the leading column of the
 * newest-first indexes, and messages_by_last_event_at already exists). Each costs its write: an entry per
 * row inserted, and per update that is not HOT (a message update almost always changes an indexed column:
 * last_event_at, first_event_at or status), and disk (see docs/storage.md). IF NOT EXISTS lets an operator
 * of a large table build them first with CREATE INDEX CONCURRENTLY, under these names, without blocking
 * writes; this step then finds them done.
 */
const listingFilters: Migration = {
  version: 4,
  name: 'listing_filters',
  sql: ({ identifier: s }) => `
CREATE INDEX IF NOT EXISTS messages_by_recipient ON ${s}.messages (project_id, recipient, (-first_event_at), key);
CREATE INDEX IF NOT EXISTS messages_by_provider ON ${s}.messages (project_id, provider, (-first_event_at), key);
CREATE INDEX IF NOT EXISTS suppressions_by_reason ON ${s}.suppressions (project_id, reason, (-created_at), hash);
`,
};

/**
 * Suppression provenance: how each came to be (`source`: api, webhook, import), when (`source_at`: the
 * cause's time, the join's tie-break after the reason) and, for a webhook one, its event. Nullable
 * columns added without a default: no rewrite, and rows from before read as unknown provenance (NULL).
 */
const suppressionProvenance: Migration = {
  version: 5,
  name: 'suppression_provenance',
  sql: ({ identifier: s }) => `
ALTER TABLE ${s}.suppressions
  ADD COLUMN source text,
  ADD COLUMN source_at bigint,
  ADD COLUMN cause_provider text,
  ADD COLUMN cause_message_id text,
  ADD COLUMN cause_event_id text,
  ADD COLUMN cause_diagnostic text;
`,
};

/**
 * Counts over time (core messages/stats.ts): each message's fact times (`statColumns` order, NULL for a
 * fact it lacks, or had before this step: never counted, so it never moves), and the hour buckets per
 * project ('' in tracking_id) and tracking ID. Buckets have no foreign key and are not purged: counts
 * outlive the messages counted. A day is summed from its 24 hours when read.
 */
const stats: Migration = {
  version: 6,
  name: 'stats',
  sql: ({ identifier: s }) => `
ALTER TABLE ${s}.messages ADD COLUMN fact_times bigint[];
CREATE TABLE ${s}.stat_buckets (
  project_id text COLLATE "C" NOT NULL,
  tracking_id text COLLATE "C" NOT NULL,
  hour bigint NOT NULL,
  delivered integer NOT NULL,
  hard_bounced integer NOT NULL,
  soft_bounced integer NOT NULL,
  complained integer NOT NULL,
  opened integer NOT NULL,
  clicked integer NOT NULL,
  unsubscribed integer NOT NULL,
  PRIMARY KEY (project_id, tracking_id, hour)
);
`,
};

/**
 * Lifetime counters of opened, clicked and unsubscribed messages per tracking ID, beside the spec's.
 * Backfilled from the messages still retained (a lower bound where retention purged some), so a row's
 * counters stay consistent with what later moves subtract.
 */
const engagementCounters: Migration = {
  version: 7,
  name: 'engagement_counters',
  sql: ({ identifier: s }) => `
ALTER TABLE ${s}.tracking_ids
  ADD COLUMN opened integer NOT NULL DEFAULT 0,
  ADD COLUMN clicked integer NOT NULL DEFAULT 0,
  ADD COLUMN unsubscribed integer NOT NULL DEFAULT 0;
UPDATE ${s}.tracking_ids t SET opened = c.opened, clicked = c.clicked, unsubscribed = c.unsubscribed
FROM (SELECT project_id, tracking_id,
             count(*) FILTER (WHERE facts & ${Fact.opened} <> 0) AS opened,
             count(*) FILTER (WHERE facts & ${Fact.clicked} <> 0) AS clicked,
             count(*) FILTER (WHERE facts & ${Fact.unsubscribed} <> 0) AS unsubscribed
      FROM ${s}.messages WHERE tracking_id IS NOT NULL GROUP BY 1, 2) c
WHERE t.project_id = c.project_id AND t.tracking_id = c.tracking_id
  AND (c.opened > 0 OR c.clicked > 0 OR c.unsubscribed > 0);
`,
};

/**
 * Timelines go with their message by a statement-level trigger instead of the foreign key: the key's
 * check ran once per inserted entry (a query and a row lock each, a tenth of an applyEvents batch),
 * for rows that mailwarden_apply_events only ever inserts for messages it has just inserted or locked.
 * Deleting messages, by purgeExpired or by hand, still deletes their entries in the same statement, once
 * per statement rather than once per row.
 */
const timelineCascade: Migration = {
  version: 8,
  name: 'timeline_cascade',
  sql: ({ identifier: s }) => `
ALTER TABLE ${s}.timeline_entries DROP CONSTRAINT IF EXISTS timeline_entries_project_id_message_key_fkey;
CREATE FUNCTION ${s}.mailwarden_delete_timelines() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM ${s}.timeline_entries t USING deleted d WHERE t.project_id = d.project_id AND t.message_key = d.key;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER timelines_follow_messages AFTER DELETE ON ${s}.messages
  REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION ${s}.mailwarden_delete_timelines();
`,
};

/**
 * Indexes for the partial searches (docs/storage.md, "Partial search"). A domain is an equality, so its
 * index holds the newest-first order after it, as messages_by_recipient does: a page is an index range.
 * A prefix is a range of addresses in byte order (text_pattern_ops, whatever the database's collation),
 * so its matches come in address order and are sorted; the planner weighs that against walking the
 * newest-first order and filtering, which is cheaper when the prefix matches many. The domain is written
 * as the store's queries write it (substr, strpos: PostgreSQL 12 has no split_part(…, -1)). IF NOT
 * EXISTS: an operator may build them first with CREATE INDEX CONCURRENTLY, as for listing_filters.
 */
const partialSearch: Migration = {
  version: 9,
  name: 'partial_search',
  sql: ({ identifier: s }) => `
CREATE INDEX IF NOT EXISTS messages_by_recipient_prefix ON ${s}.messages (project_id, recipient text_pattern_ops);
CREATE INDEX IF NOT EXISTS messages_by_recipient_domain
  ON ${s}.messages (project_id, (substr(recipient, strpos(recipient, '@') + 1)), (-first_event_at), key);
CREATE INDEX IF NOT EXISTS suppressions_by_email_prefix ON ${s}.suppressions (project_id, email text_pattern_ops);
`,
};

/** Every migration, in order. Append only. */
export const migrations: readonly Migration[] = [
  initial,
  webhookTokens,
  timelines,
  listingFilters,
  suppressionProvenance,
  stats,
  engagementCounters,
  timelineCascade,
  partialSearch,
];

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

export interface MigrateOptions {
  /** The schema to create or bring up to date. Default `mailwarden`. */
  schema?: string;
}

export interface MigrateResult {
  /** Versions this call applied, oldest first; empty when the schema was already up to date. */
  applied: number[];
  /** Functions this call created or replaced (missing, or their source differed from this release's); empty when all were current. */
  functions: string[];
}

/**
 * Creates the schema, or brings it up to the latest version. Idempotent, and safe when many app
 * instances start at once: everything runs in one transaction holding an advisory lock, and each
 * applied version is recorded in `<schema>.mailwarden_migrations`. Then, every time, it defines the
 * schema's functions (`CREATE OR REPLACE` when missing or changed) and the search index if it can.
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
    const functions = await defineFunctions(tx, schemaName, names);
    await tx.unsafe(searchIndex(names));
    return { applied, functions };
  });
}

/**
 * Creates each function of `schemaFunctions`, or replaces it when its source or result differs: after
 * the versioned steps, so a function always matches the tables of this release. One that is current is
 * left alone, so a migrate() at every start writes no catalog row and invalidates no session's plans.
 */
async function defineFunctions(tx: TransactionSql<any>, schemaName: string, names: SchemaNames): Promise<string[]> {
  const defined: string[] = [];
  for (const fn of schemaFunctions) {
    const body = fn.body(names);
    const [current] = await tx
      .unsafe(
        `SELECT p.prosrc, pg_get_function_result(p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = $1 AND p.proname = $2 AND pg_get_function_identity_arguments(p.oid) = $3`,
        [schemaName, fn.name, fn.arguments],
      )
      .values();
    if (current !== undefined && current[0] === body && current[1] === fn.returns) continue;
    await tx.unsafe(
      `CREATE OR REPLACE FUNCTION ${names.identifier}.${fn.name}(${fn.arguments}) RETURNS ${fn.returns}\nLANGUAGE ${fn.language} AS $fn$${body}$fn$`,
    );
    defined.push(fn.name);
  }
  return defined;
}
