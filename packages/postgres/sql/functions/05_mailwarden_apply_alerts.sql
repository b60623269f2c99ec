-- Deliverability alerts (docs/decisions.md, "Deliverability alerts") for one batch of
-- mailwarden_apply_events, after its suppressions. p_rule is core's StoredAlertRule as JSON; the steps,
-- as columns (the n-th element of each array one step), are the batch's applied events that created
-- their message or gave it an alert flag, as step 2a of mailwarden_apply_events reads them, in any
-- order: p_o (the event's position, the order they go in), p_at (the change's time), p_key, p_tid (the
-- message's tracking ID then), p_entered (the event created the message), p_flags (its alert flags
-- after the event: 1 hard-bounced, 2 complained), p_gained (the flags the event added). A message entering a window takes its `head` slot (the oldest's, which
-- leaves with its counts, when the window is full); a flag gained by a message in a window counts once,
-- and so does a message held already that enters again (retention forgot it, an event made it anew). A
-- window whose rule's size changed is first renumbered for the new size, keeping its latest messages.
-- After each event, each window it moved is compared with the thresholds in integers (the same
-- comparison in every store), and a crossing flips its state; the project's window crossing up pauses
-- the rule's streams not paused yet. Returns the changes (tagged `o`, `p` 4, in the order made: the
-- project's window, then the tracking ID's, bounces before complaints, then the streams paused), or an
-- empty array without p_feed.
--
-- Locks: the batch's windows first, in scope order ('' the project's), then their slots (only ever
-- written under their window's lock), then paused_streams: after every lock mailwarden_apply_events
-- took before, and before the feed's counter.

CREATE OR REPLACE FUNCTION {{schema}}.mailwarden_apply_alerts(p_project_id text, p_rule jsonb, p_o integer[], p_key text[], p_tid text[], p_entered boolean[], p_flags integer[], p_gained integer[], p_at bigint[], p_feed boolean) RETURNS jsonb
LANGUAGE plpgsql AS $fn$
DECLARE
  v_size integer := (p_rule->>'window')::integer;
  v_min integer := (p_rule->>'minMessages')::integer;
  v_bounce_fire bigint := (p_rule->'bounce'->>'firePpm')::bigint;
  v_bounce_resolve bigint := (p_rule->'bounce'->>'resolvePpm')::bigint;
  v_complaint_fire bigint := (p_rule->'complaint'->>'firePpm')::bigint;
  v_complaint_resolve bigint := (p_rule->'complaint'->>'resolvePpm')::bigint;
  v_by_tracking_id boolean := coalesce((p_rule->>'trackingIds')::boolean, false);
  v_step record;
  v_scope text;
  v_w {{schema}}.alert_windows;
  v_flags integer;
  v_old integer;
  v_slot integer;
  v_moved boolean;
  v_up text;
  v_at bigint;
  v_stream text;
  v_changes jsonb := '[]';
  v_scopes text[];
  -- The windows' rows, read once after they are locked and written back once at the end.
  v_names text[];
  v_windows {{schema}}.alert_windows[];
  v_index integer;
  -- Messages entering that their window holds already (scope, a newline, key): few, read at once.
  v_held text[];
  -- The usual batch (no message entering is held already, no window takes more messages than its
  -- size): the slots are read at once before the walk and written at once after it, instead of one
  -- statement per message. Per window (v_names' order) the messages entering so far (v_used), and
  -- from v_start the flags of the slots they take, as stored before the batch (v_taken).
  v_fast boolean;
  v_used integer[];
  v_start integer[];
  v_taken integer[];
  -- The walk's slot writes: the messages entering (w_*), and the flags gained by messages held from
  -- before the batch (g_*, few).
  w_scope text[] := '{}';
  w_slot integer[] := '{}';
  w_key text[] := '{}';
  w_flags integer[] := '{}';
  g_scope text[] := '{}';
  g_slot integer[] := '{}';
  g_flags integer[] := '{}';
  v_pos integer;
BEGIN
  -- The windows the batch may move, locked in scope order (a window made here and left empty is
  -- deleted at the end: a window exists once a message entered it).
  WITH steps AS (
    SELECT unnest(p_tid) AS tid
  ), scopes AS (
    SELECT DISTINCT scope FROM (SELECT ''::text AS scope FROM steps
                                UNION ALL SELECT tid FROM steps WHERE v_by_tracking_id AND tid IS NOT NULL) s
  ), locked AS (
    INSERT INTO {{schema}}.alert_windows AS w (project_id, scope, size, messages, bounced, complained, bounce_firing, complaint_firing, head)
    SELECT p_project_id, scope COLLATE "C", v_size, 0, 0, 0, false, false, 0 FROM scopes ORDER BY scope COLLATE "C"
    ON CONFLICT (project_id, scope) DO UPDATE SET head = w.head WHERE false
    RETURNING w.scope
  )
  SELECT array_agg(scope) INTO v_scopes FROM (SELECT scope FROM locked UNION ALL SELECT scope FROM scopes) s;
  IF v_scopes IS NULL THEN
    RETURN v_changes;
  END IF;

  -- A window of another size: its slots by age (rank 0 the oldest), the latest `v_size` kept and
  -- renumbered from 0 (negated first, so no two rows share a slot meanwhile), the others dropped.
  FOR v_w IN SELECT * FROM {{schema}}.alert_windows
             WHERE project_id = p_project_id AND scope = ANY (v_scopes) AND size <> v_size AND messages > 0 LOOP
    WITH ranked AS (
      SELECT slot, (slot - CASE WHEN v_w.messages < v_w.size THEN 0 ELSE v_w.head END + v_w.size) % v_w.size
                   - greatest(v_w.messages - v_size, 0) AS rank
      FROM {{schema}}.alert_window_slots WHERE project_id = p_project_id AND scope = v_w.scope
    ), dropped AS (
      DELETE FROM {{schema}}.alert_window_slots s USING ranked r
      WHERE s.project_id = p_project_id AND s.scope = v_w.scope AND s.slot = r.slot AND r.rank < 0
      RETURNING s.flags
    ), moved AS (
      UPDATE {{schema}}.alert_window_slots s SET slot = -1 - r.rank FROM ranked r
      WHERE s.project_id = p_project_id AND s.scope = v_w.scope AND s.slot = r.slot AND r.rank >= 0
      RETURNING 1
    )
    SELECT coalesce(sum(flags & 1), 0), coalesce(sum((flags >> 1) & 1), 0) INTO v_old, v_slot FROM dropped;
    UPDATE {{schema}}.alert_window_slots SET slot = -1 - slot WHERE project_id = p_project_id AND scope = v_w.scope;
    UPDATE {{schema}}.alert_windows SET size = v_size, messages = least(messages, v_size), head = least(messages, v_size) % v_size,
      bounced = bounced - v_old, complained = complained - v_slot
    WHERE project_id = p_project_id AND scope = v_w.scope;
  END LOOP;
  UPDATE {{schema}}.alert_windows SET size = v_size WHERE project_id = p_project_id AND scope = ANY (v_scopes) AND size <> v_size;
  SELECT array_agg(w.scope), array_agg(w) INTO v_names, v_windows
  FROM {{schema}}.alert_windows w WHERE w.project_id = p_project_id AND w.scope = ANY (v_scopes);
  SELECT coalesce(array_agg(s.scope || E'\n' || s.message_key), '{}') INTO v_held
  FROM {{schema}}.alert_window_slots s
  JOIN unnest(p_key, p_entered) AS x(key, entered)
    ON s.project_id = p_project_id AND s.message_key = x.key COLLATE "C"
  WHERE x.entered AND s.scope = ANY (v_scopes);
  WITH entering AS (
    SELECT scope COLLATE "C" AS scope, count(*)::integer AS n
    FROM (SELECT ''::text AS scope FROM unnest(p_entered) AS x(entered) WHERE x.entered
          UNION ALL SELECT x.tid FROM unnest(p_tid, p_entered) AS x(tid, entered)
          WHERE v_by_tracking_id AND x.entered AND x.tid IS NOT NULL) s
    GROUP BY 1
  ), w AS (
    SELECT j, coalesce(e.n, 0) AS n, (sum(coalesce(e.n, 0)) OVER (ORDER BY j) - coalesce(e.n, 0) + 1)::integer AS start
    FROM generate_subscripts(v_windows, 1) AS j LEFT JOIN entering e ON e.scope = (v_windows[j]).scope
  )
  SELECT cardinality(v_held) = 0 AND bool_and(w.n <= v_size), array_agg(w.n ORDER BY w.j), array_agg(w.start ORDER BY w.j)
  INTO v_fast, v_used, v_start FROM w;
  IF v_fast THEN
    SELECT coalesce(array_agg(coalesce(s.flags, 0) ORDER BY w.j, g.i), '{}') INTO v_taken
    FROM generate_subscripts(v_windows, 1) AS w(j)
    CROSS JOIN generate_series(0, v_used[w.j] - 1) AS g(i)
    LEFT JOIN {{schema}}.alert_window_slots s
      ON s.project_id = p_project_id AND s.scope = (v_windows[w.j]).scope AND s.slot = ((v_windows[w.j]).head + g.i) % v_size;
    v_used := array_fill(0, ARRAY[cardinality(v_windows)]);
  END IF;

  FOR v_step IN
    SELECT x.o, x.key COLLATE "C" AS key, x.tid, x.entered, x.flags, x.gained, x.at
    FROM unnest(p_o, p_key, p_tid, p_entered, p_flags, p_gained, p_at) AS x(o, key, tid, entered, flags, gained, at)
    ORDER BY 1
  LOOP
    v_up := NULL;
    v_at := v_step.at;
    FOREACH v_scope IN ARRAY CASE WHEN v_by_tracking_id AND v_step.tid IS NOT NULL THEN ARRAY['', v_step.tid] ELSE ARRAY[''] END LOOP
      v_index := array_position(v_names, v_scope);
      v_w := v_windows[v_index];
      v_moved := false;
      v_slot := NULL;
      IF v_step.entered AND v_scope || E'\n' || v_step.key = ANY (v_held) THEN
        SELECT slot, flags INTO v_slot, v_old FROM {{schema}}.alert_window_slots
        WHERE project_id = p_project_id AND scope = v_scope AND message_key = v_step.key;
      END IF;
      IF v_step.entered AND v_slot IS NULL THEN
        v_flags := v_step.flags;
        -- The head slot taken, and what it held (the oldest message, when the window is full).
        v_old := NULL;
        IF v_fast THEN
          -- As stored before the batch, or as a gain below left it; written after the walk.
          v_old := v_taken[v_start[v_index] + v_used[v_index]];
          FOR i IN 1 .. cardinality(g_slot) LOOP
            IF g_scope[i] = v_scope AND g_slot[i] = v_w.head THEN v_old := g_flags[i]; END IF;
          END LOOP;
          v_used[v_index] := v_used[v_index] + 1;
          w_scope := w_scope || v_scope;
          w_slot := w_slot || v_w.head;
          w_key := w_key || v_step.key::text;
          w_flags := w_flags || v_flags;
        ELSE
          WITH oldest AS (
            SELECT flags FROM {{schema}}.alert_window_slots WHERE project_id = p_project_id AND scope = v_scope AND slot = v_w.head
          ), taken AS (
            INSERT INTO {{schema}}.alert_window_slots AS s (project_id, scope, slot, message_key, flags)
            VALUES (p_project_id, v_scope, v_w.head, v_step.key, v_flags)
            ON CONFLICT (project_id, scope, slot) DO UPDATE SET message_key = excluded.message_key, flags = excluded.flags
          )
          SELECT flags INTO v_old FROM oldest;
        END IF;
        IF v_w.messages >= v_size THEN
          v_w.bounced := v_w.bounced - (coalesce(v_old, 0) & 1);
          v_w.complained := v_w.complained - ((coalesce(v_old, 0) >> 1) & 1);
        ELSE
          v_w.messages := v_w.messages + 1;
        END IF;
        v_w.head := (v_w.head + 1) % v_size;
        v_moved := true;
      ELSE
        v_pos := NULL;
        IF v_fast THEN
          -- Entered in this batch (then still held), or held from before unless a message entering
          -- took its slot already in this batch.
          FOR i IN 1 .. coalesce(cardinality(array_positions(w_key, v_step.key::text)), 0) LOOP
            IF w_scope[(array_positions(w_key, v_step.key::text))[i]] = v_scope THEN v_pos := (array_positions(w_key, v_step.key::text))[i]; END IF;
          END LOOP;
          IF v_pos IS NOT NULL THEN
            v_slot := w_slot[v_pos];
            v_old := w_flags[v_pos];
          ELSE
            SELECT slot, flags INTO v_slot, v_old FROM {{schema}}.alert_window_slots
            WHERE project_id = p_project_id AND scope = v_scope AND message_key = v_step.key;
            IF (v_slot - v_w.head + v_used[v_index] + v_size) % v_size < v_used[v_index] THEN
              v_slot := NULL;
            END IF;
            FOR i IN 1 .. cardinality(g_slot) LOOP
              IF g_scope[i] = v_scope AND g_slot[i] = v_slot THEN v_old := g_flags[i]; END IF;
            END LOOP;
          END IF;
        ELSIF NOT v_step.entered THEN
          SELECT slot, flags INTO v_slot, v_old FROM {{schema}}.alert_window_slots
          WHERE project_id = p_project_id AND scope = v_scope AND message_key = v_step.key;
        END IF;
        -- Held already: what the event gave it counts (all its flags, for a message entering again).
        v_flags := CASE WHEN v_slot IS NOT NULL THEN (CASE WHEN v_step.entered THEN v_step.flags ELSE v_step.gained END) & ~v_old ELSE 0 END;
        IF v_flags <> 0 AND v_pos IS NOT NULL THEN
          w_flags[v_pos] := v_old | v_flags;
          v_moved := true;
        ELSIF v_flags <> 0 AND v_fast THEN
          g_scope := g_scope || v_scope;
          g_slot := g_slot || v_slot;
          g_flags := g_flags || (v_old | v_flags);
          v_moved := true;
        ELSIF v_flags <> 0 THEN
          UPDATE {{schema}}.alert_window_slots SET flags = v_old | v_flags
          WHERE project_id = p_project_id AND scope = v_scope AND slot = v_slot;
          v_moved := true;
        END IF;
      END IF;
      CONTINUE WHEN NOT v_moved;
      v_w.bounced := v_w.bounced + (v_flags & 1);
      v_w.complained := v_w.complained + ((v_flags >> 1) & 1);
      -- Up at count × 10⁶ ≥ firePpm × messages (with enough messages), down below resolvePpm × messages.
      IF NOT v_w.bounce_firing AND v_w.messages >= v_min AND v_w.bounced::bigint * 1000000 >= v_bounce_fire * v_w.messages THEN
        v_w.bounce_firing := true;
        v_changes := v_changes || jsonb_build_object('o', v_step.o, 'p', 4, 'actor', '{{ruleActors.alerts}}', 'kind', 'alert.bounce_rate', 'at', v_at, 'data', jsonb_build_object(
          'trackingId', nullif(v_scope, ''), 'firing', true, 'messages', v_w.messages, 'count', v_w.bounced, 'thresholdPpm', v_bounce_fire));
        IF v_scope = '' THEN v_up := coalesce(v_up, 'alert.bounce_rate'); END IF;
      ELSIF v_w.bounce_firing AND v_w.bounced::bigint * 1000000 < v_bounce_resolve * v_w.messages THEN
        v_w.bounce_firing := false;
        v_changes := v_changes || jsonb_build_object('o', v_step.o, 'p', 4, 'actor', '{{ruleActors.alerts}}', 'kind', 'alert.bounce_rate', 'at', v_at, 'data', jsonb_build_object(
          'trackingId', nullif(v_scope, ''), 'firing', false, 'messages', v_w.messages, 'count', v_w.bounced, 'thresholdPpm', v_bounce_resolve));
      END IF;
      IF NOT v_w.complaint_firing AND v_w.messages >= v_min AND v_w.complained::bigint * 1000000 >= v_complaint_fire * v_w.messages THEN
        v_w.complaint_firing := true;
        v_changes := v_changes || jsonb_build_object('o', v_step.o, 'p', 4, 'actor', '{{ruleActors.alerts}}', 'kind', 'alert.complaint_rate', 'at', v_at, 'data', jsonb_build_object(
          'trackingId', nullif(v_scope, ''), 'firing', true, 'messages', v_w.messages, 'count', v_w.complained, 'thresholdPpm', v_complaint_fire));
        IF v_scope = '' THEN v_up := coalesce(v_up, 'alert.complaint_rate'); END IF;
      ELSIF v_w.complaint_firing AND v_w.complained::bigint * 1000000 < v_complaint_resolve * v_w.messages THEN
        v_w.complaint_firing := false;
        v_changes := v_changes || jsonb_build_object('o', v_step.o, 'p', 4, 'actor', '{{ruleActors.alerts}}', 'kind', 'alert.complaint_rate', 'at', v_at, 'data', jsonb_build_object(
          'trackingId', nullif(v_scope, ''), 'firing', false, 'messages', v_w.messages, 'count', v_w.complained, 'thresholdPpm', v_complaint_resolve));
      END IF;
      v_windows[v_index] := v_w;
    END LOOP;
    -- The project's window went up: its streams pause, in the rule's order, each once.
    CONTINUE WHEN v_up IS NULL;
    FOR v_stream IN SELECT x.value FROM jsonb_array_elements_text(p_rule->'pause') WITH ORDINALITY AS x(value, n) ORDER BY x.n LOOP
      INSERT INTO {{schema}}.paused_streams (project_id, stream, paused_at, cause) VALUES (p_project_id, v_stream, v_at, v_up)
      ON CONFLICT DO NOTHING;
      IF FOUND THEN
        v_changes := v_changes || jsonb_build_object('o', v_step.o, 'p', 4, 'actor', '{{ruleActors.alerts}}', 'kind', 'stream.paused', 'at', v_at,
          'data', jsonb_build_object('stream', v_stream, 'cause', v_up));
      END IF;
    END LOOP;
  END LOOP;

  IF v_fast THEN
    -- A slot's latest gain holds the most flags; a slot a message entering took later is written by
    -- the second statement.
    UPDATE {{schema}}.alert_window_slots s SET flags = g.flags
    FROM (SELECT x.scope, x.slot, max(x.flags) AS flags FROM unnest(g_scope, g_slot, g_flags) AS x(scope, slot, flags) GROUP BY 1, 2) g
    WHERE s.project_id = p_project_id AND s.scope = g.scope COLLATE "C" AND s.slot = g.slot;
    INSERT INTO {{schema}}.alert_window_slots AS s (project_id, scope, slot, message_key, flags)
    SELECT p_project_id, x.scope, x.slot, x.key, x.flags
    FROM unnest(w_scope, w_slot, w_key, w_flags) AS x(scope, slot, key, flags)
    ORDER BY x.scope COLLATE "C", x.slot
    ON CONFLICT (project_id, scope, slot) DO UPDATE SET message_key = excluded.message_key, flags = excluded.flags;
  END IF;
  UPDATE {{schema}}.alert_windows w SET messages = x.messages, bounced = x.bounced, complained = x.complained,
    bounce_firing = x.bounce_firing, complaint_firing = x.complaint_firing, head = x.head
  FROM unnest(v_windows) x WHERE w.project_id = p_project_id AND w.scope = x.scope;
  DELETE FROM {{schema}}.alert_windows WHERE project_id = p_project_id AND scope = ANY (v_scopes) AND messages = 0;
  RETURN CASE WHEN p_feed THEN v_changes ELSE '[]' END;
END
$fn$;
