-- pg_dump --schema-only of a schema fresh from migrate(), on PostgreSQL 15, normalized by
-- test/schema-snapshot.test.ts (<schema> is the schema's name). Rewrite it with
-- UPDATE_SCHEMA_SNAPSHOT=1 npx vitest run packages/postgres/test/schema-snapshot.test.ts

--
-- Name: <schema>; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA <schema>;

--
-- Name: mailwarden_append_changes(text, jsonb); Type: FUNCTION; Schema: <schema>; Owner: -
--

CREATE FUNCTION <schema>.mailwarden_append_changes(p_project_id text, p_changes jsonb) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
BEGIN
  RETURN "<schema>".mailwarden_append_changes_with_statuses(p_project_id, p_changes, NULL, NULL, NULL);
END
$$;

--
-- Name: mailwarden_append_changes_with_statuses(text, jsonb, integer[], bigint[], jsonb[]); Type: FUNCTION; Schema: <schema>; Owner: -
--

CREATE FUNCTION <schema>.mailwarden_append_changes_with_statuses(p_project_id text, p_changes jsonb, p_status_o integer[], p_status_at bigint[], p_status_data jsonb[]) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
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
  INSERT INTO "<schema>".change_counters AS c (project_id, last_seq) VALUES (p_project_id, v_count)
  ON CONFLICT (project_id) DO UPDATE SET last_seq = c.last_seq + v_count
  RETURNING c.last_seq INTO v_last;
  INSERT INTO "<schema>".changes (project_id, seq, at, kind, data, actor)
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
$$;

--
-- Name: mailwarden_apply_alerts(text, jsonb, integer[], text[], text[], boolean[], integer[], integer[], bigint[], boolean); Type: FUNCTION; Schema: <schema>; Owner: -
--

CREATE FUNCTION <schema>.mailwarden_apply_alerts(p_project_id text, p_rule jsonb, p_o integer[], p_key text[], p_tid text[], p_entered boolean[], p_flags integer[], p_gained integer[], p_at bigint[], p_feed boolean) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
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
  v_w "<schema>".alert_windows;
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
  v_windows "<schema>".alert_windows[];
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
    INSERT INTO "<schema>".alert_windows AS w (project_id, scope, size, messages, bounced, complained, bounce_firing, complaint_firing, head)
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
  FOR v_w IN SELECT * FROM "<schema>".alert_windows
             WHERE project_id = p_project_id AND scope = ANY (v_scopes) AND size <> v_size AND messages > 0 LOOP
    WITH ranked AS (
      SELECT slot, (slot - CASE WHEN v_w.messages < v_w.size THEN 0 ELSE v_w.head END + v_w.size) % v_w.size
                   - greatest(v_w.messages - v_size, 0) AS rank
      FROM "<schema>".alert_window_slots WHERE project_id = p_project_id AND scope = v_w.scope
    ), dropped AS (
      DELETE FROM "<schema>".alert_window_slots s USING ranked r
      WHERE s.project_id = p_project_id AND s.scope = v_w.scope AND s.slot = r.slot AND r.rank < 0
      RETURNING s.flags
    ), moved AS (
      UPDATE "<schema>".alert_window_slots s SET slot = -1 - r.rank FROM ranked r
      WHERE s.project_id = p_project_id AND s.scope = v_w.scope AND s.slot = r.slot AND r.rank >= 0
      RETURNING 1
    )
    SELECT coalesce(sum(flags & 1), 0), coalesce(sum((flags >> 1) & 1), 0) INTO v_old, v_slot FROM dropped;
    UPDATE "<schema>".alert_window_slots SET slot = -1 - slot WHERE project_id = p_project_id AND scope = v_w.scope;
    UPDATE "<schema>".alert_windows SET size = v_size, messages = least(messages, v_size), head = least(messages, v_size) % v_size,
      bounced = bounced - v_old, complained = complained - v_slot
    WHERE project_id = p_project_id AND scope = v_w.scope;
  END LOOP;
  UPDATE "<schema>".alert_windows SET size = v_size WHERE project_id = p_project_id AND scope = ANY (v_scopes) AND size <> v_size;
  SELECT array_agg(w.scope), array_agg(w) INTO v_names, v_windows
  FROM "<schema>".alert_windows w WHERE w.project_id = p_project_id AND w.scope = ANY (v_scopes);
  SELECT coalesce(array_agg(s.scope || E'\n' || s.message_key), '{}') INTO v_held
  FROM "<schema>".alert_window_slots s
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
    LEFT JOIN "<schema>".alert_window_slots s
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
        SELECT slot, flags INTO v_slot, v_old FROM "<schema>".alert_window_slots
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
            SELECT flags FROM "<schema>".alert_window_slots WHERE project_id = p_project_id AND scope = v_scope AND slot = v_w.head
          ), taken AS (
            INSERT INTO "<schema>".alert_window_slots AS s (project_id, scope, slot, message_key, flags)
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
            SELECT slot, flags INTO v_slot, v_old FROM "<schema>".alert_window_slots
            WHERE project_id = p_project_id AND scope = v_scope AND message_key = v_step.key;
            IF (v_slot - v_w.head + v_used[v_index] + v_size) % v_size < v_used[v_index] THEN
              v_slot := NULL;
            END IF;
            FOR i IN 1 .. cardinality(g_slot) LOOP
              IF g_scope[i] = v_scope AND g_slot[i] = v_slot THEN v_old := g_flags[i]; END IF;
            END LOOP;
          END IF;
        ELSIF NOT v_step.entered THEN
          SELECT slot, flags INTO v_slot, v_old FROM "<schema>".alert_window_slots
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
          UPDATE "<schema>".alert_window_slots SET flags = v_old | v_flags
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
        v_changes := v_changes || jsonb_build_object('o', v_step.o, 'p', 4, 'actor', 'rule:alerts', 'kind', 'alert.bounce_rate', 'at', v_at, 'data', jsonb_build_object(
          'trackingId', nullif(v_scope, ''), 'firing', true, 'messages', v_w.messages, 'count', v_w.bounced, 'thresholdPpm', v_bounce_fire));
        IF v_scope = '' THEN v_up := coalesce(v_up, 'alert.bounce_rate'); END IF;
      ELSIF v_w.bounce_firing AND v_w.bounced::bigint * 1000000 < v_bounce_resolve * v_w.messages THEN
        v_w.bounce_firing := false;
        v_changes := v_changes || jsonb_build_object('o', v_step.o, 'p', 4, 'actor', 'rule:alerts', 'kind', 'alert.bounce_rate', 'at', v_at, 'data', jsonb_build_object(
          'trackingId', nullif(v_scope, ''), 'firing', false, 'messages', v_w.messages, 'count', v_w.bounced, 'thresholdPpm', v_bounce_resolve));
      END IF;
      IF NOT v_w.complaint_firing AND v_w.messages >= v_min AND v_w.complained::bigint * 1000000 >= v_complaint_fire * v_w.messages THEN
        v_w.complaint_firing := true;
        v_changes := v_changes || jsonb_build_object('o', v_step.o, 'p', 4, 'actor', 'rule:alerts', 'kind', 'alert.complaint_rate', 'at', v_at, 'data', jsonb_build_object(
          'trackingId', nullif(v_scope, ''), 'firing', true, 'messages', v_w.messages, 'count', v_w.complained, 'thresholdPpm', v_complaint_fire));
        IF v_scope = '' THEN v_up := coalesce(v_up, 'alert.complaint_rate'); END IF;
      ELSIF v_w.complaint_firing AND v_w.complained::bigint * 1000000 < v_complaint_resolve * v_w.messages THEN
        v_w.complaint_firing := false;
        v_changes := v_changes || jsonb_build_object('o', v_step.o, 'p', 4, 'actor', 'rule:alerts', 'kind', 'alert.complaint_rate', 'at', v_at, 'data', jsonb_build_object(
          'trackingId', nullif(v_scope, ''), 'firing', false, 'messages', v_w.messages, 'count', v_w.complained, 'thresholdPpm', v_complaint_resolve));
      END IF;
      v_windows[v_index] := v_w;
    END LOOP;
    -- The project's window went up: its streams pause, in the rule's order, each once.
    CONTINUE WHEN v_up IS NULL;
    FOR v_stream IN SELECT x.value FROM jsonb_array_elements_text(p_rule->'pause') WITH ORDINALITY AS x(value, n) ORDER BY x.n LOOP
      INSERT INTO "<schema>".paused_streams (project_id, stream, paused_at, cause) VALUES (p_project_id, v_stream, v_at, v_up)
      ON CONFLICT DO NOTHING;
      IF FOUND THEN
        v_changes := v_changes || jsonb_build_object('o', v_step.o, 'p', 4, 'actor', 'rule:alerts', 'kind', 'stream.paused', 'at', v_at,
          'data', jsonb_build_object('stream', v_stream, 'cause', v_up));
      END IF;
    END LOOP;
  END LOOP;

  IF v_fast THEN
    -- A slot's latest gain holds the most flags; a slot a message entering took later is written by
    -- the second statement.
    UPDATE "<schema>".alert_window_slots s SET flags = g.flags
    FROM (SELECT x.scope, x.slot, max(x.flags) AS flags FROM unnest(g_scope, g_slot, g_flags) AS x(scope, slot, flags) GROUP BY 1, 2) g
    WHERE s.project_id = p_project_id AND s.scope = g.scope COLLATE "C" AND s.slot = g.slot;
    INSERT INTO "<schema>".alert_window_slots AS s (project_id, scope, slot, message_key, flags)
    SELECT p_project_id, x.scope, x.slot, x.key, x.flags
    FROM unnest(w_scope, w_slot, w_key, w_flags) AS x(scope, slot, key, flags)
    ORDER BY x.scope COLLATE "C", x.slot
    ON CONFLICT (project_id, scope, slot) DO UPDATE SET message_key = excluded.message_key, flags = excluded.flags;
  END IF;
  UPDATE "<schema>".alert_windows w SET messages = x.messages, bounced = x.bounced, complained = x.complained,
    bounce_firing = x.bounce_firing, complaint_firing = x.complaint_firing, head = x.head
  FROM unnest(v_windows) x WHERE w.project_id = p_project_id AND w.scope = x.scope;
  DELETE FROM "<schema>".alert_windows WHERE project_id = p_project_id AND scope = ANY (v_scopes) AND messages = 0;
  RETURN CASE WHEN p_feed THEN v_changes ELSE '[]' END;
END
$$;

--
-- Name: mailwarden_apply_events(text, jsonb); Type: FUNCTION; Schema: <schema>; Owner: -
--

CREATE FUNCTION <schema>.mailwarden_apply_events(p_project_id text, p_events jsonb) RETURNS text
    LANGUAGE plpgsql
    AS $_$
DECLARE
  v_outcomes boolean[];
  v_created text[];
  v_recompute text[];
  v_emptied text[];
  v_suppressions jsonb;
  v_suppressed integer[];
  v_codes text := '';
  v_timelines text[];
  v_stats jsonb;
  v_now bigint := (p_events->>'now')::bigint;
  v_rule jsonb := p_events->'rule';
  v_event_codes text[];
  v_pending jsonb[] := '{}';
  v_pending_ords integer[] := '{}';
  v_pending_hashes text[] := '{}';
  v_keep bigint;
  v_horizon bigint;
  v_delivered text[];
  v_event record;
  v_code text;
  -- Computed once: per row, the numeric arithmetic cost as much as the key's insert.
  v_seen_at bigint := (extract(epoch FROM transaction_timestamp()) * 1000)::bigint;
  v_feed boolean := coalesce((p_events->>'feed')::boolean, false);
  v_alerts jsonb := p_events->'alerts';
  -- Who sent each event (the `actor` column, sent only when an event has one): its changes' actor.
  v_actors jsonb := p_events->'actor';
  -- The steps of mailwarden_apply_alerts (step 2a), as columns.
  v_step_o integer[];
  v_step_key text[];
  v_step_tid text[];
  v_step_entered boolean[];
  v_step_flags integer[];
  v_step_gained integer[];
  v_step_at bigint[];
  v_changes jsonb := '[]';
  -- The status changes (step 2a) as columns: mailwarden_append_changes_with_statuses.
  v_status_o integer[];
  v_status_at bigint[];
  v_status_data jsonb[];
  -- The batch's columns step 2a reads by an event's position (`ord` - 1).
  v_providers jsonb;
  v_message_ids jsonb;
  v_recipients jsonb;
  v_timelines_sent jsonb;
  v_result text;
BEGIN
  -- 0. The batch comes as columns (toEventColumns). An instance of the previous release, during a
  --    rolling deploy, sends one object per event: those are made columns first. Its `stream` is the
  --    message's; its suppression, from before lists per stream, goes to the project-wide list.
  IF jsonb_typeof(p_events) = 'array' THEN
    SELECT jsonb_build_object(
        'key', jsonb_agg(x.event->'key' ORDER BY x.ord),
        'message_key', jsonb_agg(x.event->'message_key' ORDER BY x.ord),
        'provider', jsonb_agg(x.event->'provider' ORDER BY x.ord),
        'message_id', jsonb_agg(x.event->'message_id' ORDER BY x.ord),
        'recipient', jsonb_agg(x.event->'recipient' ORDER BY x.ord),
        'tracking_id', jsonb_agg(x.event->'tracking_id' ORDER BY x.ord),
        'stream', jsonb_agg(x.event->'stream' ORDER BY x.ord),
        'search_key', jsonb_agg(x.event->'search_key' ORDER BY x.ord),
        'facts', jsonb_agg(x.event->'facts' ORDER BY x.ord),
        'first_event_at', jsonb_agg(x.event->'first_event_at' ORDER BY x.ord),
        'last_event_at', jsonb_agg(x.event->'last_event_at' ORDER BY x.ord),
        'timeline', jsonb_agg(x.event->'timeline' ORDER BY x.ord),
        'suppression', jsonb_agg(CASE WHEN x.event ? 'hash' THEN x.event - 'stream' END ORDER BY x.ord))
    INTO p_events
    FROM jsonb_array_elements(p_events) WITH ORDINALITY AS x(event, ord);
  END IF;

  -- 1. Dedup: record the first occurrence of each key; ON CONFLICT waits for a concurrent batch that
  --    holds the same key and then treats it as seen.
  WITH keys AS (
    SELECT key, ord FROM (SELECT c.ord::integer AS ord, c.key COLLATE "C" AS key
          FROM ROWS FROM (jsonb_array_elements_text(p_events->'key')) WITH ORDINALITY AS c(key, ord)) e
  ), firsts AS (
    SELECT DISTINCT ON (key) key, ord FROM keys ORDER BY key, ord
  ), recorded AS (
    INSERT INTO "<schema>".event_keys (project_id, key, seen_at)
    SELECT p_project_id, key, v_seen_at
    FROM firsts ORDER BY key
    ON CONFLICT DO NOTHING
    RETURNING key
  )
  SELECT array_agg(r.key IS NOT NULL ORDER BY k.ord) INTO v_outcomes
  FROM keys k LEFT JOIN firsts f ON f.ord = k.ord LEFT JOIN recorded r ON r.key = f.key;

  -- 2. Messages the batch creates are inserted whole; existing ones are only locked (WHERE false
  --    updates nothing but still locks), so step 3 reads them unchanged by anyone else.
  WITH seen AS (
    SELECT e.message_key AS key,
           min(e.provider) AS provider,
           min(e.message_id) AS message_id,
           min(e.recipient) AS recipient,
           -- joinTrackingIds: min() ignores nulls, and compares in code-point order.
           min(e.tracking_id) AS tracking_id,
           -- The stream joins the same way.
           min(e.stream) AS stream,
           bit_or(e.facts) AS facts,
           min(e.first_event_at) AS first_event_at,
           max(e.last_event_at) AS last_event_at,
           ARRAY[min(e.first_event_at) FILTER (WHERE e.facts & 4 <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & 16 <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & 8 <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & 32 <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & 128 <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & 256 <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & 512 <> 0)] AS fact_times
    FROM (SELECT c.ord::integer AS ord, c.key COLLATE "C" AS key, c.message_key COLLATE "C" AS message_key,
                 c.provider AS provider, c.message_id AS message_id, c.recipient AS recipient,
                 c.tracking_id COLLATE "C" AS tracking_id, c.stream COLLATE "C" AS stream, c.facts::integer AS facts,
                 c.first_event_at::bigint AS first_event_at, c.last_event_at::bigint AS last_event_at
          FROM ROWS FROM (jsonb_array_elements_text(p_events->'key'),
                          jsonb_array_elements_text(p_events->'message_key'),
                          jsonb_array_elements_text(p_events->'provider'),
                          jsonb_array_elements_text(p_events->'message_id'),
                          jsonb_array_elements_text(p_events->'recipient'),
                          jsonb_array_elements_text(p_events->'tracking_id'),
                          jsonb_array_elements_text(p_events->'stream'),
                          jsonb_array_elements_text(p_events->'facts'),
                          jsonb_array_elements_text(p_events->'first_event_at'),
                          jsonb_array_elements_text(p_events->'last_event_at'))
               WITH ORDINALITY AS c(key, message_key, provider, message_id, recipient, tracking_id, stream, facts,
                                    first_event_at, last_event_at, ord)) e
    WHERE v_outcomes[e.ord] AND e.message_key IS NOT NULL
    GROUP BY 1
  ), created AS (
    INSERT INTO "<schema>".messages AS m
      (project_id, key, provider, message_id, recipient, tracking_id, stream, facts, first_event_at, last_event_at, fact_times)
    SELECT p_project_id, key, provider, message_id, recipient, tracking_id, stream, facts, first_event_at, last_event_at, fact_times
    FROM seen ORDER BY key
    ON CONFLICT (project_id, key) DO UPDATE SET facts = m.facts WHERE false
    RETURNING m.key
  )
  SELECT coalesce(array_agg(key), '{}') INTO v_created FROM created;

  -- 2a. With the feed or alerts: each applied event's message as the events up to it left it (the
  --     stored row before the batch, read here before step 3 merges it, joined with the batch's events
  --     in order), its status before and after, and its alert flags (docs/storage.md, "The change feed").
  --     The feed's status changes (`p` 3) and the steps mailwarden_apply_alerts reads (the events that
  --     created their message or gave it an alert flag) are made at once. Only an event whose message
  --     step 2 did not create reads the stored row, by a primary-key probe (LATERAL … OFFSET 0), as
  --     getSuppressions reads: a batch of new messages reads none. Neither is ordered here:
  --     mailwarden_append_changes_with_statuses and mailwarden_apply_alerts order them by `o`.
  --     Only the columns the merge reads go through the sort and the windows (each copies its rows);
  --     the rest is read by position, once per event. A message's provider, id and recipient are its
  --     event's: its key is their digest (messageKey), so every event and the stored row agree.
  IF v_feed OR v_alerts IS NOT NULL THEN
    v_providers := p_events->'provider';
    v_message_ids := p_events->'message_id';
    v_recipients := p_events->'recipient';
    v_timelines_sent := p_events->'timeline';
    WITH upto AS (
      -- The events before this one (one window, so one pass); merged below with this one's.
      SELECT e.*, row_number() OVER w AS n, coalesce(bit_or(e.facts) OVER w, 0) AS facts_prior,
             min(e.tracking_id) OVER w AS tracking_prior, min(e.stream) OVER w AS stream_prior,
             min(e.first_event_at) OVER w AS first_prior, max(e.last_event_at) OVER w AS last_prior
      FROM (SELECT c.ord::integer AS ord, c.message_key COLLATE "C" AS message_key, c.tracking_id COLLATE "C" AS tracking_id,
                   c.stream COLLATE "C" AS stream, c.facts::integer AS facts, c.first_event_at::bigint AS first_event_at,
                   c.last_event_at::bigint AS last_event_at
            FROM ROWS FROM (jsonb_array_elements_text(p_events->'message_key'),
                            jsonb_array_elements_text(p_events->'tracking_id'),
                            jsonb_array_elements_text(p_events->'stream'),
                            jsonb_array_elements_text(p_events->'facts'),
                            jsonb_array_elements_text(p_events->'first_event_at'),
                            jsonb_array_elements_text(p_events->'last_event_at'))
                 WITH ORDINALITY AS c(message_key, tracking_id, stream, facts, first_event_at, last_event_at, ord)) e
      WHERE v_outcomes[e.ord] AND e.message_key IS NOT NULL
      WINDOW w AS (PARTITION BY e.message_key ORDER BY e.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
    ), merged AS (
      SELECT u.ord, u.message_key, m.key IS NULL AND u.n = 1 AS entered,
             coalesce(m.facts, 0) | u.facts_prior AS before_facts,
             coalesce(m.facts, 0) | u.facts_prior | u.facts AS facts,
             -- least() and greatest() skip nulls: no stored row, no earlier event, or no value.
             least(m.tracking_id, u.tracking_prior, u.tracking_id) AS tracking_id,
             least(m.stream, u.stream_prior, u.stream) AS stream,
             least(m.first_event_at, u.first_prior, u.first_event_at) AS first_event_at,
             greatest(m.last_event_at, u.last_prior, u.last_event_at) AS last_event_at
      FROM upto u
      LEFT JOIN unnest(v_created) AS c(key) ON c.key = u.message_key
      LEFT JOIN LATERAL (SELECT m.key, m.tracking_id, m.stream, m.facts, m.first_event_at, m.last_event_at
                         FROM "<schema>".messages m WHERE c.key IS NULL AND m.project_id = p_project_id AND m.key = u.message_key OFFSET 0) m ON true
    ), after AS (
      -- The includes read `facts`: the message's after the event here, before it in `x` below.
      SELECT y.*, CASE
      WHEN facts & 32 <> 0 THEN 0
      WHEN facts & 16 <> 0 THEN 1
      WHEN facts & 64 <> 0 THEN 2
      WHEN facts & 4 <> 0 THEN 3
      WHEN facts & 8 <> 0 THEN 4
      WHEN facts & 2 <> 0 THEN 5
      ELSE 6
    END AS to_status, ((facts & 16 <> 0)::integer | ((facts & 32 <> 0)::integer << 1)) AS to_flags FROM merged y
    ), x AS (
      SELECT y.*, CASE
      WHEN facts & 32 <> 0 THEN 0
      WHEN facts & 16 <> 0 THEN 1
      WHEN facts & 64 <> 0 THEN 2
      WHEN facts & 4 <> 0 THEN 3
      WHEN facts & 8 <> 0 THEN 4
      WHEN facts & 2 <> 0 THEN 5
      ELSE 6
    END AS from_status, ((facts & 16 <> 0)::integer | ((facts & 32 <> 0)::integer << 1)) AS from_flags
      -- OFFSET 0: the event's timeline entry is looked up once, not once per use below.
      FROM (SELECT a.ord, a.message_key, a.entered, a.tracking_id, a.stream, a.first_event_at, a.last_event_at,
                   a.facts AS after_facts, a.before_facts AS facts, a.to_status, a.to_flags,
                   v_timelines_sent->(a.ord - 1) AS timeline
            FROM after a OFFSET 0) y
    )
    SELECT array_agg(x.ord) FILTER (WHERE v_feed AND (x.entered OR x.to_status <> x.from_status)),
           array_agg(coalesce(v_now, (x.timeline->>'occurredAt')::bigint)) FILTER (WHERE v_feed AND (x.entered OR x.to_status <> x.from_status)),
           -- One flat array (nested objects cost as much again to build): the message's columns as
           -- toMessageRecord reads them, from and to, the event's id, type and time.
           array_agg(jsonb_build_array(x.message_key, v_providers->(x.ord - 1), v_message_ids->(x.ord - 1), v_recipients->(x.ord - 1),
                                       x.tracking_id, x.after_facts, x.first_event_at, x.last_event_at, x.stream,
                                       CASE WHEN NOT x.entered THEN x.from_status END,
                                       x.to_status, x.timeline->'id', x.timeline->'type', x.timeline->'occurredAt'))
             FILTER (WHERE v_feed AND (x.entered OR x.to_status <> x.from_status)),
           -- One aggregate node: every array sees the rows in the same order.
           array_agg(x.ord) FILTER (WHERE v_alerts IS NOT NULL AND (x.entered OR x.to_flags & ~x.from_flags <> 0)),
           array_agg(x.message_key) FILTER (WHERE v_alerts IS NOT NULL AND (x.entered OR x.to_flags & ~x.from_flags <> 0)),
           array_agg(x.tracking_id) FILTER (WHERE v_alerts IS NOT NULL AND (x.entered OR x.to_flags & ~x.from_flags <> 0)),
           array_agg(x.entered) FILTER (WHERE v_alerts IS NOT NULL AND (x.entered OR x.to_flags & ~x.from_flags <> 0)),
           array_agg(x.to_flags) FILTER (WHERE v_alerts IS NOT NULL AND (x.entered OR x.to_flags & ~x.from_flags <> 0)),
           array_agg(x.to_flags & ~x.from_flags) FILTER (WHERE v_alerts IS NOT NULL AND (x.entered OR x.to_flags & ~x.from_flags <> 0)),
           array_agg(coalesce(v_now, (x.timeline->>'occurredAt')::bigint))
             FILTER (WHERE v_alerts IS NOT NULL AND (x.entered OR x.to_flags & ~x.from_flags <> 0))
    INTO v_status_o, v_status_at, v_status_data, v_step_o, v_step_key, v_step_tid, v_step_entered, v_step_flags, v_step_gained, v_step_at
    FROM x;
    -- Each status change's actor, its event's, as a 15th element (mailwarden_append_changes_with_statuses),
    -- only when the batch names actors: without them, nothing here runs.
    IF v_actors IS NOT NULL AND v_status_o IS NOT NULL THEN
      v_status_data := array(SELECT s.data || (v_actors->(s.o - 1)) FROM unnest(v_status_data, v_status_o) WITH ORDINALITY AS s(data, o, n) ORDER BY s.n);
    END IF;
  END IF;

  -- 3. mergeMessage on the existing messages, then trackingIdDeltas of every message the batch
  --    touched, summed per tracking ID and applied in tracking-ID order.
  WITH seen AS (
    SELECT e.message_key AS key,
           min(e.tracking_id) AS tracking_id,
           min(e.stream) AS stream,
           bit_or(e.facts) AS facts,
           min(e.first_event_at) AS first_event_at,
           max(e.last_event_at) AS last_event_at,
           ARRAY[min(e.first_event_at) FILTER (WHERE e.facts & 4 <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & 16 <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & 8 <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & 32 <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & 128 <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & 256 <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & 512 <> 0)] AS fact_times
    FROM (SELECT c.ord::integer AS ord, c.key COLLATE "C" AS key, c.message_key COLLATE "C" AS message_key,
                 c.tracking_id COLLATE "C" AS tracking_id, c.stream COLLATE "C" AS stream, c.facts::integer AS facts,
                 c.first_event_at::bigint AS first_event_at, c.last_event_at::bigint AS last_event_at
          FROM ROWS FROM (jsonb_array_elements_text(p_events->'key'),
                          jsonb_array_elements_text(p_events->'message_key'),
                          jsonb_array_elements_text(p_events->'tracking_id'),
                          jsonb_array_elements_text(p_events->'stream'),
                          jsonb_array_elements_text(p_events->'facts'),
                          jsonb_array_elements_text(p_events->'first_event_at'),
                          jsonb_array_elements_text(p_events->'last_event_at'))
               WITH ORDINALITY AS c(key, message_key, tracking_id, stream, facts, first_event_at, last_event_at, ord)) e
    WHERE v_outcomes[e.ord] AND e.message_key IS NOT NULL
    GROUP BY 1
  ), new_messages AS (
    SELECT s.* FROM seen s JOIN unnest(v_created) AS c(key) ON c.key = s.key
  ), known AS (
    SELECT m.key, m.tracking_id, m.stream, m.facts, m.first_event_at, m.last_event_at, m.fact_times
    FROM (SELECT key FROM seen EXCEPT ALL SELECT key FROM new_messages) e
    JOIN "<schema>".messages m ON m.project_id = p_project_id AND m.key = e.key
  ), merged AS (
    UPDATE "<schema>".messages m SET
      tracking_id = least(k.tracking_id, s.tracking_id),
      stream = least(k.stream, s.stream),
      facts = k.facts | s.facts,
      first_event_at = least(k.first_event_at, s.first_event_at),
      last_event_at = greatest(k.last_event_at, s.last_event_at),
      fact_times = ARRAY[CASE WHEN s.fact_times[1] IS NULL THEN k.fact_times[1]
        WHEN k.facts & 4 = 0 THEN s.fact_times[1]
        WHEN k.fact_times[1] IS NULL THEN NULL
        ELSE least(k.fact_times[1], s.fact_times[1]) END,
      CASE WHEN s.fact_times[2] IS NULL THEN k.fact_times[2]
        WHEN k.facts & 16 = 0 THEN s.fact_times[2]
        WHEN k.fact_times[2] IS NULL THEN NULL
        ELSE least(k.fact_times[2], s.fact_times[2]) END,
      CASE WHEN s.fact_times[3] IS NULL THEN k.fact_times[3]
        WHEN k.facts & 8 = 0 THEN s.fact_times[3]
        WHEN k.fact_times[3] IS NULL THEN NULL
        ELSE least(k.fact_times[3], s.fact_times[3]) END,
      CASE WHEN s.fact_times[4] IS NULL THEN k.fact_times[4]
        WHEN k.facts & 32 = 0 THEN s.fact_times[4]
        WHEN k.fact_times[4] IS NULL THEN NULL
        ELSE least(k.fact_times[4], s.fact_times[4]) END,
      CASE WHEN s.fact_times[5] IS NULL THEN k.fact_times[5]
        WHEN k.facts & 128 = 0 THEN s.fact_times[5]
        WHEN k.fact_times[5] IS NULL THEN NULL
        ELSE least(k.fact_times[5], s.fact_times[5]) END,
      CASE WHEN s.fact_times[6] IS NULL THEN k.fact_times[6]
        WHEN k.facts & 256 = 0 THEN s.fact_times[6]
        WHEN k.fact_times[6] IS NULL THEN NULL
        ELSE least(k.fact_times[6], s.fact_times[6]) END,
      CASE WHEN s.fact_times[7] IS NULL THEN k.fact_times[7]
        WHEN k.facts & 512 = 0 THEN s.fact_times[7]
        WHEN k.fact_times[7] IS NULL THEN NULL
        ELSE least(k.fact_times[7], s.fact_times[7]) END]
    FROM known k JOIN seen s ON s.key = k.key
    WHERE m.project_id = p_project_id AND m.key = k.key
      AND (least(k.tracking_id, s.tracking_id) IS DISTINCT FROM k.tracking_id OR k.facts | s.facts <> k.facts
           OR least(k.stream, s.stream) IS DISTINCT FROM k.stream
           OR s.first_event_at < k.first_event_at OR s.last_event_at > k.last_event_at
           OR ARRAY[CASE WHEN s.fact_times[1] IS NULL THEN k.fact_times[1]
        WHEN k.facts & 4 = 0 THEN s.fact_times[1]
        WHEN k.fact_times[1] IS NULL THEN NULL
        ELSE least(k.fact_times[1], s.fact_times[1]) END,
      CASE WHEN s.fact_times[2] IS NULL THEN k.fact_times[2]
        WHEN k.facts & 16 = 0 THEN s.fact_times[2]
        WHEN k.fact_times[2] IS NULL THEN NULL
        ELSE least(k.fact_times[2], s.fact_times[2]) END,
      CASE WHEN s.fact_times[3] IS NULL THEN k.fact_times[3]
        WHEN k.facts & 8 = 0 THEN s.fact_times[3]
        WHEN k.fact_times[3] IS NULL THEN NULL
        ELSE least(k.fact_times[3], s.fact_times[3]) END,
      CASE WHEN s.fact_times[4] IS NULL THEN k.fact_times[4]
        WHEN k.facts & 32 = 0 THEN s.fact_times[4]
        WHEN k.fact_times[4] IS NULL THEN NULL
        ELSE least(k.fact_times[4], s.fact_times[4]) END,
      CASE WHEN s.fact_times[5] IS NULL THEN k.fact_times[5]
        WHEN k.facts & 128 = 0 THEN s.fact_times[5]
        WHEN k.fact_times[5] IS NULL THEN NULL
        ELSE least(k.fact_times[5], s.fact_times[5]) END,
      CASE WHEN s.fact_times[6] IS NULL THEN k.fact_times[6]
        WHEN k.facts & 256 = 0 THEN s.fact_times[6]
        WHEN k.fact_times[6] IS NULL THEN NULL
        ELSE least(k.fact_times[6], s.fact_times[6]) END,
      CASE WHEN s.fact_times[7] IS NULL THEN k.fact_times[7]
        WHEN k.facts & 512 = 0 THEN s.fact_times[7]
        WHEN k.fact_times[7] IS NULL THEN NULL
        ELSE least(k.fact_times[7], s.fact_times[7]) END] IS DISTINCT FROM k.fact_times)
    RETURNING k.tracking_id AS before_id, k.facts AS before_facts, m.tracking_id, m.facts, m.last_event_at,
              k.fact_times AS before_times, m.fact_times
  ), changes AS (
    SELECT before_id, before_facts, tracking_id, facts, last_event_at, before_times, fact_times FROM merged
    UNION ALL
    SELECT NULL, NULL, tracking_id, facts, last_event_at, NULL::bigint[], fact_times FROM new_messages
  ), stat_moves AS (
    -- statsMoves: what a message counted leaves its hours, what it counts comes in; '' is the project.
    SELECT x.t, x.col, -1 AS d, c.before_id AS tracking_id
    FROM changes c CROSS JOIN LATERAL unnest(c.before_times) WITH ORDINALITY AS x(t, col) WHERE x.t IS NOT NULL
    UNION ALL
    SELECT x.t, x.col, 1, c.tracking_id
    FROM changes c CROSS JOIN LATERAL unnest(c.fact_times) WITH ORDINALITY AS x(t, col) WHERE x.t IS NOT NULL
  ), stat_totals AS (
    -- The hour by integer floor division (numeric division cost a millisecond a batch).
    SELECT scope, t / 3600000 - (t % 3600000 < 0)::integer AS hour,
           coalesce(sum(d) FILTER (WHERE col = 1), 0)::integer AS c1,
           coalesce(sum(d) FILTER (WHERE col = 2), 0)::integer AS c2,
           coalesce(sum(d) FILTER (WHERE col = 3), 0)::integer AS c3,
           coalesce(sum(d) FILTER (WHERE col = 4), 0)::integer AS c4,
           coalesce(sum(d) FILTER (WHERE col = 5), 0)::integer AS c5,
           coalesce(sum(d) FILTER (WHERE col = 6), 0)::integer AS c6,
           coalesce(sum(d) FILTER (WHERE col = 7), 0)::integer AS c7
    FROM (SELECT ''::text COLLATE "C" AS scope, t, col, d FROM stat_moves
          UNION ALL
          SELECT tracking_id, t, col, d FROM stat_moves WHERE tracking_id IS NOT NULL) m
    GROUP BY 1, 2
  ), deltas AS (
    -- A message leaving its tracking ID takes its counts along; the row's lastEventAt is recomputed.
    SELECT before_id AS tracking_id, -1 AS messages,
           -(before_facts & 4 <> 0)::integer AS delivered,
           -(before_facts & 24 <> 0)::integer AS bounced,
           -(before_facts & 32 <> 0)::integer AS complained,
           -(before_facts & 128 <> 0)::integer AS opened,
           -(before_facts & 256 <> 0)::integer AS clicked,
           -(before_facts & 512 <> 0)::integer AS unsubscribed,
           NULL::bigint AS raise, true AS recompute
    FROM changes WHERE before_id IS NOT NULL AND before_id IS DISTINCT FROM tracking_id
    UNION ALL
    -- Counters move only when a fact flips from false to true.
    SELECT tracking_id, (before_id IS DISTINCT FROM tracking_id)::integer,
           (facts & 4 <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & 4 <> 0)::integer ELSE 0 END,
           (facts & 24 <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & 24 <> 0)::integer ELSE 0 END,
           (facts & 32 <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & 32 <> 0)::integer ELSE 0 END,
           (facts & 128 <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & 128 <> 0)::integer ELSE 0 END,
           (facts & 256 <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & 256 <> 0)::integer ELSE 0 END,
           (facts & 512 <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & 512 <> 0)::integer ELSE 0 END,
           last_event_at, false
    FROM changes WHERE tracking_id IS NOT NULL
  ), totals AS (
    SELECT tracking_id, sum(messages)::integer AS messages, sum(delivered)::integer AS delivered,
           sum(bounced)::integer AS bounced, sum(complained)::integer AS complained,
           sum(opened)::integer AS opened, sum(clicked)::integer AS clicked, sum(unsubscribed)::integer AS unsubscribed,
           max(raise) AS raise, bool_or(recompute) AS recompute
    FROM deltas GROUP BY tracking_id
  ), search_keys AS (
    SELECT DISTINCT ON (tracking_id) tracking_id, search_key
    FROM (SELECT c.ord::integer AS ord, c.key COLLATE "C" AS key, c.tracking_id COLLATE "C" AS tracking_id,
                 c.search_key AS search_key
          FROM ROWS FROM (jsonb_array_elements_text(p_events->'key'),
                          jsonb_array_elements_text(p_events->'tracking_id'),
                          jsonb_array_elements_text(p_events->'search_key'))
               WITH ORDINALITY AS c(key, tracking_id, search_key, ord)) e WHERE e.tracking_id IS NOT NULL
  ), moved AS (
    INSERT INTO "<schema>".tracking_ids AS t
      (project_id, tracking_id, search_key, messages, delivered, bounced, complained, last_event_at, opened, clicked, unsubscribed)
    -- NOT NULL is checked before the conflict is: a row only left has no raise, and is recomputed.
    SELECT p_project_id, d.tracking_id, coalesce(k.search_key, lower(d.tracking_id)),
           d.messages, d.delivered, d.bounced, d.complained, coalesce(d.raise, -9223372036854775808),
           d.opened, d.clicked, d.unsubscribed
    FROM totals d LEFT JOIN search_keys k ON k.tracking_id = d.tracking_id
    ORDER BY d.tracking_id
    ON CONFLICT (project_id, tracking_id) DO UPDATE SET
      messages = t.messages + excluded.messages,
      delivered = t.delivered + excluded.delivered,
      bounced = t.bounced + excluded.bounced,
      complained = t.complained + excluded.complained,
      opened = t.opened + excluded.opened,
      clicked = t.clicked + excluded.clicked,
      unsubscribed = t.unsubscribed + excluded.unsubscribed,
      last_event_at = greatest(t.last_event_at, excluded.last_event_at)
    RETURNING t.tracking_id, t.messages
  )
  SELECT array_agg(m.tracking_id) FILTER (WHERE m.messages > 0 AND d.recompute),
         array_agg(m.tracking_id) FILTER (WHERE m.messages <= 0)
         , (SELECT jsonb_agg(to_jsonb(t)) FROM stat_totals t WHERE c1 <> 0 OR c2 <> 0 OR c3 <> 0 OR c4 <> 0 OR c5 <> 0 OR c6 <> 0 OR c7 <> 0)
  INTO v_recompute, v_emptied, v_stats
  FROM moved m JOIN totals d ON d.tracking_id = m.tracking_id;

  -- 4. Rows this transaction holds locked: a new snapshot sees every message change committed before.
  IF v_emptied IS NOT NULL THEN
    DELETE FROM "<schema>".tracking_ids WHERE project_id = p_project_id AND tracking_id = ANY (v_emptied);
  END IF;
  IF v_recompute IS NOT NULL THEN
    -- From the messages still there; when retention purged them all, the row keeps its time.
    UPDATE "<schema>".tracking_ids t SET last_event_at = coalesce((
      SELECT max(m.last_event_at) FROM "<schema>".messages m
      WHERE m.project_id = p_project_id AND m.tracking_id = t.tracking_id
    ), t.last_event_at)
    WHERE t.project_id = p_project_id AND t.tracking_id = ANY (v_recompute);
  END IF;

  -- 4a. Counts over time: the hour buckets step 3 moved, in (scope, hour) order after the tracking-ID
  --     rows. A bucket is one hot row per project and hour: concurrent batches of a project queue on it.
  IF v_stats IS NOT NULL THEN
    INSERT INTO "<schema>".stat_buckets AS b (project_id, tracking_id, hour, delivered, hard_bounced, soft_bounced, complained, opened, clicked, unsubscribed)
    SELECT p_project_id, x.scope, x.hour, x.c1, x.c2, x.c3, x.c4, x.c5, x.c6, x.c7
    FROM jsonb_to_recordset(v_stats) AS x(scope text, hour bigint, c1 integer, c2 integer, c3 integer, c4 integer, c5 integer, c6 integer, c7 integer)
    ORDER BY x.scope COLLATE "C", x.hour
    ON CONFLICT (project_id, tracking_id, hour) DO UPDATE SET
      delivered = b.delivered + excluded.delivered,
      hard_bounced = b.hard_bounced + excluded.hard_bounced,
      soft_bounced = b.soft_bounced + excluded.soft_bounced,
      complained = b.complained + excluded.complained,
      opened = b.opened + excluded.opened,
      clicked = b.clicked + excluded.clicked,
      unsubscribed = b.unsubscribed + excluded.unsubscribed;
  END IF;

  -- 4b. Timelines (insertTimelineEntry): the entries of applied events, an entry of the same time and id
  --     once; then each touched timeline over the cap loses what lies between its first and latest
  --     entries kept. Its message row is locked since step 2, so no other batch changes it meanwhile.
  --     A message step 2 created had no entries before this batch, so its timeline is over the cap
  --     only if the batch added more than the cap: the others are not read again.
  WITH added AS (
    INSERT INTO "<schema>".timeline_entries (project_id, message_key, occurred_at, id, entry)
    SELECT DISTINCT ON (e.message_key, e.occurred_at, e.id) p_project_id, e.message_key, e.occurred_at, e.id, e.entry
    FROM (SELECT e.message_key, (e.timeline->>'occurredAt')::bigint AS occurred_at,
                 (e.timeline->>'id') COLLATE "C" AS id, e.timeline AS entry
          FROM (SELECT c.ord::integer AS ord, c.key COLLATE "C" AS key, c.message_key COLLATE "C" AS message_key,
                       nullif(c.timeline, 'null') AS timeline
          FROM ROWS FROM (jsonb_array_elements_text(p_events->'key'),
                          jsonb_array_elements_text(p_events->'message_key'),
                          jsonb_array_elements(p_events->'timeline'))
               WITH ORDINALITY AS c(key, message_key, timeline, ord)) e
          WHERE v_outcomes[e.ord] AND e.message_key IS NOT NULL AND e.timeline IS NOT NULL) e
    ORDER BY e.message_key, e.occurred_at, e.id
    ON CONFLICT DO NOTHING
    RETURNING message_key
  )
  SELECT array_agg(a.message_key) INTO v_timelines
  FROM (SELECT message_key, count(*) AS n FROM added GROUP BY 1) a
  LEFT JOIN unnest(v_created) AS c(key) ON c.key = a.message_key
  WHERE c.key IS NULL OR a.n > 50;
  IF v_timelines IS NOT NULL THEN
    DELETE FROM "<schema>".timeline_entries t USING (
      SELECT message_key, occurred_at, id FROM (
        SELECT message_key, occurred_at, id,
               row_number() OVER (PARTITION BY message_key ORDER BY occurred_at, id) AS n,
               count(*) OVER (PARTITION BY message_key) AS total
        FROM "<schema>".timeline_entries WHERE project_id = p_project_id AND message_key = ANY (v_timelines)
      ) r WHERE r.total > 50 AND r.n > 20 AND r.n <= r.total - 30
    ) d
    WHERE t.project_id = p_project_id AND t.message_key = d.message_key AND t.occurred_at = d.occurred_at AND t.id = d.id;
  END IF;

  -- 5. Suppressions: the applied events' suppressions, in event order, each joined into the list of its
  --    stream by mailwarden_merge_suppressions (which also notifies) with the caller's clock (`now`);
  --    its codes are theirs. A webhook suppression of an allowlisted recipient is not written (only
  --    events with one look the allowlist up). Without the soft-bounce rule (`rule`, and events with
  --    a `rule_input`), one call for the batch.
  IF v_rule IS NULL OR NOT p_events ? 'rule_input' THEN
    SELECT jsonb_agg(CASE WHEN NOT v_feed THEN e.suppression
                          WHEN v_actors IS NULL THEN e.suppression || jsonb_build_object('o', e.ord)
                          ELSE e.suppression || jsonb_build_object('o', e.ord, 'actor', v_actors->(e.ord - 1)) END ORDER BY e.ord),
           array_agg(e.ord ORDER BY e.ord) INTO v_suppressions, v_suppressed
    FROM (SELECT c.ord::integer AS ord, c.key COLLATE "C" AS key, nullif(c.suppression, 'null') AS suppression
            FROM ROWS FROM (jsonb_array_elements_text(p_events->'key'), jsonb_array_elements(p_events->'suppression'))
                 WITH ORDINALITY AS c(key, suppression, ord)) e
    WHERE v_outcomes[e.ord] AND e.suppression IS NOT NULL
      AND NOT (e.suppression->>'source' = 'webhook' AND EXISTS (
        SELECT FROM "<schema>".allowlist a WHERE a.project_id = p_project_id
          AND a.key IN (e.suppression->>'hash', '@' || substring(e.suppression->>'email' FROM '[^@]*$'))));
    IF v_suppressions IS NOT NULL THEN
      v_codes := "<schema>".mailwarden_merge_suppressions(p_project_id, CASE
        WHEN v_feed THEN jsonb_build_object('now', v_now, 'rows', v_suppressions, 'feed', true)
        ELSE jsonb_build_object('now', v_now, 'rows', v_suppressions) END);
    END IF;
    -- 6. Per event (EventOutcome, as core's eventOutcomeOfCode reads it): 'd' for a duplicate, the
    --    merge's code for an event with a suppression (the n-th of them gets the n-th code), else 'a'.
    v_result := (
      SELECT string_agg(CASE WHEN NOT o.applied THEN 'd' WHEN h.n IS NULL THEN 'a' ELSE substr(v_codes, h.n::integer, 1) END, '' ORDER BY o.ord)
      FROM unnest(v_outcomes) WITH ORDINALITY AS o(applied, ord)
      LEFT JOIN unnest(v_suppressed) WITH ORDINALITY AS h(ord, n) ON h.ord = o.ord);
  ELSE
    -- 5a. With the rule, event by event (docs/decisions.md, "The soft-bounce rule"): the suppressions
    --     up to an event with a rule input are joined, then the rule runs for it. Only the rule's own
    --     address is read and written (its history, its project-wide suppression), so the suppressions
    --     waiting are joined first only when one is that address's; the others wait, in order, for a
    --     later join: the same rows, codes and joins, in fewer calls. The history rows of
    --     the batch's addresses are locked first, in hash order (one inserted for an address that has
    --     none: mailwarden_soft_bounce deletes it again if it stays empty), so concurrent batches wait
    --     for each other there.
    --     An address whose rule inputs are all deliveries, one within the keep time (`last_delivery`
    --     here), is done by that same statement: its deliveries in order keep the latest as its last
    --     delivery and forget the bounces before it (mailwarden_soft_bounce step 2, once for all), and
    --     the loop below skips them. The last delivery is then at or after the horizon, so the greatest
    --     of the stored one and the batch's is the one the event-by-event path keeps.
    v_keep := (v_rule->>'keepMs')::bigint;
    v_horizon := v_now - v_keep;
    WITH addresses AS (
      SELECT (c.rule_input->>'hash') COLLATE "C" AS hash,
             CASE WHEN bool_and(c.rule_input->>'kind' = 'delivery') THEN max((c.rule_input->>'at')::bigint)
               FILTER (WHERE NOT coalesce((c.rule_input->>'at')::bigint < v_horizon, false)) END AS last_delivery
      FROM ROWS FROM (jsonb_array_elements_text(p_events->'key'), jsonb_array_elements(p_events->'rule_input'))
           WITH ORDINALITY AS c(key, rule_input, ord)
      WHERE v_outcomes[c.ord::integer] AND c.rule_input <> 'null'
      GROUP BY 1
    ), saved AS (
      INSERT INTO "<schema>".soft_bounces AS h (project_id, hash, bounces, last_delivery, forget_at)
      SELECT p_project_id, a.hash, '[]'::jsonb, a.last_delivery, coalesce(a.last_delivery + v_keep, 0)
      FROM addresses a
      ORDER BY a.hash
      ON CONFLICT (project_id, hash) DO UPDATE SET
        last_delivery = greatest(h.last_delivery, excluded.last_delivery),
        bounces = coalesce((SELECT jsonb_agg(x.b ORDER BY x.n) FROM jsonb_array_elements(h.bounces) WITH ORDINALITY AS x(b, n)
                            WHERE (x.b->>0)::bigint >= greatest(h.last_delivery, excluded.last_delivery)), '[]'),
        forget_at = greatest(h.last_delivery, excluded.last_delivery,
                             (SELECT max((x.b->>0)::bigint) FROM jsonb_array_elements(h.bounces) AS x(b)
                              WHERE (x.b->>0)::bigint >= greatest(h.last_delivery, excluded.last_delivery))) + v_keep
      WHERE excluded.last_delivery IS NOT NULL
      RETURNING h.hash, h.last_delivery
    )
    SELECT coalesce(array_agg(hash) FILTER (WHERE last_delivery IS NOT NULL), '{}') INTO v_delivered FROM saved;

    v_event_codes := array_fill('a'::text, ARRAY[cardinality(v_outcomes)]);
    FOR v_event IN
      SELECT e.ord, e.suppression, e.rule_input,
             (e.suppression->>'source' = 'webhook' OR e.rule_input->>'kind' = 'soft_bounce') AND EXISTS (
               SELECT FROM "<schema>".allowlist a WHERE a.project_id = p_project_id
                 AND a.key IN (e.hash, '@' || substring(e.email FROM '[^@]*$'))) AS allowlisted
      FROM (SELECT c.ord::integer AS ord, nullif(c.suppression, 'null') AS suppression,
                   CASE WHEN d.hash IS NULL THEN nullif(c.rule_input, 'null') END AS rule_input,
                   coalesce(c.suppression->>'hash', c.rule_input->>'hash') AS hash,
                   coalesce(c.suppression->>'email', c.rule_input->>'email') AS email
            FROM ROWS FROM (jsonb_array_elements_text(p_events->'key'), jsonb_array_elements(p_events->'suppression'),
                            jsonb_array_elements(p_events->'rule_input'))
                 WITH ORDINALITY AS c(key, suppression, rule_input, ord)
            LEFT JOIN unnest(v_delivered) AS d(hash) ON d.hash = c.rule_input->>'hash' AND c.rule_input->>'kind' = 'delivery') e
      WHERE v_outcomes[e.ord] AND (e.suppression IS NOT NULL OR e.rule_input IS NOT NULL)
      ORDER BY e.ord
    LOOP
      IF v_event.suppression IS NOT NULL AND NOT (v_event.suppression->>'source' = 'webhook' AND v_event.allowlisted) THEN
        v_pending := v_pending || CASE WHEN NOT v_feed THEN v_event.suppression
                                       WHEN v_actors IS NULL THEN v_event.suppression || jsonb_build_object('o', v_event.ord)
                                       ELSE v_event.suppression || jsonb_build_object('o', v_event.ord, 'actor', v_actors->(v_event.ord - 1)) END;
        v_pending_ords := v_pending_ords || v_event.ord;
        v_pending_hashes := v_pending_hashes || (v_event.suppression->>'hash');
      END IF;
      CONTINUE WHEN v_event.rule_input IS NULL;
      IF v_event.rule_input->>'hash' = ANY (v_pending_hashes) THEN
        v_codes := "<schema>".mailwarden_merge_suppressions(p_project_id, CASE
          WHEN v_feed THEN jsonb_build_object('now', v_now, 'rows', to_jsonb(v_pending), 'feed', true)
          ELSE jsonb_build_object('now', v_now, 'rows', to_jsonb(v_pending)) END);
        FOR i IN 1 .. cardinality(v_pending_ords) LOOP
          v_event_codes[v_pending_ords[i]] := substr(v_codes, i, 1);
        END LOOP;
        v_pending := '{}';
        v_pending_ords := '{}';
        v_pending_hashes := '{}';
      END IF;
      -- With the feed, the rule's changes are tagged with the event's position (`feed` in its rule).
      v_code := "<schema>".mailwarden_soft_bounce(p_project_id, CASE WHEN v_feed THEN v_rule || jsonb_build_object('feed', v_event.ord) ELSE v_rule END,
        v_now, v_event.rule_input, v_event.allowlisted);
      -- 6a. An event that carried no suppression reports the rule's.
      IF v_code IS NOT NULL AND v_event.suppression IS NULL THEN
        v_event_codes[v_event.ord] := v_code;
      END IF;
    END LOOP;
    IF cardinality(v_pending_ords) > 0 THEN
      v_codes := "<schema>".mailwarden_merge_suppressions(p_project_id, CASE
        WHEN v_feed THEN jsonb_build_object('now', v_now, 'rows', to_jsonb(v_pending), 'feed', true)
        ELSE jsonb_build_object('now', v_now, 'rows', to_jsonb(v_pending)) END);
      FOR i IN 1 .. cardinality(v_pending_ords) LOOP
        v_event_codes[v_pending_ords[i]] := substr(v_codes, i, 1);
      END LOOP;
    END IF;
    v_result := (
      SELECT string_agg(CASE WHEN o.applied THEN v_event_codes[o.ord] ELSE 'd' END, '' ORDER BY o.ord)
      FROM unnest(v_outcomes) WITH ORDINALITY AS o(applied, ord));
  END IF;

  -- 7. Alerts: the windows the events moved, after every row above is locked (mailwarden_apply_alerts).
  IF v_alerts IS NOT NULL THEN
    v_changes := v_changes || "<schema>".mailwarden_apply_alerts(p_project_id, v_alerts, v_step_o, v_step_key, v_step_tid, v_step_entered,
      v_step_flags, v_step_gained, v_step_at, v_feed);
  END IF;

  -- 8. The feed: per event, its suppression changes (pended by mailwarden_feed_suppressions and the
  --    rule, `p` 1 and 2), its status change (3), its alert crossings and the streams they paused (4),
  --    numbered by mailwarden_append_changes_with_statuses, which locks the project's counter last.
  IF v_feed THEN
    PERFORM "<schema>".mailwarden_append_changes_with_statuses(p_project_id, v_changes, v_status_o, v_status_at, v_status_data);
  END IF;
  RETURN v_result;
END
$_$;

--
-- Name: mailwarden_delete_timelines(); Type: FUNCTION; Schema: <schema>; Owner: -
--

CREATE FUNCTION <schema>.mailwarden_delete_timelines() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  DELETE FROM "<schema>".timeline_entries t USING deleted d WHERE t.project_id = d.project_id AND t.message_key = d.key;
  RETURN NULL;
END
$$;

--
-- Name: mailwarden_erase_address(text, jsonb); Type: FUNCTION; Schema: <schema>; Owner: -
--

CREATE FUNCTION <schema>.mailwarden_erase_address(p_project_id text, p_erasure jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
DECLARE
  v_hash text := p_erasure->>'hash';
  v_email text := p_erasure->>'email';
  v_now bigint := (p_erasure->>'now')::bigint;
  v_row jsonb := p_erasure->'suppression';
  v_keys text[];
  v_messages integer;
  v_changes integer;
  v_records jsonb;
  v_seq bigint;
BEGIN
  -- 1. The recipient's messages, locked in key order as applyEvents locks them, then their events' dedup
  --    keys (`<provider>:<eventKey>` of each timeline entry) and any key that embeds a form.
  SELECT coalesce(array_agg(m.key ORDER BY m.key), '{}') INTO v_keys
  FROM (SELECT key FROM "<schema>".messages WHERE project_id = p_project_id AND recipient = v_email ORDER BY key FOR UPDATE) m;
  v_messages := cardinality(v_keys);
  DELETE FROM "<schema>".event_keys e
  WHERE e.project_id = p_project_id AND e.key IN (
    SELECT (t.entry->>'provider') || ':' || (t.entry->>'eventKey') FROM "<schema>".timeline_entries t
    WHERE t.project_id = p_project_id AND t.message_key = ANY (v_keys));
  DELETE FROM "<schema>".event_keys e
  WHERE e.project_id = p_project_id
    AND EXISTS (SELECT FROM jsonb_array_elements_text(p_erasure->'forms') AS f(form) WHERE strpos(e.key, f.form) > 0);
  DELETE FROM "<schema>".messages WHERE project_id = p_project_id AND key = ANY (v_keys);

  -- 2. Its soft-bounce history and allowlist entry.
  DELETE FROM "<schema>".soft_bounces WHERE project_id = p_project_id AND hash = v_hash;
  DELETE FROM "<schema>".allowlist WHERE project_id = p_project_id AND key = v_hash;

  -- 3. The project-wide suppression, written when there is none live at `now` (an expired one replaced),
  --    else locked as it is; then every list's row of the hash loses the address.
  INSERT INTO "<schema>".suppressions AS s (project_id, stream, hash, email, reason, created_at, source, source_at,
                                            cause_provider, cause_message_id, cause_event_id, cause_diagnostic, expires_at, cause_rule, allowlisted)
  VALUES (p_project_id, '', v_hash, v_row->>'email', (v_row->>'reason')::smallint, (v_row->>'created_at')::bigint,
          v_row->>'source', (v_row->>'source_at')::bigint, v_row->>'cause_provider', v_row->>'cause_message_id',
          v_row->>'cause_event_id', NULL, NULL, NULL, NULL)
  ON CONFLICT (project_id, hash, stream) DO UPDATE SET email = excluded.email, reason = excluded.reason,
    created_at = excluded.created_at, source = excluded.source, source_at = excluded.source_at,
    cause_provider = excluded.cause_provider, cause_message_id = excluded.cause_message_id,
    cause_event_id = excluded.cause_event_id, cause_diagnostic = NULL, expires_at = NULL, cause_rule = NULL, allowlisted = NULL
  WHERE s.expires_at <= v_now;
  UPDATE "<schema>".suppressions SET email = v_row->>'email', cause_diagnostic = NULL,
    expires_at = CASE WHEN stream = '' THEN NULL ELSE expires_at END,
    -- The rule's bounces as packProvenance packs them, [provider, messageId, eventId, at, diagnostic]: no diagnostic.
    cause_rule = CASE WHEN cause_rule IS NOT NULL THEN (
      SELECT jsonb_build_array(r->0, r->1, r->2, coalesce(
               (SELECT jsonb_agg(jsonb_set(b, '{4}', 'null') ORDER BY n) FROM jsonb_array_elements(r->3) WITH ORDINALITY AS x(b, n)), '[]'))::text
      FROM (SELECT cause_rule::jsonb AS r) x) END
  WHERE project_id = (SELECT p_project_id) AND hash = v_hash;
  SELECT jsonb_agg(to_jsonb(s) - 'project_id' ORDER BY s.stream) INTO v_records
  FROM "<schema>".suppressions s WHERE s.project_id = (SELECT p_project_id) AND s.hash = v_hash;
  PERFORM pg_notify('mailwarden_invalidations', json_build_object(
    'schema', '<schema>', 'projectId', p_project_id, 'hashes', json_build_array(v_hash))::text);

  -- 4. The feed's changes about it (earlier erasures stay), then the erasure, with the counter locked last.
  DELETE FROM "<schema>".changes c
  WHERE c.project_id = p_project_id AND c.kind <> 'address.erased' AND (
    c.data->'record'->>'hash' = v_hash
    OR (c.kind IN ('allowlist.added', 'allowlist.removed') AND c.data->'entry'->>'key' = v_hash)
    OR (c.kind = 'message.status_changed' AND c.data->>3 = v_email));
  GET DIAGNOSTICS v_changes = ROW_COUNT;
  IF p_erasure ? 'feed' THEN
    v_seq := "<schema>".mailwarden_append_changes(p_project_id, jsonb_build_array(jsonb_build_object(
      'kind', 'address.erased', 'at', v_now, 'actor', p_erasure->>'actor',
      'data', jsonb_build_object('hash', v_hash, 'records', v_records, 'messages', v_messages, 'changes', v_changes))));
  END IF;
  RETURN jsonb_build_object('records', v_records, 'messages', v_messages, 'changes', v_changes, 'seq', v_seq);
END
$$;

--
-- Name: mailwarden_feed_suppressions(text, bigint, jsonb); Type: FUNCTION; Schema: <schema>; Owner: -
--

CREATE FUNCTION <schema>.mailwarden_feed_suppressions(p_project_id text, p_now bigint, p_rows jsonb) RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
  v_row record;
  v_before "<schema>".suppressions;
  v_after "<schema>".suppressions;
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
    CROSS JOIN LATERAL (SELECT s.* FROM "<schema>".suppressions s
                        WHERE s.project_id = (SELECT p_project_id) AND s.hash = x.hash AND s.stream = x.stream
                        LIMIT 1 FOR UPDATE) s;
    v_merged := "<schema>".mailwarden_merge_suppressions(p_project_id, jsonb_build_object('now', p_now, 'rows', p_rows));
    SELECT jsonb_object_agg(s.hash || s.stream, to_jsonb(s) - 'project_id') INTO v_rows_after
    FROM jsonb_array_elements(p_rows) AS x(value)
    CROSS JOIN LATERAL (SELECT s.* FROM "<schema>".suppressions s
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
             'actor', CASE WHEN n = 1 THEN 'rule:expiry' ELSE value->>'actor' END,
             'kind', kind, 'at', coalesce(p_now, (after->>'created_at')::bigint), 'data', data) ORDER BY ord, n), '[]')
    INTO v_changes FROM made;
    PERFORM "<schema>".mailwarden_pend_changes(v_changes);
    RETURN v_merged;
  END IF;

  FOR v_row IN
    SELECT x.value, x.ord::integer AS ord, (x.value->>'hash') COLLATE "C" AS hash, coalesce(x.value->>'stream', '') COLLATE "C" AS stream
    FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(value, ord)
    ORDER BY 3, 4, 2
  LOOP
    SELECT * INTO v_before FROM "<schema>".suppressions
    WHERE project_id = (SELECT p_project_id) AND hash = v_row.hash AND stream = v_row.stream FOR UPDATE;
    v_had := FOUND;
    v_codes[v_row.ord] := "<schema>".mailwarden_merge_suppressions(p_project_id,
      jsonb_build_object('now', p_now, 'rows', jsonb_build_array(v_row.value)));
    SELECT * INTO v_after FROM "<schema>".suppressions
    WHERE project_id = (SELECT p_project_id) AND hash = v_row.hash AND stream = v_row.stream;
    CONTINUE WHEN NOT FOUND OR (v_had AND v_after IS NOT DISTINCT FROM v_before);
    v_tag := jsonb_build_object('o', coalesce((v_row.value->>'o')::integer, v_row.ord), 'p', coalesce((v_row.value->>'p')::integer, 1),
      'actor', v_row.value->>'actor');
    v_at := coalesce(p_now, v_after.created_at);
    IF v_had AND coalesce(v_before.expires_at <= p_now, false) THEN
      v_changes := v_changes || (v_tag || jsonb_build_object('actor', 'rule:expiry', 'kind', 'suppression.expired', 'at', v_at,
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
  PERFORM "<schema>".mailwarden_pend_changes(v_changes);
  RETURN array_to_string(v_codes, '');
END
$$;

--
-- Name: mailwarden_merge_suppressions(text, jsonb); Type: FUNCTION; Schema: <schema>; Owner: -
--

CREATE FUNCTION <schema>.mailwarden_merge_suppressions(p_project_id text, p_rows jsonb) RETURNS text
    LANGUAGE plpgsql
    AS $$
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
      RETURN "<schema>".mailwarden_feed_suppressions(p_project_id, v_now, p_rows->'rows');
    END IF;
    p_rows := p_rows->'rows';
  END IF;

  -- 1. In key order (hash, stream), addresses without a row in their list get one and the others are
  --    locked (WHERE false updates nothing but still locks), so what each address had before the batch
  --    is known and stays so until commit: the rows' outcomes.
  WITH seen_events AS (
    SELECT (x.event->>'hash') COLLATE "C" AS hash, coalesce(x.event->>'stream', '') COLLATE "C" AS stream,
           ((x.event->>'hash') || coalesce(x.event->>'stream', '')) COLLATE "C" AS key, x.event, x.ord,
           (x.event->>'reason')::smallint AS reason, (x.event->>'created_at')::bigint AS created_at
    FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(event, ord)
    WHERE NOT coalesce((x.event->>'expires_at')::bigint <= v_now, false)
  ), seen AS (
    SELECT stream, hash, key,
           (array_agg(event->>'email' ORDER BY ord))[1] AS email,
           max(reason) AS reason,
           min(created_at) AS created_at,
           (array_agg(event ORDER BY reason DESC, coalesce((event->>'source_at')::bigint, 9223372036854775807),
                      coalesce(event->>'cause_event_id', '') COLLATE "C", coalesce(event->>'source', '~') COLLATE "C"))[1] AS cause
    FROM seen_events
    GROUP BY 1, 2, 3
  ), created AS (
    INSERT INTO "<schema>".suppressions AS s (project_id, stream, hash, email, reason, created_at,
                                        source, source_at, cause_provider, cause_message_id, cause_event_id, cause_diagnostic,
                                        expires_at, cause_rule, allowlisted)
    SELECT p_project_id, stream, hash, email, reason, created_at,
           cause->>'source', (cause->>'source_at')::bigint, cause->>'cause_provider', cause->>'cause_message_id',
           cause->>'cause_event_id', cause->>'cause_diagnostic',
           (cause->>'expires_at')::bigint, cause->>'cause_rule', (cause->>'allowlisted')::boolean
    FROM seen WHERE true ORDER BY hash, stream
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
  WITH seen_events AS (
    SELECT (x.event->>'hash') COLLATE "C" AS hash, coalesce(x.event->>'stream', '') COLLATE "C" AS stream,
           ((x.event->>'hash') || coalesce(x.event->>'stream', '')) COLLATE "C" AS key, x.event, x.ord,
           (x.event->>'reason')::smallint AS reason, (x.event->>'created_at')::bigint AS created_at
    FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(event, ord)
    WHERE NOT coalesce((x.event->>'expires_at')::bigint <= v_now, false)
  ), seen AS (
    SELECT stream, hash, key,
           (array_agg(event->>'email' ORDER BY ord))[1] AS email,
           max(reason) AS reason,
           min(created_at) AS created_at,
           (array_agg(event ORDER BY reason DESC, coalesce((event->>'source_at')::bigint, 9223372036854775807),
                      coalesce(event->>'cause_event_id', '') COLLATE "C", coalesce(event->>'source', '~') COLLATE "C"))[1] AS cause
    FROM seen_events
    GROUP BY 1, 2, 3
  ), before AS (
    SELECT e.key,
           (SELECT x.reason FROM "<schema>".suppressions x
            WHERE x.project_id = (SELECT p_project_id) AND x.stream = e.stream AND x.hash = e.hash
              AND NOT coalesce(x.expires_at <= v_now, false)) AS reason
    FROM seen e
    LEFT JOIN unnest(v_suppressed) AS c(key) ON c.key = e.key
    WHERE c.key IS NULL
  ), written AS (
    INSERT INTO "<schema>".suppressions AS s (project_id, stream, hash, email, reason, created_at,
                                        source, source_at, cause_provider, cause_message_id, cause_event_id, cause_diagnostic,
                                        expires_at, cause_rule, allowlisted)
    SELECT p_project_id, stream, hash, email, reason, created_at,
           cause->>'source', (cause->>'source_at')::bigint, cause->>'cause_provider', cause->>'cause_message_id',
           cause->>'cause_event_id', cause->>'cause_diagnostic',
           (cause->>'expires_at')::bigint, cause->>'cause_rule', (cause->>'allowlisted')::boolean
    FROM seen WHERE true AND key IN (SELECT key FROM before) ORDER BY hash, stream
    ON CONFLICT (project_id, hash, stream) DO UPDATE SET
      email = CASE WHEN s.expires_at <= v_now THEN excluded.email ELSE s.email END,
      reason = CASE WHEN s.expires_at <= v_now THEN excluded.reason ELSE greatest(s.reason, excluded.reason) END,
      created_at = CASE WHEN s.expires_at <= v_now THEN excluded.created_at ELSE least(s.created_at, excluded.created_at) END,
      source = CASE WHEN (coalesce(s.expires_at <= v_now, false) OR (excluded.reason > s.reason OR (excluded.reason = s.reason AND (
        coalesce(excluded.source_at, 9223372036854775807) < coalesce(s.source_at, 9223372036854775807)
        OR (coalesce(excluded.source_at, 9223372036854775807) = coalesce(s.source_at, 9223372036854775807)
            AND (coalesce(excluded.cause_event_id, '') COLLATE "C" < coalesce(s.cause_event_id, '') COLLATE "C"
                 OR (coalesce(excluded.cause_event_id, '') = coalesce(s.cause_event_id, '')
                     AND coalesce(excluded.source, '~') COLLATE "C" < coalesce(s.source, '~') COLLATE "C"))))))) THEN excluded.source ELSE s.source END,
      source_at = CASE WHEN (coalesce(s.expires_at <= v_now, false) OR (excluded.reason > s.reason OR (excluded.reason = s.reason AND (
        coalesce(excluded.source_at, 9223372036854775807) < coalesce(s.source_at, 9223372036854775807)
        OR (coalesce(excluded.source_at, 9223372036854775807) = coalesce(s.source_at, 9223372036854775807)
            AND (coalesce(excluded.cause_event_id, '') COLLATE "C" < coalesce(s.cause_event_id, '') COLLATE "C"
                 OR (coalesce(excluded.cause_event_id, '') = coalesce(s.cause_event_id, '')
                     AND coalesce(excluded.source, '~') COLLATE "C" < coalesce(s.source, '~') COLLATE "C"))))))) THEN excluded.source_at ELSE s.source_at END,
      cause_provider = CASE WHEN (coalesce(s.expires_at <= v_now, false) OR (excluded.reason > s.reason OR (excluded.reason = s.reason AND (
        coalesce(excluded.source_at, 9223372036854775807) < coalesce(s.source_at, 9223372036854775807)
        OR (coalesce(excluded.source_at, 9223372036854775807) = coalesce(s.source_at, 9223372036854775807)
            AND (coalesce(excluded.cause_event_id, '') COLLATE "C" < coalesce(s.cause_event_id, '') COLLATE "C"
                 OR (coalesce(excluded.cause_event_id, '') = coalesce(s.cause_event_id, '')
                     AND coalesce(excluded.source, '~') COLLATE "C" < coalesce(s.source, '~') COLLATE "C"))))))) THEN excluded.cause_provider ELSE s.cause_provider END,
      cause_message_id = CASE WHEN (coalesce(s.expires_at <= v_now, false) OR (excluded.reason > s.reason OR (excluded.reason = s.reason AND (
        coalesce(excluded.source_at, 9223372036854775807) < coalesce(s.source_at, 9223372036854775807)
        OR (coalesce(excluded.source_at, 9223372036854775807) = coalesce(s.source_at, 9223372036854775807)
            AND (coalesce(excluded.cause_event_id, '') COLLATE "C" < coalesce(s.cause_event_id, '') COLLATE "C"
                 OR (coalesce(excluded.cause_event_id, '') = coalesce(s.cause_event_id, '')
                     AND coalesce(excluded.source, '~') COLLATE "C" < coalesce(s.source, '~') COLLATE "C"))))))) THEN excluded.cause_message_id ELSE s.cause_message_id END,
      cause_event_id = CASE WHEN (coalesce(s.expires_at <= v_now, false) OR (excluded.reason > s.reason OR (excluded.reason = s.reason AND (
        coalesce(excluded.source_at, 9223372036854775807) < coalesce(s.source_at, 9223372036854775807)
        OR (coalesce(excluded.source_at, 9223372036854775807) = coalesce(s.source_at, 9223372036854775807)
            AND (coalesce(excluded.cause_event_id, '') COLLATE "C" < coalesce(s.cause_event_id, '') COLLATE "C"
                 OR (coalesce(excluded.cause_event_id, '') = coalesce(s.cause_event_id, '')
                     AND coalesce(excluded.source, '~') COLLATE "C" < coalesce(s.source, '~') COLLATE "C"))))))) THEN excluded.cause_event_id ELSE s.cause_event_id END,
      cause_diagnostic = CASE WHEN (coalesce(s.expires_at <= v_now, false) OR (excluded.reason > s.reason OR (excluded.reason = s.reason AND (
        coalesce(excluded.source_at, 9223372036854775807) < coalesce(s.source_at, 9223372036854775807)
        OR (coalesce(excluded.source_at, 9223372036854775807) = coalesce(s.source_at, 9223372036854775807)
            AND (coalesce(excluded.cause_event_id, '') COLLATE "C" < coalesce(s.cause_event_id, '') COLLATE "C"
                 OR (coalesce(excluded.cause_event_id, '') = coalesce(s.cause_event_id, '')
                     AND coalesce(excluded.source, '~') COLLATE "C" < coalesce(s.source, '~') COLLATE "C"))))))) THEN excluded.cause_diagnostic ELSE s.cause_diagnostic END,
      expires_at = CASE WHEN (coalesce(s.expires_at <= v_now, false) OR (excluded.reason > s.reason OR (excluded.reason = s.reason AND (
        coalesce(excluded.source_at, 9223372036854775807) < coalesce(s.source_at, 9223372036854775807)
        OR (coalesce(excluded.source_at, 9223372036854775807) = coalesce(s.source_at, 9223372036854775807)
            AND (coalesce(excluded.cause_event_id, '') COLLATE "C" < coalesce(s.cause_event_id, '') COLLATE "C"
                 OR (coalesce(excluded.cause_event_id, '') = coalesce(s.cause_event_id, '')
                     AND coalesce(excluded.source, '~') COLLATE "C" < coalesce(s.source, '~') COLLATE "C"))))))) THEN excluded.expires_at ELSE s.expires_at END,
      cause_rule = CASE WHEN (coalesce(s.expires_at <= v_now, false) OR (excluded.reason > s.reason OR (excluded.reason = s.reason AND (
        coalesce(excluded.source_at, 9223372036854775807) < coalesce(s.source_at, 9223372036854775807)
        OR (coalesce(excluded.source_at, 9223372036854775807) = coalesce(s.source_at, 9223372036854775807)
            AND (coalesce(excluded.cause_event_id, '') COLLATE "C" < coalesce(s.cause_event_id, '') COLLATE "C"
                 OR (coalesce(excluded.cause_event_id, '') = coalesce(s.cause_event_id, '')
                     AND coalesce(excluded.source, '~') COLLATE "C" < coalesce(s.source, '~') COLLATE "C"))))))) THEN excluded.cause_rule ELSE s.cause_rule END,
      allowlisted = CASE WHEN (coalesce(s.expires_at <= v_now, false) OR (excluded.reason > s.reason OR (excluded.reason = s.reason AND (
        coalesce(excluded.source_at, 9223372036854775807) < coalesce(s.source_at, 9223372036854775807)
        OR (coalesce(excluded.source_at, 9223372036854775807) = coalesce(s.source_at, 9223372036854775807)
            AND (coalesce(excluded.cause_event_id, '') COLLATE "C" < coalesce(s.cause_event_id, '') COLLATE "C"
                 OR (coalesce(excluded.cause_event_id, '') = coalesce(s.cause_event_id, '')
                     AND coalesce(excluded.source, '~') COLLATE "C" < coalesce(s.source, '~') COLLATE "C"))))))) THEN excluded.allowlisted ELSE s.allowlisted END
    WHERE excluded.created_at < s.created_at OR (coalesce(s.expires_at <= v_now, false) OR (excluded.reason > s.reason OR (excluded.reason = s.reason AND (
        coalesce(excluded.source_at, 9223372036854775807) < coalesce(s.source_at, 9223372036854775807)
        OR (coalesce(excluded.source_at, 9223372036854775807) = coalesce(s.source_at, 9223372036854775807)
            AND (coalesce(excluded.cause_event_id, '') COLLATE "C" < coalesce(s.cause_event_id, '') COLLATE "C"
                 OR (coalesce(excluded.cause_event_id, '') = coalesce(s.cause_event_id, '')
                     AND coalesce(excluded.source, '~') COLLATE "C" < coalesce(s.source, '~') COLLATE "C")))))))
    RETURNING s.hash
  )
  -- An invalidation names hashes, whatever their lists: each once.
  SELECT (SELECT array_agg(DISTINCT hash) FROM (SELECT hash FROM written UNION ALL SELECT left(key, 64) FROM unnest(v_suppressed) AS c(key)) h),
         (SELECT coalesce(jsonb_object_agg(key, reason) FILTER (WHERE reason IS NOT NULL), '{}') FROM before)
  INTO v_hashes, v_before;

  -- 3. Delivered to listeners on commit; payloads stay under NOTIFY's 8000-byte limit.
  IF v_hashes IS NOT NULL THEN
    v_chunk := greatest(1, (7900 - octet_length(
      json_build_object('schema', '<schema>', 'projectId', p_project_id, 'hashes', '[]'::json)::text)) / 67);
    FOR i IN 1 .. cardinality(v_hashes) BY v_chunk LOOP
      PERFORM pg_notify('mailwarden_invalidations', json_build_object(
        'schema', '<schema>', 'projectId', p_project_id, 'hashes', v_hashes[i : i + v_chunk - 1])::text);
    END LOOP;
  END IF;

  -- 4. Per row, as if merged one by one (core's eventOutcomeOfCode reads the codes): the first row of
  --    an address that had no suppression in its list created it ('s'); a row whose reason is stronger
  --    than all the address had in that list before it (the stored row's, the batch's earlier rows')
  --    raised it from that (the rank it had); any other 'a', a row left out as expired too.
  RETURN (
    WITH seen_events AS (
    SELECT (x.event->>'hash') COLLATE "C" AS hash, coalesce(x.event->>'stream', '') COLLATE "C" AS stream,
           ((x.event->>'hash') || coalesce(x.event->>'stream', '')) COLLATE "C" AS key, x.event, x.ord,
           (x.event->>'reason')::smallint AS reason, (x.event->>'created_at')::bigint AS created_at
    FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(event, ord)
    WHERE NOT coalesce((x.event->>'expires_at')::bigint <= v_now, false)
  ), seen AS (
    SELECT stream, hash, key,
           (array_agg(event->>'email' ORDER BY ord))[1] AS email,
           max(reason) AS reason,
           min(created_at) AS created_at,
           (array_agg(event ORDER BY reason DESC, coalesce((event->>'source_at')::bigint, 9223372036854775807),
                      coalesce(event->>'cause_event_id', '') COLLATE "C", coalesce(event->>'source', '~') COLLATE "C"))[1] AS cause
    FROM seen_events
    GROUP BY 1, 2, 3
  ), ranked AS (
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
$$;

--
-- Name: mailwarden_pend_changes(jsonb); Type: FUNCTION; Schema: <schema>; Owner: -
--

CREATE FUNCTION <schema>.mailwarden_pend_changes(p_changes jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
  IF jsonb_array_length(p_changes) > 0 THEN
    PERFORM set_config('mailwarden.changes',
      (coalesce(nullif(current_setting('mailwarden.changes', true), ''), '[]')::jsonb || p_changes)::text, true);
  END IF;
END
$$;

--
-- Name: mailwarden_soft_bounce(text, jsonb, bigint, jsonb, boolean); Type: FUNCTION; Schema: <schema>; Owner: -
--

CREATE FUNCTION <schema>.mailwarden_soft_bounce(p_project_id text, p_rule jsonb, p_now bigint, p_input jsonb, p_allowlisted boolean) RETURNS text
    LANGUAGE plpgsql
    AS $$
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
  v_before "<schema>".suppressions;
  v_after "<schema>".suppressions;
BEGIN
  -- 1. The history, without what is older than the horizon.
  SELECT array(SELECT b FROM jsonb_array_elements(h.bounces) WITH ORDINALITY AS x(b, n)
               WHERE NOT coalesce((b->>0)::bigint < v_horizon, false) ORDER BY n),
         CASE WHEN NOT coalesce(h.last_delivery < v_horizon, false) THEN h.last_delivery END
  INTO v_bounces, v_last
  FROM "<schema>".soft_bounces h WHERE h.project_id = p_project_id AND h.hash = v_hash;
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
    FROM "<schema>".suppressions s
    WHERE s.project_id = p_project_id AND s.hash = v_hash AND s.stream = '' AND NOT coalesce(s.expires_at <= p_now, false);
    -- 3. Nor kept (v_index NULL): after the address was already suppressed project-wide for bouncing or
    --    complaining (that suppression cannot move); or a bounce of the same message is kept at or
    --    before it (a message counts once, at its earliest).
    -- 4. Else kept, in (at, eventId) order; a later bounce of the same message gives way to it.
    v_index := CASE WHEN coalesce(v_listed_reason >= 2 AND v_listed_at < v_at, false) THEN NULL ELSE 0 END;
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
            SELECT * INTO v_before FROM "<schema>".suppressions WHERE project_id = (SELECT p_project_id) AND hash = v_hash AND stream = '' FOR UPDATE;
          END IF;
          UPDATE "<schema>".suppressions SET cause_rule = v_rule, expires_at = v_expires
          WHERE project_id = p_project_id AND hash = v_hash AND stream = '' AND cause_rule IS NOT NULL
            AND source_at = v_end_at AND cause_event_id = v_end->>1 AND NOT coalesce(expires_at <= p_now, false);
          v_replaced := FOUND;
          IF v_replaced AND v_feed IS NOT NULL THEN
            SELECT * INTO v_after FROM "<schema>".suppressions WHERE project_id = (SELECT p_project_id) AND hash = v_hash AND stream = '';
            IF v_after IS DISTINCT FROM v_before THEN
              PERFORM "<schema>".mailwarden_pend_changes(jsonb_build_array(jsonb_build_object('o', v_feed, 'p', 2, 'actor', 'rule:soft_bounces',
                'kind', 'suppression.updated', 'at', coalesce(p_now, v_after.created_at), 'data', jsonb_build_object(
                  'record', to_jsonb(v_after) - 'project_id', 'previous', to_jsonb(v_before) - 'project_id'))));
            END IF;
          END IF;
        END IF;
        IF v_replaced THEN
          v_code := 'a';
          PERFORM pg_notify('mailwarden_invalidations', json_build_object(
            'schema', '<schema>', 'projectId', p_project_id, 'hashes', json_build_array(v_hash))::text);
        ELSE
          v_cause := (v_end->>3)::jsonb;
          -- Step 3 read no suppression: most often the address has no row at all, and the rule's row is
          -- inserted as the join would insert it ('s', notified). A row there (expired, or made since
          -- step 3 read it) is left to the join.
          IF v_listed_reason IS NULL THEN
            INSERT INTO "<schema>".suppressions (project_id, stream, hash, email, reason, created_at,
                                                source, source_at, cause_provider, cause_message_id, cause_event_id, cause_diagnostic,
                                                expires_at, cause_rule)
            VALUES (p_project_id, '', v_hash, p_input->>'email', 2, v_end_at,
                    'webhook', v_end_at, v_cause->>0, v_cause->>1, v_end->>1, v_cause->>4, v_expires, v_rule)
            ON CONFLICT (project_id, hash, stream) DO NOTHING
            RETURNING 's' INTO v_code;
          END IF;
          IF v_code IS NOT NULL AND v_feed IS NOT NULL THEN
            SELECT * INTO v_after FROM "<schema>".suppressions WHERE project_id = (SELECT p_project_id) AND hash = v_hash AND stream = '';
            PERFORM "<schema>".mailwarden_pend_changes(jsonb_build_array(jsonb_build_object('o', v_feed, 'p', 2, 'actor', 'rule:soft_bounces',
              'kind', 'suppression.added', 'at', coalesce(p_now, v_after.created_at),
              'data', jsonb_build_object('record', to_jsonb(v_after) - 'project_id'))));
          END IF;
          IF v_code IS NOT NULL THEN
            PERFORM pg_notify('mailwarden_invalidations', json_build_object(
              'schema', '<schema>', 'projectId', p_project_id, 'hashes', json_build_array(v_hash))::text);
          ELSE
            v_code := "<schema>".mailwarden_merge_suppressions(p_project_id, jsonb_strip_nulls(jsonb_build_object('now', p_now,
              'feed', CASE WHEN v_feed IS NOT NULL THEN true END, 'rows', jsonb_build_array(
              jsonb_strip_nulls(jsonb_build_object(
                'hash', v_hash, 'email', p_input->'email', 'reason', 2, 'created_at', v_end->0,
                'source', 'webhook', 'source_at', v_end->0, 'cause_event_id', v_end->1,
                'cause_provider', v_cause->0, 'cause_message_id', v_cause->1, 'cause_diagnostic', v_cause->4,
                'expires_at', v_expires, 'cause_rule', v_rule, 'o', v_feed, 'p', CASE WHEN v_feed IS NOT NULL THEN 2 END,
                'actor', CASE WHEN v_feed IS NOT NULL THEN 'rule:soft_bounces' END))))));
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
    DELETE FROM "<schema>".soft_bounces WHERE project_id = p_project_id AND hash = v_hash;
  ELSE
    INSERT INTO "<schema>".soft_bounces AS h (project_id, hash, bounces, last_delivery, forget_at)
    VALUES (p_project_id, v_hash, to_jsonb(v_bounces), v_last,
            greatest(v_last, (SELECT max((b->>0)::bigint) FROM unnest(v_bounces) AS b)) + v_keep)
    ON CONFLICT (project_id, hash) DO UPDATE SET
      bounces = excluded.bounces, last_delivery = excluded.last_delivery, forget_at = excluded.forget_at;
  END IF;
  RETURN v_code;
END
$$;

--
-- Name: mailwarden_sync_api_keys(text, jsonb); Type: FUNCTION; Schema: <schema>; Owner: -
--

CREATE FUNCTION <schema>.mailwarden_sync_api_keys(p_project_id text, p_sync jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
DECLARE
  v_changes jsonb;
  v_last bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('<schema>' || ':api_keys:' || p_project_id, 0));
  WITH given AS (
    SELECT (k->>'name') COLLATE "C" AS name, array(SELECT jsonb_array_elements_text(k->'scopes')) AS scopes, k->>'version' AS version
    FROM jsonb_array_elements(p_sync->'keys') AS x(k)
  ), diff AS (
    SELECT coalesce(g.name, a.name) AS name, g.scopes, g.version, a.scopes AS old_scopes,
           CASE WHEN a.name IS NULL THEN 'key.added' WHEN g.name IS NULL THEN 'key.removed' ELSE 'key.updated' END AS kind
    FROM given g FULL JOIN (SELECT name, scopes, version FROM "<schema>".api_keys WHERE project_id = p_project_id) a ON a.name = g.name
    WHERE g.name IS NULL OR a.name IS NULL OR g.scopes <> a.scopes OR g.version <> a.version
  ), removed AS (
    DELETE FROM "<schema>".api_keys a USING diff d WHERE a.project_id = p_project_id AND a.name = d.name AND d.kind = 'key.removed'
  ), written AS (
    INSERT INTO "<schema>".api_keys AS a (project_id, name, scopes, version)
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
    v_last := "<schema>".mailwarden_append_changes(p_project_id, v_changes);
  END IF;
  RETURN jsonb_build_object('changes', v_changes, 'last', v_last);
END
$$;

--
-- Name: alert_window_slots; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.alert_window_slots (
    project_id text NOT NULL COLLATE pg_catalog."C",
    scope text NOT NULL COLLATE pg_catalog."C",
    slot integer NOT NULL,
    message_key text NOT NULL COLLATE pg_catalog."C",
    flags smallint NOT NULL
);

--
-- Name: alert_windows; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.alert_windows (
    project_id text NOT NULL COLLATE pg_catalog."C",
    scope text NOT NULL COLLATE pg_catalog."C",
    size integer NOT NULL,
    messages integer NOT NULL,
    bounced integer NOT NULL,
    complained integer NOT NULL,
    bounce_firing boolean NOT NULL,
    complaint_firing boolean NOT NULL,
    head integer NOT NULL
);

--
-- Name: allowlist; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.allowlist (
    project_id text NOT NULL COLLATE pg_catalog."C",
    key text NOT NULL COLLATE pg_catalog."C",
    entry text NOT NULL COLLATE pg_catalog."C",
    created_at bigint NOT NULL
);

--
-- Name: api_keys; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.api_keys (
    project_id text NOT NULL COLLATE pg_catalog."C",
    name text NOT NULL COLLATE pg_catalog."C",
    scopes text[] NOT NULL,
    version text NOT NULL COLLATE pg_catalog."C"
);

--
-- Name: change_counters; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.change_counters (
    project_id text NOT NULL COLLATE pg_catalog."C",
    last_seq bigint NOT NULL,
    trimmed bigint DEFAULT 0 NOT NULL
);

--
-- Name: changes; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.changes (
    project_id text NOT NULL COLLATE pg_catalog."C",
    seq bigint NOT NULL,
    at bigint NOT NULL,
    kind text NOT NULL COLLATE pg_catalog."C",
    data jsonb NOT NULL,
    actor text COLLATE pg_catalog."C"
);

--
-- Name: event_keys; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.event_keys (
    project_id text NOT NULL COLLATE pg_catalog."C",
    key text NOT NULL COLLATE pg_catalog."C",
    seen_at bigint NOT NULL
);

--
-- Name: mailwarden_migrations; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.mailwarden_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: messages; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.messages (
    project_id text NOT NULL COLLATE pg_catalog."C",
    key text NOT NULL COLLATE pg_catalog."C",
    provider text NOT NULL,
    message_id text NOT NULL,
    recipient text NOT NULL,
    tracking_id text COLLATE pg_catalog."C",
    facts integer NOT NULL,
    status smallint GENERATED ALWAYS AS (
CASE
    WHEN ((facts & 32) <> 0) THEN 0
    WHEN ((facts & 16) <> 0) THEN 1
    WHEN ((facts & 64) <> 0) THEN 2
    WHEN ((facts & 4) <> 0) THEN 3
    WHEN ((facts & 8) <> 0) THEN 4
    WHEN ((facts & 2) <> 0) THEN 5
    ELSE 6
END) STORED NOT NULL,
    first_event_at bigint NOT NULL,
    last_event_at bigint NOT NULL,
    fact_times bigint[],
    stream text COLLATE pg_catalog."C"
);

--
-- Name: outbound_endpoints; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.outbound_endpoints (
    project_id text NOT NULL COLLATE pg_catalog."C",
    endpoint text NOT NULL COLLATE pg_catalog."C",
    cursor bigint NOT NULL,
    failures integer NOT NULL,
    failing_since bigint,
    next_attempt_at bigint NOT NULL,
    paused_at bigint,
    last_error text,
    last_success_at bigint,
    owner text NOT NULL,
    lease_until bigint NOT NULL
);

--
-- Name: paused_streams; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.paused_streams (
    project_id text NOT NULL COLLATE pg_catalog."C",
    stream text NOT NULL COLLATE pg_catalog."C",
    paused_at bigint NOT NULL,
    cause text NOT NULL
);

--
-- Name: rate_limits; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE UNLOGGED TABLE <schema>.rate_limits (
    bucket text NOT NULL COLLATE pg_catalog."C",
    window_ms bigint NOT NULL,
    window_end bigint NOT NULL,
    count integer NOT NULL
);

--
-- Name: soft_bounces; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.soft_bounces (
    project_id text NOT NULL COLLATE pg_catalog."C",
    hash text NOT NULL COLLATE pg_catalog."C",
    bounces jsonb NOT NULL,
    last_delivery bigint,
    forget_at bigint NOT NULL
);

--
-- Name: stat_buckets; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.stat_buckets (
    project_id text NOT NULL COLLATE pg_catalog."C",
    tracking_id text NOT NULL COLLATE pg_catalog."C",
    hour bigint NOT NULL,
    delivered integer NOT NULL,
    hard_bounced integer NOT NULL,
    soft_bounced integer NOT NULL,
    complained integer NOT NULL,
    opened integer NOT NULL,
    clicked integer NOT NULL,
    unsubscribed integer NOT NULL
);

--
-- Name: suppressions; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.suppressions (
    project_id text NOT NULL COLLATE pg_catalog."C",
    hash text NOT NULL COLLATE pg_catalog."C",
    email text NOT NULL,
    reason smallint NOT NULL,
    created_at bigint NOT NULL,
    source text,
    source_at bigint,
    cause_provider text,
    cause_message_id text,
    cause_event_id text,
    cause_diagnostic text,
    stream text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    expires_at bigint,
    cause_rule text,
    allowlisted boolean,
    CONSTRAINT suppressions_hash_check CHECK (((octet_length(hash) = 64) AND (hash !~ '[^0-9a-f]'::text))),
    CONSTRAINT suppressions_reason_check CHECK (((reason >= 1) AND (reason <= 3)))
);

--
-- Name: timeline_entries; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.timeline_entries (
    project_id text NOT NULL COLLATE pg_catalog."C",
    message_key text NOT NULL COLLATE pg_catalog."C",
    occurred_at bigint NOT NULL,
    id text NOT NULL COLLATE pg_catalog."C",
    entry jsonb NOT NULL
);

--
-- Name: tracking_ids; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.tracking_ids (
    project_id text NOT NULL COLLATE pg_catalog."C",
    tracking_id text NOT NULL COLLATE pg_catalog."C",
    search_key text NOT NULL COLLATE pg_catalog."C",
    messages integer NOT NULL,
    delivered integer NOT NULL,
    bounced integer NOT NULL,
    complained integer NOT NULL,
    last_event_at bigint NOT NULL,
    opened integer DEFAULT 0 NOT NULL,
    clicked integer DEFAULT 0 NOT NULL,
    unsubscribed integer DEFAULT 0 NOT NULL
);

--
-- Name: webhook_tokens; Type: TABLE; Schema: <schema>; Owner: -
--

CREATE TABLE <schema>.webhook_tokens (
    project_id text NOT NULL COLLATE pg_catalog."C",
    token text NOT NULL COLLATE pg_catalog."C",
    digest text NOT NULL COLLATE pg_catalog."C",
    expires_at bigint NOT NULL
);

--
-- Name: alert_window_slots alert_window_slots_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.alert_window_slots
    ADD CONSTRAINT alert_window_slots_pkey PRIMARY KEY (project_id, scope, slot);

--
-- Name: alert_windows alert_windows_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.alert_windows
    ADD CONSTRAINT alert_windows_pkey PRIMARY KEY (project_id, scope);

--
-- Name: allowlist allowlist_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.allowlist
    ADD CONSTRAINT allowlist_pkey PRIMARY KEY (project_id, key);

--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (project_id, name);

--
-- Name: change_counters change_counters_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.change_counters
    ADD CONSTRAINT change_counters_pkey PRIMARY KEY (project_id);

--
-- Name: changes changes_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.changes
    ADD CONSTRAINT changes_pkey PRIMARY KEY (project_id, seq);

--
-- Name: event_keys event_keys_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.event_keys
    ADD CONSTRAINT event_keys_pkey PRIMARY KEY (project_id, key);

--
-- Name: mailwarden_migrations mailwarden_migrations_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.mailwarden_migrations
    ADD CONSTRAINT mailwarden_migrations_pkey PRIMARY KEY (version);

--
-- Name: messages messages_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.messages
    ADD CONSTRAINT messages_pkey PRIMARY KEY (project_id, key);

--
-- Name: outbound_endpoints outbound_endpoints_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.outbound_endpoints
    ADD CONSTRAINT outbound_endpoints_pkey PRIMARY KEY (project_id, endpoint);

--
-- Name: paused_streams paused_streams_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.paused_streams
    ADD CONSTRAINT paused_streams_pkey PRIMARY KEY (project_id, stream);

--
-- Name: rate_limits rate_limits_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.rate_limits
    ADD CONSTRAINT rate_limits_pkey PRIMARY KEY (bucket, window_ms, window_end);

--
-- Name: soft_bounces soft_bounces_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.soft_bounces
    ADD CONSTRAINT soft_bounces_pkey PRIMARY KEY (project_id, hash);

--
-- Name: stat_buckets stat_buckets_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.stat_buckets
    ADD CONSTRAINT stat_buckets_pkey PRIMARY KEY (project_id, tracking_id, hour);

--
-- Name: suppressions suppressions_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.suppressions
    ADD CONSTRAINT suppressions_pkey PRIMARY KEY (project_id, hash, stream);

--
-- Name: timeline_entries timeline_entries_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.timeline_entries
    ADD CONSTRAINT timeline_entries_pkey PRIMARY KEY (project_id, message_key, occurred_at, id);

--
-- Name: tracking_ids tracking_ids_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.tracking_ids
    ADD CONSTRAINT tracking_ids_pkey PRIMARY KEY (project_id, tracking_id);

--
-- Name: webhook_tokens webhook_tokens_pkey; Type: CONSTRAINT; Schema: <schema>; Owner: -
--

ALTER TABLE ONLY <schema>.webhook_tokens
    ADD CONSTRAINT webhook_tokens_pkey PRIMARY KEY (project_id, token);

--
-- Name: alert_window_slots_by_message; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX alert_window_slots_by_message ON <schema>.alert_window_slots USING btree (project_id, scope, message_key);

--
-- Name: allowlist_by_entry; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX allowlist_by_entry ON <schema>.allowlist USING btree (project_id, entry);

--
-- Name: event_keys_by_seen_at; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX event_keys_by_seen_at ON <schema>.event_keys USING btree (project_id, seen_at);

--
-- Name: messages_by_last_event_at; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX messages_by_last_event_at ON <schema>.messages USING btree (project_id, last_event_at);

--
-- Name: messages_by_provider; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX messages_by_provider ON <schema>.messages USING btree (project_id, provider, ((- first_event_at)), key);

--
-- Name: messages_by_recipient; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX messages_by_recipient ON <schema>.messages USING btree (project_id, recipient, ((- first_event_at)), key);

--
-- Name: messages_by_recipient_domain; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX messages_by_recipient_domain ON <schema>.messages USING btree (project_id, substr(recipient, (strpos(recipient, '@'::text) + 1)), ((- first_event_at)), key);

--
-- Name: messages_by_recipient_prefix; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX messages_by_recipient_prefix ON <schema>.messages USING btree (project_id, recipient text_pattern_ops);

--
-- Name: messages_by_status; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX messages_by_status ON <schema>.messages USING btree (project_id, status, ((- first_event_at)), key);

--
-- Name: messages_by_stream; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX messages_by_stream ON <schema>.messages USING btree (project_id, stream, ((- first_event_at)), key) WHERE (stream IS NOT NULL);

--
-- Name: messages_by_tracking_id; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX messages_by_tracking_id ON <schema>.messages USING btree (project_id, tracking_id, ((- first_event_at)), key) WHERE (tracking_id IS NOT NULL);

--
-- Name: messages_newest_first; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX messages_newest_first ON <schema>.messages USING btree (project_id, ((- first_event_at)), key);

--
-- Name: soft_bounces_by_forget_at; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX soft_bounces_by_forget_at ON <schema>.soft_bounces USING btree (project_id, forget_at);

--
-- Name: suppressions_by_email_prefix; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX suppressions_by_email_prefix ON <schema>.suppressions USING btree (project_id, stream, email text_pattern_ops);

--
-- Name: suppressions_by_expires_at; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX suppressions_by_expires_at ON <schema>.suppressions USING btree (project_id, expires_at) WHERE (expires_at IS NOT NULL);

--
-- Name: suppressions_by_reason; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX suppressions_by_reason ON <schema>.suppressions USING btree (project_id, stream, reason, ((- created_at)), hash);

--
-- Name: suppressions_expiring; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX suppressions_expiring ON <schema>.suppressions USING btree (project_id, stream, ((- created_at)), hash) WHERE (expires_at IS NOT NULL);

--
-- Name: suppressions_newest_first; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX suppressions_newest_first ON <schema>.suppressions USING btree (project_id, stream, ((- created_at)), hash);

--
-- Name: tracking_ids_search; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX tracking_ids_search ON <schema>.tracking_ids USING gin (project_id, search_key public.gin_trgm_ops) WITH (fastupdate=off);

--
-- Name: webhook_tokens_by_expires_at; Type: INDEX; Schema: <schema>; Owner: -
--

CREATE INDEX webhook_tokens_by_expires_at ON <schema>.webhook_tokens USING btree (project_id, expires_at);

--
-- Name: messages timelines_follow_messages; Type: TRIGGER; Schema: <schema>; Owner: -
--

CREATE TRIGGER timelines_follow_messages AFTER DELETE ON <schema>.messages REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION <schema>.mailwarden_delete_timelines();
