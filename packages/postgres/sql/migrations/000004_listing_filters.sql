-- Indexes for the listing filters: each filter walks an index in the listing's own order, so a page is an
-- index range however rare the matches (a time range needs none: it bounds the leading column of the
-- newest-first indexes, and messages_by_last_event_at already exists). Each costs its write: an entry per
-- row inserted, and per update that is not HOT (a message update almost always changes an indexed column:
-- last_event_at, first_event_at or status), and disk (see docs/storage-internals.md, "Listing filters").
-- IF NOT EXISTS lets an operator of a large table build them first with CREATE INDEX CONCURRENTLY, under
-- these names, without blocking writes; this step then finds them done.

CREATE INDEX IF NOT EXISTS messages_by_recipient ON {{schema}}.messages (project_id, recipient, (-first_event_at), key);
CREATE INDEX IF NOT EXISTS messages_by_provider ON {{schema}}.messages (project_id, provider, (-first_event_at), key);
CREATE INDEX IF NOT EXISTS suppressions_by_reason ON {{schema}}.suppressions (project_id, reason, (-created_at), hash);
