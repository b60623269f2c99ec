-- The store's `syncApiKeys`: makes the project's `api_keys` rows equal to p_sync's `keys` ([{name,
-- scopes, version}], scopes sorted) and appends, in name order, `key.added`, `key.updated` (scopes or
-- version differ) or `key.removed`, at `now` with `actor`, when p_sync has `feed`. Concurrent syncs of
-- a project wait for each other (a transaction-level advisory lock of the schema and project), so the
-- second one finds the list equal and appends nothing. Returns {changes, last}: the changes as
-- appended ({kind, at, actor, data}), and the feed's latest seq after them (NULL when none appended).

CREATE OR REPLACE FUNCTION {{schema}}.mailwarden_sync_api_keys(p_project_id text, p_sync jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $fn$
DECLARE
  v_changes jsonb;
  v_last bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended({{schema_literal}} || ':api_keys:' || p_project_id, 0));
  WITH given AS (
    SELECT (k->>'name') COLLATE "C" AS name, array(SELECT jsonb_array_elements_text(k->'scopes')) AS scopes, k->>'version' AS version
    FROM jsonb_array_elements(p_sync->'keys') AS x(k)
  ), diff AS (
    SELECT coalesce(g.name, a.name) AS name, g.scopes, g.version, a.scopes AS old_scopes,
           CASE WHEN a.name IS NULL THEN 'key.added' WHEN g.name IS NULL THEN 'key.removed' ELSE 'key.updated' END AS kind
    FROM given g FULL JOIN (SELECT name, scopes, version FROM {{schema}}.api_keys WHERE project_id = p_project_id) a ON a.name = g.name
    WHERE g.name IS NULL OR a.name IS NULL OR g.scopes <> a.scopes OR g.version <> a.version
  ), removed AS (
    DELETE FROM {{schema}}.api_keys a USING diff d WHERE a.project_id = p_project_id AND a.name = d.name AND d.kind = 'key.removed'
  ), written AS (
    INSERT INTO {{schema}}.api_keys AS a (project_id, name, scopes, version)
    SELECT p_project_id, name, scopes, version FROM diff WHERE kind <> 'key.removed' ORDER BY name
    ON CONFLICT (project_id, name) DO UPDATE SET scopes = excluded.scopes, version = excluded.version
  )
  SELECT coalesce(jsonb_agg(jsonb_build_object('kind', kind, 'at', (p_sync->>'now')::bigint, 'actor', p_sync->>'actor', 'data',
           CASE kind
             WHEN 'key.added' THEN jsonb_build_object('key', jsonb_build_object('name', name, 'scopes', to_jsonb(scopes)))
             WHEN 'key.removed' THEN jsonb_build_object('key', jsonb_build_object('name', name, 'scopes', to_jsonb(old_scopes)))
             ELSE jsonb_build_object('key', jsonb_build_object('name', name, 'scopes', to_jsonb(scopes)),
                                     'previous', jsonb_build_object('name', name, 'scopes', to_jsonb(old_scopes))) END)
           ORDER BY name), '[]')
  INTO v_changes FROM diff;
  IF p_sync ? 'feed' AND jsonb_array_length(v_changes) > 0 THEN
    v_last := {{schema}}.mailwarden_append_changes(p_project_id, v_changes);
  END IF;
  RETURN jsonb_build_object('changes', v_changes, 'last', v_last);
END
$fn$;
