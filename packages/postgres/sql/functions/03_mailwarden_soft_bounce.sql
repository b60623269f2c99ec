-- The soft-bounce rule (docs/decisions.md, "The soft-bounce rule") for one applied event of
-- mailwarden_apply_events, after the event's own suppression was joined. p_rule is the project's rule
-- (core's StoredSoftBounceRule as JSON), p_now the caller's clock (NULL: nothing is forgotten), p_input
-- the event's rule input as toEventColumns sends it ({kind: 'delivery', hash, at} or {kind:
-- 'soft_bounce', hash, email, at, message, event_id, packed}), p_allowlisted whether its recipient is
-- allowlisted. The transaction holds the address's history row: mailwarden_apply_events inserts or
-- locks it first, in hash order (an earlier event of the batch may have deleted it since). History: the
-- kept bounces as [at, eventId, message, packed bounce], by (at, eventId), and the latest delivery kept.
-- Returns the code of the rule's join (mailwarden_merge_suppressions) when a window made a suppression,
-- else NULL. With the change feed, p_rule's `feed` is the event's position: the suppression changes the
-- rule makes are pended with it (`o`, and `p` 2: after the event's own) and the rule's actor, for
-- mailwarden_apply_events.
--
-- It runs once per rule input of a batch, so it runs few statements (each costs far more than the
-- PL/pgSQL around it): a read of the history, one of the project-wide suppression for a soft bounce
-- that may count, a write of the history, and the rule's suppression when a window is found. The few
-- bounces of a history are handled in PL/pgSQL, not in SQL.

CREATE OR REPLACE FUNCTION {{schema}}.mailwarden_soft_bounce(p_project_id text, p_rule jsonb, p_now bigint, p_input jsonb, p_allowlisted boolean) RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  v_hash text := p_input->>'hash';
  v_at bigint := (p_input->>'at')::bigint;
  v_event_id text := p_input->>'event_id';
  v_message text := p_input->>'message';
  v_keep bigint := (p_rule->>'keepMs')::bigint;
  v_window bigint := (p_rule->>'windowMs')::bigint;
  -- NULL without a clock: minus infinity, so every comparison with it is coalesced to "not older".
  v_horizon bigint := p_now - v_keep;
  v_size integer := (p_rule->>'bounces')::integer;
  v_bounces jsonb[];
  v_kept jsonb[] := '{}';
  v_bounce jsonb;
  v_last bigint;
  v_index integer;
  v_end jsonb;
  v_end_at bigint;
  v_cause jsonb;
  v_expires bigint;
  v_rule text;
  v_code text;
  v_replaced boolean := false;
  -- The address's project-wide suppression when not expired at p_now (read in step 3).
  v_listed_reason smallint;
  v_listed_at bigint;
  v_listed_event text;
  v_listed_by_rule boolean;
  v_feed integer := (p_rule->>'feed')::integer;
  v_before {{schema}}.suppressions;
  v_after {{schema}}.suppressions;
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
      FOREACH v_bounce IN ARRAY v_bounces LOOP
        IF (v_bounce->>0)::bigint >= v_last THEN
          v_kept := v_kept || v_bounce;
        END IF;
      END LOOP;
      v_bounces := v_kept;
    END IF;
  ELSIF NOT (
    -- 3. Not kept: allowlisted; too late; before a delivery that resets.
    p_allowlisted
    OR coalesce(v_at < v_horizon, false)
    OR coalesce((p_rule->>'resetOnDelivery')::boolean AND v_at < v_last, false)
  ) THEN
    -- The address's project-wide suppression, read once for steps 3 and 5: nothing of this call writes
    -- it before step 5.
    SELECT s.reason, s.source_at, s.cause_event_id, s.cause_rule IS NOT NULL
    INTO v_listed_reason, v_listed_at, v_listed_event, v_listed_by_rule
    FROM {{schema}}.suppressions s
    WHERE s.project_id = p_project_id AND s.hash = v_hash AND s.stream = '' AND NOT coalesce(s.expires_at <= p_now, false);
    -- 3. Nor kept (v_index NULL): after the address was already suppressed project-wide for bouncing or
    --    complaining (that suppression cannot move); or a bounce of the same message is kept at or
    --    before it (a message counts once, at its earliest).
    -- 4. Else kept, in (at, eventId) order; a later bounce of the same message gives way to it.
    v_index := CASE WHEN coalesce(v_listed_reason >= {{reasonRanks.hard_bounce}} AND v_listed_at < v_at, false) THEN NULL ELSE 0 END;
    FOREACH v_bounce IN ARRAY v_bounces LOOP
      EXIT WHEN v_index IS NULL;
      IF v_bounce->>2 = v_message THEN
        IF ((v_bounce->>0)::bigint, (v_bounce->>1) COLLATE "C") <= (v_at, v_event_id COLLATE "C") THEN
          v_index := NULL;
          EXIT;
        END IF;
        CONTINUE;
      END IF;
      IF v_index = 0 AND ((v_bounce->>0)::bigint, (v_bounce->>1) COLLATE "C") > (v_at, v_event_id COLLATE "C") THEN
        v_kept := v_kept || jsonb_build_array(v_at, p_input->'event_id', p_input->'message', p_input->'packed');
        v_index := cardinality(v_kept);
      END IF;
      v_kept := v_kept || v_bounce;
    END LOOP;
    IF v_index = 0 THEN
      v_kept := v_kept || jsonb_build_array(v_at, p_input->'event_id', p_input->'message', p_input->'packed');
      v_index := cardinality(v_kept);
    END IF;
    IF v_index IS NOT NULL THEN
      v_bounces := v_kept;
      -- The window of `bounces` consecutive kept bounces that holds this one and ends first, if one
      -- spans at most windowMs and its suppression would not already be expired at p_now (then a later
      -- window may count).
      FOR v_first IN greatest(1, v_index - v_size + 1) .. v_index LOOP
        EXIT WHEN v_first + v_size - 1 > cardinality(v_bounces);
        v_end := v_bounces[v_first + v_size - 1];
        v_end_at := (v_end->>0)::bigint;
        v_expires := v_end_at + (p_rule->>'expiresAfterMs')::bigint;
        CONTINUE WHEN v_end_at - (v_bounces[v_first]->>0)::bigint > v_window OR coalesce(v_expires <= p_now, false);
        -- 5. A hard_bounce in the project-wide list, made at the window's last bounce, its provenance
        --    naming the rule and the window (core's packProvenance: the rule, then the bounces packed).
        v_rule := '';
        FOR v_member IN v_first .. v_first + v_size - 1 LOOP
          v_rule := v_rule || CASE WHEN v_member > v_first THEN ',' ELSE '' END || (v_bounces[v_member]->>3);
        END LOOP;
        v_rule := '[' || (p_rule->>'packed') || ',[' || v_rule || ']]';
        -- The stored suppression is a window ending at the same bounce (this one arrived between its
        -- members): the window of the bounces kept now replaces it, which a join would not (same time,
        -- same event).
        IF v_listed_by_rule AND v_listed_at = v_end_at AND v_listed_event = v_end->>1 THEN
          IF v_feed IS NOT NULL THEN
            SELECT * INTO v_before FROM {{schema}}.suppressions WHERE project_id = (SELECT p_project_id) AND hash = v_hash AND stream = '' FOR UPDATE;
          END IF;
          UPDATE {{schema}}.suppressions SET cause_rule = v_rule, expires_at = v_expires
          WHERE project_id = p_project_id AND hash = v_hash AND stream = '' AND cause_rule IS NOT NULL
            AND source_at = v_end_at AND cause_event_id = v_end->>1 AND NOT coalesce(expires_at <= p_now, false);
          v_replaced := FOUND;
          IF v_replaced AND v_feed IS NOT NULL THEN
            SELECT * INTO v_after FROM {{schema}}.suppressions WHERE project_id = (SELECT p_project_id) AND hash = v_hash AND stream = '';
            IF v_after IS DISTINCT FROM v_before THEN
              PERFORM {{schema}}.mailwarden_pend_changes(jsonb_build_array(jsonb_build_object('o', v_feed, 'p', 2, 'actor', '{{ruleActors.softBounces}}',
                'kind', 'suppression.updated', 'at', coalesce(p_now, v_after.created_at), 'data', jsonb_build_object(
                  'record', to_jsonb(v_after) - 'project_id', 'previous', to_jsonb(v_before) - 'project_id'))));
            END IF;
          END IF;
        END IF;
        IF v_replaced THEN
          v_code := 'a';
          PERFORM pg_notify('{{INVALIDATION_CHANNEL}}', json_build_object(
            'schema', {{schema_literal}}, 'projectId', p_project_id, 'hashes', json_build_array(v_hash))::text);
        ELSE
          v_cause := (v_end->>3)::jsonb;
          -- Step 3 read no suppression: most often the address has no row at all, and the rule's row is
          -- inserted as the join would insert it ('s', notified). A row there (expired, or made since
          -- step 3 read it) is left to the join.
          IF v_listed_reason IS NULL THEN
            INSERT INTO {{schema}}.suppressions (project_id, stream, hash, email, reason, created_at,
                                                source, source_at, cause_provider, cause_message_id, cause_event_id, cause_diagnostic,
                                                expires_at, cause_rule)
            VALUES (p_project_id, '', v_hash, p_input->>'email', {{reasonRanks.hard_bounce}}, v_end_at,
                    'webhook', v_end_at, v_cause->>0, v_cause->>1, v_end->>1, v_cause->>4, v_expires, v_rule)
            ON CONFLICT (project_id, hash, stream) DO NOTHING
            RETURNING 's' INTO v_code;
          END IF;
          IF v_code IS NOT NULL AND v_feed IS NOT NULL THEN
            SELECT * INTO v_after FROM {{schema}}.suppressions WHERE project_id = (SELECT p_project_id) AND hash = v_hash AND stream = '';
            PERFORM {{schema}}.mailwarden_pend_changes(jsonb_build_array(jsonb_build_object('o', v_feed, 'p', 2, 'actor', '{{ruleActors.softBounces}}',
              'kind', 'suppression.added', 'at', coalesce(p_now, v_after.created_at),
              'data', jsonb_build_object('record', to_jsonb(v_after) - 'project_id'))));
          END IF;
          IF v_code IS NOT NULL THEN
            PERFORM pg_notify('{{INVALIDATION_CHANNEL}}', json_build_object(
              'schema', {{schema_literal}}, 'projectId', p_project_id, 'hashes', json_build_array(v_hash))::text);
          ELSE
            v_code := {{schema}}.mailwarden_merge_suppressions(p_project_id, jsonb_strip_nulls(jsonb_build_object('now', p_now,
              'feed', CASE WHEN v_feed IS NOT NULL THEN true END, 'rows', jsonb_build_array(
              jsonb_strip_nulls(jsonb_build_object(
                'hash', v_hash, 'email', p_input->'email', 'reason', {{reasonRanks.hard_bounce}}, 'created_at', v_end->0,
                'source', 'webhook', 'source_at', v_end->0, 'cause_event_id', v_end->1,
                'cause_provider', v_cause->0, 'cause_message_id', v_cause->1, 'cause_diagnostic', v_cause->4,
                'expires_at', v_expires, 'cause_rule', v_rule, 'o', v_feed, 'p', CASE WHEN v_feed IS NOT NULL THEN 2 END,
                'actor', CASE WHEN v_feed IS NOT NULL THEN '{{ruleActors.softBounces}}' END))))));
          END IF;
        END IF;
        -- Bounces after the suppression cannot move it (step 3d): they need not be kept.
        v_kept := '{}';
        FOREACH v_bounce IN ARRAY v_bounces LOOP
          IF (v_bounce->>0)::bigint <= v_end_at THEN
            v_kept := v_kept || v_bounce;
          END IF;
        END LOOP;
        v_bounces := v_kept;
        EXIT;
      END LOOP;
    END IF;
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
