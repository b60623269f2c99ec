-- Indexes for the partial searches (docs/storage-internals.md, "Partial search"). A domain is an
-- equality, so its index holds the newest-first order after it, as messages_by_recipient does: a page is
-- an index range. A prefix is a range of addresses in byte order (text_pattern_ops, whatever the
-- database's collation), so its matches come in address order and are sorted; the planner weighs that
-- against walking the newest-first order and filtering, which is cheaper when the prefix matches many.
-- The domain is written as the store's queries write it (substr, strpos: PostgreSQL 12 has no
-- split_part(…, -1)). IF NOT EXISTS: an operator may build them first with CREATE INDEX CONCURRENTLY, as
-- for listing_filters.

CREATE INDEX IF NOT EXISTS messages_by_recipient_prefix ON {{schema}}.messages (project_id, recipient text_pattern_ops);
CREATE INDEX IF NOT EXISTS messages_by_recipient_domain
  ON {{schema}}.messages (project_id, (substr(recipient, strpos(recipient, '@') + 1)), (-first_event_at), key);
CREATE INDEX IF NOT EXISTS suppressions_by_email_prefix ON {{schema}}.suppressions (project_id, email text_pattern_ops);
