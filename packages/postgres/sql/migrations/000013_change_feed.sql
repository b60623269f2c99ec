-- The change feed, alert windows, paused streams and outbound delivery state (docs/storage-internals.md,
-- "The change feed"). New tables only: nothing existing is rewritten, and a store made without its
-- `changes` option never writes `changes` or `change_counters`.

-- A project's feed: `seq` counts from 1 per project in commit order; `kind` is the change's kind
-- (core's changeKinds) and `data` the rest of it, its records as their rows' columns (to_jsonb of a
-- suppressions row, a message's columns as an array).
CREATE TABLE {{schema}}.changes (
  project_id text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  at bigint NOT NULL,
  kind text COLLATE "C" NOT NULL,
  data jsonb NOT NULL,
  PRIMARY KEY (project_id, seq)
);

-- Per project: the latest `seq`, and the highest one retention deleted. The row is the last lock a
-- feed write takes, so a project's feed writes commit in `seq` order (no change is visible before an
-- earlier one).
CREATE TABLE {{schema}}.change_counters (
  project_id text COLLATE "C" NOT NULL PRIMARY KEY,
  last_seq bigint NOT NULL,
  trimmed bigint NOT NULL DEFAULT 0
);

-- An alert window per project ('' scope) and per tracking ID: its counts and state, `size` (the rule's
-- window its slots are numbered for), and `head`, the slot the next message entering takes (the oldest
-- one's when the window is full).
CREATE TABLE {{schema}}.alert_windows (
  project_id text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  size integer NOT NULL,
  messages integer NOT NULL,
  bounced integer NOT NULL,
  complained integer NOT NULL,
  bounce_firing boolean NOT NULL,
  complaint_firing boolean NOT NULL,
  head integer NOT NULL,
  PRIMARY KEY (project_id, scope)
);

-- A window's ring of messages: `flags` 1 hard-bounced, 2 complained (each counted once).
CREATE TABLE {{schema}}.alert_window_slots (
  project_id text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  slot integer NOT NULL,
  message_key text COLLATE "C" NOT NULL,
  flags smallint NOT NULL,
  PRIMARY KEY (project_id, scope, slot)
);
CREATE INDEX alert_window_slots_by_message ON {{schema}}.alert_window_slots (project_id, scope, message_key);

CREATE TABLE {{schema}}.paused_streams (
  project_id text COLLATE "C" NOT NULL,
  stream text COLLATE "C" NOT NULL,
  paused_at bigint NOT NULL,
  cause text NOT NULL,
  PRIMARY KEY (project_id, stream)
);

-- An outbound endpoint's delivery state, and the lease on delivering it (`owner` until `lease_until`).
CREATE TABLE {{schema}}.outbound_endpoints (
  project_id text COLLATE "C" NOT NULL,
  endpoint text COLLATE "C" NOT NULL,
  cursor bigint NOT NULL,
  failures integer NOT NULL,
  failing_since bigint,
  next_attempt_at bigint NOT NULL,
  paused_at bigint,
  last_error text,
  last_success_at bigint,
  owner text NOT NULL,
  lease_until bigint NOT NULL,
  PRIMARY KEY (project_id, endpoint)
);
