-- Expiry, the soft-bounce rule and the allowlist (docs/storage-internals.md, "Expiry, the soft-bounce
-- rule and the allowlist"). Nullable columns added without a default rewrite nothing, and every existing
-- row keeps NULL in each: it never expires, was not made by the rule, and was not allowlisted, so no
-- stored byte changes until a project configures a rule or an expiry. `cause_rule` is the rule part of
-- core's packed provenance, `[bounces, days, 0|1, [bounce, …]]` as JSON text (packProvenance). The
-- sweep (purgeExpired) and the "expiring" listing read partial indexes that hold only rows with an
-- expiry, so they cost nothing to keep while no project has one. IF NOT EXISTS: an operator of a large
-- table may build the indexes first with CREATE INDEX CONCURRENTLY, under these names.

ALTER TABLE {{schema}}.suppressions
  ADD COLUMN IF NOT EXISTS expires_at bigint,
  ADD COLUMN IF NOT EXISTS cause_rule text,
  ADD COLUMN IF NOT EXISTS allowlisted boolean;
CREATE INDEX IF NOT EXISTS suppressions_by_expires_at ON {{schema}}.suppressions (project_id, expires_at)
  WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS suppressions_expiring ON {{schema}}.suppressions (project_id, stream, (-created_at), hash)
  WHERE expires_at IS NOT NULL;

-- A project's allowlist: `key` is what events match (an address's hash, or '@' and a domain), `entry`
-- what listings show and sort by (code-point order: COLLATE "C").
CREATE TABLE {{schema}}.allowlist (
  project_id text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  entry text COLLATE "C" NOT NULL,
  created_at bigint NOT NULL,
  PRIMARY KEY (project_id, key)
);
CREATE INDEX allowlist_by_entry ON {{schema}}.allowlist (project_id, entry);

-- The soft-bounce rule's history, one row per address of a project: `bounces` the kept soft bounces as a
-- JSON array of [at, eventId, message, packed bounce], by (at, eventId); `last_delivery` the latest
-- delivery kept; `forget_at` when all of it is older than the rule keeps it (its latest time plus the
-- rule's keepMs), for the sweep. A row with nothing kept is deleted, not stored.
CREATE TABLE {{schema}}.soft_bounces (
  project_id text COLLATE "C" NOT NULL,
  hash text COLLATE "C" NOT NULL,
  bounces jsonb NOT NULL,
  last_delivery bigint,
  forget_at bigint NOT NULL,
  PRIMARY KEY (project_id, hash)
);
CREATE INDEX soft_bounces_by_forget_at ON {{schema}}.soft_bounces (project_id, forget_at);
