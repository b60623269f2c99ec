-- Appends changes to a project's feed (docs/storage.md, "The change feed"): those pended in this
-- transaction (mailwarden_pend_changes) and p_changes (an array of {kind, at, data}, or NULL), ordered
-- by their tags `o` then `p` (untagged first), then as given, and numbered from the project's counter.
-- The counter row is the last row a feed write locks: a project's feed writes commit in `seq` order, so
-- a reader never sees a change while an earlier one is still to commit, and the lock adds no deadlock
-- (every other lock of the transaction was taken before it). Returns the latest seq, NULL when nothing
-- was appended.

CREATE OR REPLACE FUNCTION {{schema}}.mailwarden_append_changes(p_project_id text, p_changes jsonb) RETURNS bigint
LANGUAGE plpgsql AS $fn$
BEGIN
  RETURN {{schema}}.mailwarden_append_changes_with_statuses(p_project_id, p_changes, NULL, NULL, NULL);
END
$fn$;
