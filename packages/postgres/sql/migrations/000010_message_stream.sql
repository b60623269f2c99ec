-- The stream a message was sent in (core's MessageRecord.stream), null for none: a nullable column, so
-- adding it rewrites nothing and every existing message has none. Its filter walks an index in the
-- listing's own order, as messages_by_recipient does; partial, since most messages of most projects have
-- no stream, and `stream = $n` implies the row is in it. IF NOT EXISTS: an operator of a large table may
-- build it first with CREATE INDEX CONCURRENTLY, under this name, as for listing_filters.

ALTER TABLE {{schema}}.messages ADD COLUMN IF NOT EXISTS stream text COLLATE "C";
CREATE INDEX IF NOT EXISTS messages_by_stream
  ON {{schema}}.messages (project_id, stream, (-first_event_at), key) WHERE stream IS NOT NULL;
