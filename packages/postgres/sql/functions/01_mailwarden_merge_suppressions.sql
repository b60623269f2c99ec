-- The store's `mergeSuppressions`, and step 5 of `mailwarden_apply_events`: suppression rows (the
-- suppression fields of `toEventRow`: hash, email, reason rank, created_at, the provenance columns)
-- joined in, in one transaction, as if one by one in order: the reason only upgrades, createdAt is
-- the earliest, the provenance is the stronger reason's, then the earlier cause's, then the smaller
-- event ID's (core provenanceWins; a row without provenance compares as the latest). Notifies the hashes
-- it created or changed, once per batch. Returns one character per row: 's' created, the rank of the
-- reason it raised, else 'a'.

CREATE OR REPLACE FUNCTION {{schema}}.mailwarden_merge_suppressions(p_project_id text, p_rows jsonb) RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  v_hashes text[];
  v_suppressed text[];
  v_before jsonb;
  v_chunk integer;
BEGIN
  -- 1. In hash order, addresses without a row get one and the others are locked (WHERE false updates
  --    nothing but still locks), so what each address had before the batch is known and stays so
  --    until commit: the rows' outcomes.
  WITH {{> suppression_events}}, created AS (
    INSERT INTO {{schema}}.suppressions AS s (project_id, hash, email, reason, created_at,
                                        source, source_at, cause_provider, cause_message_id, cause_event_id, cause_diagnostic)
    {{> suppression_rows}} ORDER BY hash
    ON CONFLICT (project_id, hash) DO UPDATE SET reason = s.reason WHERE false
    RETURNING s.hash
  )
  SELECT array_agg(hash) INTO v_suppressed FROM created;

  -- 2. The rows that were there: read (a new snapshot: locked rows, as committed) and joined.
  --    Only rows that changed are written, and only they and the created ones are invalidated.
  --    Looked up from the batch's addresses, one primary-key probe each (a scalar subquery: a join
  --    planned while the table's statistics said it was small hash-joins a scan of the whole project),
  --    leaving out those just created (a hash anti-join, not a scan of an array). Every address left
  --    has a row: step 1 locked it.
  WITH {{> suppression_events}}, before AS (
    SELECT e.hash,
           (SELECT x.reason FROM {{schema}}.suppressions x WHERE x.project_id = p_project_id AND x.hash = e.hash) AS reason
    FROM seen e
    LEFT JOIN unnest(v_suppressed) AS c(hash) ON c.hash = e.hash
    WHERE c.hash IS NULL
  ), written AS (
    INSERT INTO {{schema}}.suppressions AS s (project_id, hash, email, reason, created_at,
                                        source, source_at, cause_provider, cause_message_id, cause_event_id, cause_diagnostic)
    {{> suppression_rows}} AND hash IN (SELECT hash FROM before) ORDER BY hash
    ON CONFLICT (project_id, hash) DO UPDATE SET
      reason = greatest(s.reason, excluded.reason),
      created_at = least(s.created_at, excluded.created_at),
      source = CASE WHEN {{> cause_wins}} THEN excluded.source ELSE s.source END,
      source_at = CASE WHEN {{> cause_wins}} THEN excluded.source_at ELSE s.source_at END,
      cause_provider = CASE WHEN {{> cause_wins}} THEN excluded.cause_provider ELSE s.cause_provider END,
      cause_message_id = CASE WHEN {{> cause_wins}} THEN excluded.cause_message_id ELSE s.cause_message_id END,
      cause_event_id = CASE WHEN {{> cause_wins}} THEN excluded.cause_event_id ELSE s.cause_event_id END,
      cause_diagnostic = CASE WHEN {{> cause_wins}} THEN excluded.cause_diagnostic ELSE s.cause_diagnostic END
    WHERE excluded.created_at < s.created_at OR {{> cause_wins}}
    RETURNING s.hash
  )
  SELECT (SELECT array_agg(hash) FROM written) || v_suppressed,
         (SELECT coalesce(jsonb_object_agg(hash, reason), '{}') FROM before)
  INTO v_hashes, v_before;

  -- 3. Delivered to listeners on commit; payloads stay under NOTIFY's 8000-byte limit.
  IF v_hashes IS NOT NULL THEN
    v_chunk := greatest(1, (7900 - octet_length(
      json_build_object('schema', {{schema_literal}}, 'projectId', p_project_id, 'hashes', '[]'::json)::text)) / 67);
    FOR i IN 1 .. cardinality(v_hashes) BY v_chunk LOOP
      PERFORM pg_notify('{{INVALIDATION_CHANNEL}}', json_build_object(
        'schema', {{schema_literal}}, 'projectId', p_project_id, 'hashes', v_hashes[i : i + v_chunk - 1])::text);
    END LOOP;
  END IF;

  -- 4. Per row, as if merged one by one (core's eventOutcomeOfCode reads the codes): the first row of
  --    an address that had no suppression created it ('s'); a row whose reason is stronger than all
  --    the address had before it (the stored row's, the batch's earlier rows') raised it from that
  --    (the rank it had); any other 'a'.
  RETURN (
    WITH {{> suppression_events}}, ranked AS (
      SELECT ord, hash, reason,
             max(reason) OVER (PARTITION BY hash ORDER BY ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prior
      FROM seen_events
    )
    SELECT coalesce(string_agg(CASE
             WHEN e.prior IS NULL AND NOT v_before ? e.hash THEN 's'
             WHEN e.reason > coalesce(greatest(e.prior, (v_before->>e.hash)::smallint), 0)
               THEN greatest(e.prior, (v_before->>e.hash)::smallint)::text
             ELSE 'a' END, '' ORDER BY e.ord), '')
    FROM ranked e);
END
$fn$;
