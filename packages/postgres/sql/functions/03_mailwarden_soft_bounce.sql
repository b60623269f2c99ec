-- The soft-bounce rule (docs/decisions.md, "The soft-bounce rule") for one applied event of
-- mailwarden_apply_events, after the event's own suppression was joined. p_rule is the project's rule
-- (core's StoredSoftBounceRule as JSON), p_now the caller's clock (NULL: nothing is forgotten), p_input
-- the event's rule input as toEventColumns sends it ({kind: 'delivery', hash, at} or {kind:
-- 'soft_bounce', hash, email, at, message, event_id, packed}), p_allowlisted whether its recipient is
-- allowlisted. The transaction holds the address's history row: mailwarden_apply_events inserts or
-- locks it first, in hash order (an earlier event of the batch may have deleted it since). History: the
-- kept bounces as [at, eventId, message, packed bounce], by (at, eventId), and the latest delivery kept.
-- Returns the code of the rule's join (mailwarden_merge_suppressions) when a window made a suppression,
-- else NULL.

CREATE OR REPLACE FUNCTION {{schema}}.mailwarden_soft_bounce(p_project_id text, p_rule jsonb, p_now bigint, p_input jsonb, p_allowlisted boolean) RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  v_hash text := p_input->>'hash';
  v_at bigint := (p_input->>'at')::bigint;
  v_keep bigint := (p_rule->>'keepMs')::bigint;
  -- NULL without a clock: minus infinity, so every comparison with it is coalesced to "not older".
  v_horizon bigint := p_now - v_keep;
  v_size integer := (p_rule->>'bounces')::integer;
  v_bounces jsonb[];
  v_last bigint;
  v_new jsonb;
  v_index integer;
  v_end jsonb;
  v_cause jsonb;
  v_expires bigint;
  v_rule text;
  v_code text;
BEGIN
  -- 1. The history, without what is older than the horizon.
  SELECT array(SELECT b FROM jsonb_array_elements(h.bounces) WITH ORDINALITY AS x(b, n)
               WHERE NOT coalesce((b->>0)::bigint < v_horizon, false) ORDER BY n),
         CASE WHEN NOT coalesce(h.last_delivery < v_horizon, false) THEN h.last_delivery END
  INTO v_bounces, v_last
  FROM {{schema}}.soft_bounces h WHERE h.project_id = p_project_id AND h.hash = v_hash;
  v_bounces := coalesce(v_bounces, '{}');

  IF p_input->>'kind' = 'delivery' THEN
    -- 2. A delivery within the keep time: bounces before the latest delivery no longer count.
    IF NOT coalesce(v_at < v_horizon, false) THEN
      v_last := greatest(v_last, v_at);
      v_bounces := array(SELECT b FROM unnest(v_bounces) WITH ORDINALITY AS x(b, n) WHERE (b->>0)::bigint >= v_last ORDER BY n);
    END IF;
  ELSIF NOT (
    -- 3. Not kept: allowlisted; too late; before a delivery that resets; after the address was already
    --    suppressed project-wide for bouncing or complaining (that suppression cannot move); or a bounce
    --    of the same message is kept at or before it (a message counts once, at its earliest).
    p_allowlisted
    OR coalesce(v_at < v_horizon, false)
    OR coalesce((p_rule->>'resetOnDelivery')::boolean AND v_at < v_last, false)
    OR EXISTS (SELECT FROM {{schema}}.suppressions s
               WHERE s.project_id = p_project_id AND s.hash = v_hash AND s.stream = ''
                 AND s.reason >= {{reasonRanks.hard_bounce}} AND s.source_at < v_at
                 AND NOT coalesce(s.expires_at <= p_now, false))
    OR EXISTS (SELECT FROM unnest(v_bounces) AS b
               WHERE b->>2 = p_input->>'message'
                 AND ((b->>0)::bigint, (b->>1) COLLATE "C") <= (v_at, (p_input->>'event_id') COLLATE "C"))
  ) THEN
    -- 4. Kept, in (at, eventId) order; a later bounce of the same message gives way to it.
    v_new := jsonb_build_array(v_at, p_input->'event_id', p_input->'message', p_input->'packed');
    SELECT array_agg(b ORDER BY (b->>0)::bigint, (b->>1) COLLATE "C") INTO v_bounces
    FROM (SELECT b FROM unnest(v_bounces) AS b WHERE b->>2 IS DISTINCT FROM p_input->>'message' UNION ALL SELECT v_new) x(b);
    v_index := array_position(v_bounces, v_new);
    -- The window of `bounces` consecutive kept bounces that holds this one and ends first, if one
    -- spans at most windowMs and its suppression would not already be expired at p_now (then a later
    -- window may count).
    FOR v_first IN greatest(1, v_index - v_size + 1) .. v_index LOOP
      EXIT WHEN v_first + v_size - 1 > cardinality(v_bounces);
      v_end := v_bounces[v_first + v_size - 1];
      v_expires := (v_end->>0)::bigint + (p_rule->>'expiresAfterMs')::bigint;
      CONTINUE WHEN (v_end->>0)::bigint - (v_bounces[v_first]->>0)::bigint > (p_rule->>'windowMs')::bigint
        OR coalesce(v_expires <= p_now, false);
      -- 5. A hard_bounce in the project-wide list, made at the window's last bounce, its provenance
      --    naming the rule and the window (core's packProvenance: the rule, then the bounces packed).
      v_rule := '[' || (p_rule->>'packed') || ',['
        || (SELECT string_agg(b->>3, ',' ORDER BY n) FROM unnest(v_bounces[v_first : v_first + v_size - 1]) WITH ORDINALITY AS x(b, n))
        || ']]';
      -- The stored suppression is a window ending at the same bounce (this one arrived between its
      -- members): the window of the bounces kept now replaces it, which a join would not (same time,
      -- same event).
      UPDATE {{schema}}.suppressions SET cause_rule = v_rule, expires_at = v_expires
      WHERE project_id = p_project_id AND hash = v_hash AND stream = '' AND cause_rule IS NOT NULL
        AND source_at = (v_end->>0)::bigint AND cause_event_id = v_end->>1 AND NOT coalesce(expires_at <= p_now, false);
      IF FOUND THEN
        v_code := 'a';
        PERFORM pg_notify('{{INVALIDATION_CHANNEL}}', json_build_object(
          'schema', {{schema_literal}}, 'projectId', p_project_id, 'hashes', json_build_array(v_hash))::text);
      ELSE
        v_cause := (v_end->>3)::jsonb;
        v_code := {{schema}}.mailwarden_merge_suppressions(p_project_id, jsonb_build_object('now', p_now, 'rows', jsonb_build_array(
          jsonb_strip_nulls(jsonb_build_object(
            'hash', v_hash, 'email', p_input->'email', 'reason', {{reasonRanks.hard_bounce}}, 'created_at', v_end->0,
            'source', 'webhook', 'source_at', v_end->0, 'cause_event_id', v_end->1,
            'cause_provider', v_cause->0, 'cause_message_id', v_cause->1, 'cause_diagnostic', v_cause->4,
            'expires_at', v_expires, 'cause_rule', v_rule)))));
      END IF;
      -- Bounces after the suppression cannot move it (step 3d): they need not be kept.
      v_bounces := array(SELECT b FROM unnest(v_bounces) WITH ORDINALITY AS x(b, n)
                         WHERE (b->>0)::bigint <= (v_end->>0)::bigint ORDER BY n);
      EXIT;
    END LOOP;
  END IF;

  -- 7. Saved; an empty history is deleted. Saved by an upsert: an earlier event of the same batch may
  --    have deleted the row (this transaction holds its key since).
  IF cardinality(v_bounces) = 0 AND v_last IS NULL THEN
    DELETE FROM {{schema}}.soft_bounces WHERE project_id = p_project_id AND hash = v_hash;
  ELSE
    INSERT INTO {{schema}}.soft_bounces AS h (project_id, hash, bounces, last_delivery, forget_at)
    VALUES (p_project_id, v_hash, to_jsonb(v_bounces), v_last,
            greatest(v_last, (SELECT max((b->>0)::bigint) FROM unnest(v_bounces) AS b)) + v_keep)
    ON CONFLICT (project_id, hash) DO UPDATE SET
      bounces = excluded.bounces, last_delivery = excluded.last_delivery, forget_at = excluded.forget_at;
  END IF;
  RETURN v_code;
END
$fn$;
