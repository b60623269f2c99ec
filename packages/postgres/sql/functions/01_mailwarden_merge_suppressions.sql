-- The store's `mergeSuppressions`, and step 5 of `mailwarden_apply_events`: suppression rows (the
-- suppression fields of `toEventRow`: hash, email, reason rank, created_at, the provenance columns, and
-- the stream of the list it goes to, none for the project-wide one) joined in, in one transaction, as if
-- one by one in order: the reason only upgrades, createdAt is the earliest, the provenance is the
-- stronger reason's, then the earlier cause's, then the smaller event ID's (core provenanceWins; a row
-- without provenance compares as the latest). Each list is its own: an address is joined with its row of
-- the same list only, and `key` (suppression_events.sql) names the two together. Notifies the hashes it
-- created or changed, in whichever list, once per batch. Returns one character per row: 's' created,
-- the rank of the reason it raised, else 'a'.
--
-- Expiry (docs/decisions.md, "Suppressions that expire"): p_rows is the rows' array, or (this release)
-- an object `{ now, rows }` with the caller's clock. Given `now`, a row already expired at it is not
-- written ('a'), and a stored row expired at it counts as absent: the batch's rows replace it whole
-- ('s'). The expiry, the rule (`cause_rule`) and `allowlisted` are part of the provenance: they go
-- with it. An array, as the previous release sends it, has no `now`: nothing is expired. An object with
-- `feed` (the store keeps a change feed) is merged row by row by mailwarden_feed_suppressions.

CREATE OR REPLACE FUNCTION {{schema}}.mailwarden_merge_suppressions(p_project_id text, p_rows jsonb) RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  v_hashes text[];
  -- Keys (hash then stream) of the addresses step 1 created.
  v_suppressed text[];
  v_before jsonb;
  v_chunk integer;
  v_now bigint;
BEGIN
  IF jsonb_typeof(p_rows) = 'object' THEN
    v_now := (p_rows->>'now')::bigint;
    -- With the change feed, row by row (mailwarden_feed_suppressions), which calls this without it.
    IF p_rows ? 'feed' THEN
      RETURN {{schema}}.mailwarden_feed_suppressions(p_project_id, v_now, p_rows->'rows');
    END IF;
    p_rows := p_rows->'rows';
  END IF;

  -- 1. In key order (hash, stream), addresses without a row in their list get one and the others are
  --    locked (WHERE false updates nothing but still locks), so what each address had before the batch
  --    is known and stays so until commit: the rows' outcomes.
  WITH {{> suppression_events}}, created AS (
    INSERT INTO {{schema}}.suppressions AS s (project_id, stream, hash, email, reason, created_at,
                                        source, source_at, cause_provider, cause_message_id, cause_event_id, cause_diagnostic,
                                        expires_at, cause_rule, allowlisted)
    {{> suppression_rows}} ORDER BY hash, stream
    ON CONFLICT (project_id, hash, stream) DO UPDATE SET reason = s.reason WHERE false
    RETURNING s.hash || s.stream AS key
  )
  SELECT array_agg(key) INTO v_suppressed FROM created;

  -- 2. The rows that were there: read (a new snapshot: locked rows, as committed) and joined.
  --    Only rows that changed are written, and only they and the created ones are invalidated.
  --    Looked up from the batch's addresses, one primary-key probe each (a scalar subquery: a join
  --    planned while the table's statistics said it was small hash-joins a scan of the whole project;
  --    the project as an InitPlan, since a project newer than the statistics looks empty and any index
  --    on project_id then ties with the key: docs/storage.md, "The change feed"), leaving out those just created (a hash anti-join, not a scan of an array). Every address left
  --    has a row: step 1 locked it.
  --    A row expired at v_now is written over, but was not there before (its reason NULL).
  WITH {{> suppression_events}}, before AS (
    SELECT e.key,
           (SELECT x.reason FROM {{schema}}.suppressions x
            WHERE x.project_id = (SELECT p_project_id) AND x.stream = e.stream AND x.hash = e.hash
              AND NOT coalesce(x.expires_at <= v_now, false)) AS reason
    FROM seen e
    LEFT JOIN unnest(v_suppressed) AS c(key) ON c.key = e.key
    WHERE c.key IS NULL
  ), written AS (
    INSERT INTO {{schema}}.suppressions AS s (project_id, stream, hash, email, reason, created_at,
                                        source, source_at, cause_provider, cause_message_id, cause_event_id, cause_diagnostic,
                                        expires_at, cause_rule, allowlisted)
    {{> suppression_rows}} AND key IN (SELECT key FROM before) ORDER BY hash, stream
    ON CONFLICT (project_id, hash, stream) DO UPDATE SET
      email = CASE WHEN s.expires_at <= v_now THEN excluded.email ELSE s.email END,
      reason = CASE WHEN s.expires_at <= v_now THEN excluded.reason ELSE greatest(s.reason, excluded.reason) END,
      created_at = CASE WHEN s.expires_at <= v_now THEN excluded.created_at ELSE least(s.created_at, excluded.created_at) END,
      source = CASE WHEN {{> cause_replaces}} THEN excluded.source ELSE s.source END,
      source_at = CASE WHEN {{> cause_replaces}} THEN excluded.source_at ELSE s.source_at END,
      cause_provider = CASE WHEN {{> cause_replaces}} THEN excluded.cause_provider ELSE s.cause_provider END,
      cause_message_id = CASE WHEN {{> cause_replaces}} THEN excluded.cause_message_id ELSE s.cause_message_id END,
      cause_event_id = CASE WHEN {{> cause_replaces}} THEN excluded.cause_event_id ELSE s.cause_event_id END,
      cause_diagnostic = CASE WHEN {{> cause_replaces}} THEN excluded.cause_diagnostic ELSE s.cause_diagnostic END,
      expires_at = CASE WHEN {{> cause_replaces}} THEN excluded.expires_at ELSE s.expires_at END,
      cause_rule = CASE WHEN {{> cause_replaces}} THEN excluded.cause_rule ELSE s.cause_rule END,
      allowlisted = CASE WHEN {{> cause_replaces}} THEN excluded.allowlisted ELSE s.allowlisted END
    WHERE excluded.created_at < s.created_at OR {{> cause_replaces}}
    RETURNING s.hash
  )
  -- An invalidation names hashes, whatever their lists: each once.
  SELECT (SELECT array_agg(DISTINCT hash) FROM (SELECT hash FROM written UNION ALL SELECT left(key, 64) FROM unnest(v_suppressed) AS c(key)) h),
         (SELECT coalesce(jsonb_object_agg(key, reason) FILTER (WHERE reason IS NOT NULL), '{}') FROM before)
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
  --    an address that had no suppression in its list created it ('s'); a row whose reason is stronger
  --    than all the address had in that list before it (the stored row's, the batch's earlier rows')
  --    raised it from that (the rank it had); any other 'a', a row left out as expired too.
  RETURN (
    WITH {{> suppression_events}}, ranked AS (
      SELECT ord, key, reason,
             max(reason) OVER (PARTITION BY key ORDER BY ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prior
      FROM seen_events
    )
    SELECT coalesce(string_agg(CASE
             WHEN e.ord IS NULL THEN 'a'
             WHEN e.prior IS NULL AND NOT v_before ? e.key THEN 's'
             WHEN e.reason > coalesce(greatest(e.prior, (v_before->>e.key)::smallint), 0)
               THEN greatest(e.prior, (v_before->>e.key)::smallint)::text
             ELSE 'a' END, '' ORDER BY o.ord), '')
    FROM generate_series(1, jsonb_array_length(p_rows)) AS o(ord) LEFT JOIN ranked e ON e.ord = o.ord);
END
$fn$;
