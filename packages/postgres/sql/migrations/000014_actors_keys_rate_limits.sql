-- The audit trail, key sync and shared rate limits (docs/storage.md, "Actors, erasure, keys and rate
-- limits (PostgreSQL)").
-- `changes.actor` is who made a change (core's store/actor.ts): a nullable column added without a
-- default rewrites nothing, and a change made without an actor keeps NULL, so no stored byte of a
-- change moves until a writer names one. A column rather than a key of `data`: the feed is filtered
-- by it (listChanges' `actors`).

ALTER TABLE {{schema}}.changes ADD COLUMN IF NOT EXISTS actor text COLLATE "C";

-- The keys a project's configuration holds, as Store.syncApiKeys last made them: by name, their
-- scopes (sorted) and `version` (which changes with the key's secret). Never the key nor its hash.
CREATE TABLE {{schema}}.api_keys (
  project_id text COLLATE "C" NOT NULL,
  name text COLLATE "C" NOT NULL,
  scopes text[] NOT NULL,
  version text COLLATE "C" NOT NULL,
  PRIMARY KEY (project_id, name)
);

-- Rate-limit counters shared by every instance (Store.hitRateLimits): one row per bucket and fixed
-- window, named by its length and its end (epoch ms), so limiters with different windows never share
-- a count and purgeExpired deletes ended windows by their end. UNLOGGED: not written to the WAL, so
-- counting costs no fsync and no replica traffic; a crash empties the table, which only forgets the
-- current windows' counts (on purpose).
CREATE UNLOGGED TABLE {{schema}}.rate_limits (
  bucket text COLLATE "C" NOT NULL,
  window_ms bigint NOT NULL,
  window_end bigint NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (bucket, window_ms, window_end)
);
