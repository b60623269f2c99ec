-- Appends changes to a project's feed (docs/storage.md, "The change feed"): those pended in this
-- transaction (mailwarden_pend_changes) and p_changes (an array of {kind, at, data}, or NULL), ordered
-- by their tags `o` then `p` (untagged first), then as given, and numbered from the project's counter.
-- The counter row is the last row a feed write locks: a project's feed writes commit in `seq` order, so
-- a reader never sees a change while an earlier one is still to commit, and the lock adds no deadlock
-- (every other lock of the transaction was taken before it). Returns the latest seq, NULL when nothing
-- was appended.

CREATE OR REPLACE FUNCTION {{schema}}.mailwarden_append_changes(p_project_id text, p_changes jsonb) RETURNS bigint
LANGUAGE plpgsql AS $fn$
DECLARE
  v_pending text := current_setting('mailwarden.changes', true);
  v_count integer;
  v_last bigint;
BEGIN
  IF coalesce(v_pending, '') <> '' THEN
    p_changes := v_pending::jsonb || coalesce(p_changes, '[]');
    PERFORM set_config('mailwarden.changes', '', true);
  END IF;
  v_count := coalesce(jsonb_array_length(p_changes), 0);
  IF v_count = 0 THEN
    RETURN NULL;
  END IF;
  INSERT INTO {{schema}}.change_counters AS c (project_id, last_seq) VALUES (p_project_id, v_count)
  ON CONFLICT (project_id) DO UPDATE SET last_seq = c.last_seq + v_count
  RETURNING c.last_seq INTO v_last;
  INSERT INTO {{schema}}.changes (project_id, seq, at, kind, data)
  SELECT p_project_id, v_last - v_count + row_number() OVER (ORDER BY coalesce((x.value->>'o')::integer, 0), coalesce((x.value->>'p')::integer, 0), x.n),
         (x.value->>'at')::bigint, x.value->>'kind', x.value->'data'
  FROM jsonb_array_elements(p_changes) WITH ORDINALITY AS x(value, n);
  RETURN v_last;
END
$fn$;
