-- mailwarden_append_changes with a batch's status changes beside p_changes, as columns (each
-- `message.status_changed` of the event at position p_status_o[i], `p` 3): mailwarden_apply_events
-- builds ~0.75 of them per event, and arrays cost a third of what the same changes cost as JSON objects
-- to build and read back (docs/storage.md, "The change feed, alerts and outbound state"); a status
-- change's actor, when its event had one, is its array's last element, after the 14 it stores. A change
-- object's actor is its `actor` (NULL: none). The order,
-- numbering and lock are mailwarden_append_changes' (which calls this with no status changes).

CREATE OR REPLACE FUNCTION {{schema}}.mailwarden_append_changes_with_statuses(p_project_id text, p_changes jsonb, p_status_o integer[], p_status_at bigint[], p_status_data jsonb[]) RETURNS bigint
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
  v_count := coalesce(jsonb_array_length(p_changes), 0) + coalesce(cardinality(p_status_o), 0);
  IF v_count = 0 THEN
    RETURN NULL;
  END IF;
  INSERT INTO {{schema}}.change_counters AS c (project_id, last_seq) VALUES (p_project_id, v_count)
  ON CONFLICT (project_id) DO UPDATE SET last_seq = c.last_seq + v_count
  RETURNING c.last_seq INTO v_last;
  INSERT INTO {{schema}}.changes (project_id, seq, at, kind, data, actor)
  SELECT p_project_id, v_last - v_count + row_number() OVER (ORDER BY x.o, x.p, x.n), x.at, x.kind, x.data, x.actor
  FROM (SELECT coalesce((x.value->>'o')::integer, 0) AS o, coalesce((x.value->>'p')::integer, 0) AS p, x.n,
               (x.value->>'at')::bigint AS at, x.value->>'kind' AS kind, x.value->'data' AS data, x.value->>'actor' AS actor
        FROM jsonb_array_elements(coalesce(p_changes, '[]')) WITH ORDINALITY AS x(value, n)
        UNION ALL
        SELECT s.o, 3, 0, s.at, 'message.status_changed',
               CASE WHEN jsonb_array_length(s.data) > 14 THEN s.data - 14 ELSE s.data END, s.data->>14
        FROM unnest(p_status_o, p_status_at, p_status_data) AS s(o, at, data)) x;
  RETURN v_last;
END
$fn$;
