-- Creates the tables it created when it shipped (test/upgrade.test.ts compares them with that version);
-- the function it also created then is now defined on every migrate(). It names core's persisted numbers
-- entry by entry ({{Fact.complained}}, not "32"): they never change, so neither does this text. Its
-- last comment names schema-functions.ts, where the functions were before sql/functions/.

-- Every primary key and index leads with project_id; text keys use the "C" collation, so they compare
-- as bytes: code-point order, the order of every mailwarden store.

CREATE TABLE {{schema}}.suppressions (
  project_id text COLLATE "C" NOT NULL,
  -- Lower-case hex only, as in every store (an upper-case hash would be another key). Not '^[0-9a-f]{64}$':
  -- PostgreSQL's regex engine takes about 13 µs for that bounded repetition, this test about 3 µs.
  hash text COLLATE "C" NOT NULL CHECK (octet_length(hash) = 64 AND hash !~ '[^0-9a-f]'),
  email text NOT NULL,
  -- reasonRank: 1 manual, 2 hard_bounce, 3 complaint, so "only upgrade" is greatest().
  reason smallint NOT NULL CHECK (reason BETWEEN {{reasonRanks.manual}} AND {{reasonRanks.complaint}}),
  created_at bigint NOT NULL,
  PRIMARY KEY (project_id, hash)
);
-- Newest first as one ascending key, so "after (createdAt, hash)" is the row comparison
-- (-created_at, hash) > (-$createdAt, $hash): the start of an index range, whatever the depth.
CREATE INDEX suppressions_newest_first ON {{schema}}.suppressions (project_id, (-created_at), hash);

CREATE TABLE {{schema}}.event_keys (
  project_id text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  -- Epoch ms of the database clock when first seen: only the retention sweep reads it.
  seen_at bigint NOT NULL,
  PRIMARY KEY (project_id, key)
);
CREATE INDEX event_keys_by_seen_at ON {{schema}}.event_keys (project_id, seen_at);

CREATE TABLE {{schema}}.messages (
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
      WHEN facts & {{Fact.complained}} <> 0 THEN {{statusCodes.complained}}
      WHEN facts & {{Fact.hard_bounced}} <> 0 THEN {{statusCodes.bounced}}
      WHEN facts & {{Fact.rejected}} <> 0 THEN {{statusCodes.rejected}}
      WHEN facts & {{Fact.delivered}} <> 0 THEN {{statusCodes.delivered}}
      WHEN facts & {{Fact.soft_bounced}} <> 0 THEN {{statusCodes.soft_bounced}}
      WHEN facts & {{Fact.deferred}} <> 0 THEN {{statusCodes.deferred}}
      ELSE {{statusCodes.sent}}
    END
  ) STORED,
  first_event_at bigint NOT NULL,
  last_event_at bigint NOT NULL,
  PRIMARY KEY (project_id, key)
);
CREATE INDEX messages_newest_first ON {{schema}}.messages (project_id, (-first_event_at), key);
CREATE INDEX messages_by_tracking_id ON {{schema}}.messages (project_id, tracking_id, (-first_event_at), key)
  WHERE tracking_id IS NOT NULL;
CREATE INDEX messages_by_status ON {{schema}}.messages (project_id, status, (-first_event_at), key);
CREATE INDEX messages_by_last_event_at ON {{schema}}.messages (project_id, last_event_at);

CREATE TABLE {{schema}}.tracking_ids (
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
