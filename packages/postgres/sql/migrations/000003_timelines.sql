-- Message timelines: one row per entry, at most TIMELINE_CAP per message (mailwarden_apply_events keeps
-- the cap). The primary key is the timeline order (`compareTimelineEntries`), so a message's timeline
-- is one index range, and an entry of the same time and id is not added twice. Rows go with their
-- message (ON DELETE CASCADE; since version 8 a statement trigger): the retention purge deletes messages only.

CREATE TABLE {{schema}}.timeline_entries (
  project_id text COLLATE "C" NOT NULL,
  message_key text COLLATE "C" NOT NULL,
  occurred_at bigint NOT NULL,
  id text COLLATE "C" NOT NULL,
  -- The whole TimelineEntry as core built it (no raw payload: only the capped detail fields).
  entry jsonb NOT NULL,
  PRIMARY KEY (project_id, message_key, occurred_at, id),
  FOREIGN KEY (project_id, message_key) REFERENCES {{schema}}.messages (project_id, key) ON DELETE CASCADE
);
