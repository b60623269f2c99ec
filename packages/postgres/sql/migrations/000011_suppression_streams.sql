-- A suppression list per stream (docs/storage-internals.md, "Suppression lists per stream"): each row is
-- in the list of its `stream`, '' for the project-wide one ('' never leaves SQL: a record of that list
-- has no stream). Adding the column with a constant default rewrites nothing, and every existing row
-- becomes project-wide. The three listing indexes are rebuilt with `stream` right after project_id, so
-- a list is a range of each, as a project was; the primary key gets `stream` last, so a hash's rows of
-- every list are one range of it (a check in a stream reads them in one descent) and the previous
-- release's lookups by (project_id, hash) keep an index during a rolling deploy. Each new index is built
-- under a name of its own, then swapped in: IF NOT EXISTS lets an operator of a large table build them
-- first with CREATE INDEX CONCURRENTLY under these names, without blocking writes, and this step then
-- only swaps them (docs/storage.md, "Upgrading to suppression lists per stream").

ALTER TABLE {{schema}}.suppressions ADD COLUMN IF NOT EXISTS stream text COLLATE "C" NOT NULL DEFAULT '';

-- A CREATE INDEX CONCURRENTLY that failed leaves its index invalid under its name: built again here.
DO $$
DECLARE
  v_index text;
BEGIN
  FOR v_index IN
    SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = {{schema_literal}} AND right(c.relname, 7) = '_000011' AND NOT i.indisvalid
  LOOP
    EXECUTE format('DROP INDEX %I.%I', {{schema_literal}}, v_index);
  END LOOP;
END
$$;

CREATE UNIQUE INDEX IF NOT EXISTS suppressions_pkey_000011 ON {{schema}}.suppressions (project_id, hash, stream);
CREATE INDEX IF NOT EXISTS suppressions_newest_first_000011 ON {{schema}}.suppressions (project_id, stream, (-created_at), hash);
CREATE INDEX IF NOT EXISTS suppressions_by_reason_000011 ON {{schema}}.suppressions (project_id, stream, reason, (-created_at), hash);
CREATE INDEX IF NOT EXISTS suppressions_by_email_prefix_000011 ON {{schema}}.suppressions (project_id, stream, email text_pattern_ops);

ALTER TABLE {{schema}}.suppressions
  DROP CONSTRAINT suppressions_pkey,
  ADD CONSTRAINT suppressions_pkey PRIMARY KEY USING INDEX suppressions_pkey_000011;
DROP INDEX {{schema}}.suppressions_newest_first, {{schema}}.suppressions_by_reason, {{schema}}.suppressions_by_email_prefix;
ALTER INDEX {{schema}}.suppressions_newest_first_000011 RENAME TO suppressions_newest_first;
ALTER INDEX {{schema}}.suppressions_by_reason_000011 RENAME TO suppressions_by_reason;
ALTER INDEX {{schema}}.suppressions_by_email_prefix_000011 RENAME TO suppressions_by_email_prefix;
