-- mailwarden_merge_suppressions with the change feed on (its rows' object has `feed`): each row's change
-- (docs/storage.md, "The change feed"): an expired row replaced ('suppression.expired' then
-- 'suppression.added'), a row created, upgraded (reason raised) or updated (another column moved: IS
-- DISTINCT FROM, so the same bytes append nothing). When each address has one row (most batches), the
-- rows' addresses are locked and read in key order, merged in one set-based call, and read again. Else
-- the rows are joined one at a time, each by the set-based merge, so every change is seen between two
-- rows: in key order (hash, stream), as the set-based merge locks them, then in row order per address.
-- A row's previous state is read under its lock, except an address another transaction creates between
-- that read and the merge: then the change says `added` where `upgraded` or `updated` was due (the
-- record is the stored one either way). A change's actor is its row's `actor` (an expired row's, the expiry
-- rule's). Each change is tagged with its row's `o` (an event's position, when
-- mailwarden_apply_events sends it; else the row's) and `p` (1; 2 for the soft-bounce rule's) and left
-- to mailwarden_pend_changes: mailwarden_append_changes orders and numbers them. Returns the codes of
-- mailwarden_merge_suppressions, per row in row order. Every read of a row is a primary-key probe (a
-- LATERAL subquery with LIMIT 1, the project as an InitPlan): a project newer than the statistics is
-- estimated empty, and a join or a probe with its value then scans the project's whole list through
-- another index (docs/storage.md, "The change feed").

CREATE OR REPLACE FUNCTION {{schema}}.mailwarden_feed_suppressions(p_project_id text, p_now bigint, p_rows jsonb) RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  v_row record;
  v_before {{schema}}.suppressions;
  v_after {{schema}}.suppressions;
  v_had boolean;
  v_codes text[] := array_fill(''::text, ARRAY[jsonb_array_length(p_rows)]);
  v_changes jsonb := '[]';
  v_tag jsonb;
  v_at bigint;
  v_rows_before jsonb;
  v_rows_after jsonb;
  v_merged text;
BEGIN
  IF (SELECT count(DISTINCT (x.value->>'hash', coalesce(x.value->>'stream', ''))) = count(*) FROM jsonb_array_elements(p_rows) AS x(value)) THEN
    SELECT jsonb_object_agg(s.hash || s.stream, to_jsonb(s) - 'project_id') INTO v_rows_before
    FROM (SELECT (x.value->>'hash') COLLATE "C" AS hash, coalesce(x.value->>'stream', '') COLLATE "C" AS stream
          FROM jsonb_array_elements(p_rows) AS x(value) ORDER BY 1, 2 OFFSET 0) x
    CROSS JOIN LATERAL (SELECT s.* FROM {{schema}}.suppressions s
                        WHERE s.project_id = (SELECT p_project_id) AND s.hash = x.hash AND s.stream = x.stream
                        LIMIT 1 FOR UPDATE) s;
    v_merged := {{schema}}.mailwarden_merge_suppressions(p_project_id, jsonb_build_object('now', p_now, 'rows', p_rows));
    SELECT jsonb_object_agg(s.hash || s.stream, to_jsonb(s) - 'project_id') INTO v_rows_after
    FROM jsonb_array_elements(p_rows) AS x(value)
    CROSS JOIN LATERAL (SELECT s.* FROM {{schema}}.suppressions s
                        WHERE s.project_id = (SELECT p_project_id) AND s.hash = (x.value->>'hash') COLLATE "C"
                          AND s.stream = coalesce(x.value->>'stream', '') COLLATE "C"
                        LIMIT 1) s;
    WITH rows AS (
      SELECT x.value, x.ord, v_rows_before->((x.value->>'hash') || coalesce(x.value->>'stream', '')) AS before,
             v_rows_after->((x.value->>'hash') || coalesce(x.value->>'stream', '')) AS after
      FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(value, ord)
    ), changed AS (
      SELECT r.*, coalesce((r.before->>'expires_at')::bigint <= p_now, false) AS expired FROM rows r
      WHERE r.after IS NOT NULL AND r.after IS DISTINCT FROM r.before
    ), made AS (
      SELECT value, ord, after, 1 AS n, 'suppression.expired' AS kind, jsonb_build_object('record', before) AS data FROM changed WHERE expired
      UNION ALL
      SELECT value, ord, after, 2,
             CASE WHEN before IS NULL OR expired THEN 'suppression.added'
                  WHEN (after->>'reason')::integer > (before->>'reason')::integer THEN 'suppression.upgraded'
                  ELSE 'suppression.updated' END,
             CASE WHEN before IS NULL OR expired THEN jsonb_build_object('record', after)
                  ELSE jsonb_build_object('record', after, 'previous', before) END
      FROM changed
    )
    SELECT coalesce(jsonb_agg(jsonb_build_object('o', coalesce((value->>'o')::integer, ord), 'p', coalesce((value->>'p')::integer, 1),
             'actor', CASE WHEN n = 1 THEN '{{ruleActors.expiry}}' ELSE value->>'actor' END,
             'kind', kind, 'at', coalesce(p_now, (after->>'created_at')::bigint), 'data', data) ORDER BY ord, n), '[]')
    INTO v_changes FROM made;
    PERFORM {{schema}}.mailwarden_pend_changes(v_changes);
    RETURN v_merged;
  END IF;

  FOR v_row IN
    SELECT x.value, x.ord::integer AS ord, (x.value->>'hash') COLLATE "C" AS hash, coalesce(x.value->>'stream', '') COLLATE "C" AS stream
    FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(value, ord)
    ORDER BY 3, 4, 2
  LOOP
    SELECT * INTO v_before FROM {{schema}}.suppressions
    WHERE project_id = (SELECT p_project_id) AND hash = v_row.hash AND stream = v_row.stream FOR UPDATE;
    v_had := FOUND;
    v_codes[v_row.ord] := {{schema}}.mailwarden_merge_suppressions(p_project_id,
      jsonb_build_object('now', p_now, 'rows', jsonb_build_array(v_row.value)));
    SELECT * INTO v_after FROM {{schema}}.suppressions
    WHERE project_id = (SELECT p_project_id) AND hash = v_row.hash AND stream = v_row.stream;
    CONTINUE WHEN NOT FOUND OR (v_had AND v_after IS NOT DISTINCT FROM v_before);
    v_tag := jsonb_build_object('o', coalesce((v_row.value->>'o')::integer, v_row.ord), 'p', coalesce((v_row.value->>'p')::integer, 1),
      'actor', v_row.value->>'actor');
    v_at := coalesce(p_now, v_after.created_at);
    IF v_had AND coalesce(v_before.expires_at <= p_now, false) THEN
      v_changes := v_changes || (v_tag || jsonb_build_object('actor', '{{ruleActors.expiry}}', 'kind', 'suppression.expired', 'at', v_at,
        'data', jsonb_build_object('record', to_jsonb(v_before) - 'project_id')));
      v_had := false;
    END IF;
    v_changes := v_changes || (v_tag || CASE
      WHEN NOT v_had THEN jsonb_build_object('kind', 'suppression.added', 'at', v_at,
        'data', jsonb_build_object('record', to_jsonb(v_after) - 'project_id'))
      ELSE jsonb_build_object('kind', CASE WHEN v_after.reason > v_before.reason THEN 'suppression.upgraded' ELSE 'suppression.updated' END,
        'at', v_at, 'data', jsonb_build_object('record', to_jsonb(v_after) - 'project_id', 'previous', to_jsonb(v_before) - 'project_id'))
      END);
  END LOOP;
  PERFORM {{schema}}.mailwarden_pend_changes(v_changes);
  RETURN array_to_string(v_codes, '');
END
$fn$;
