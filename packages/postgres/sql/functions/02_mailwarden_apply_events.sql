-- The store's `applyEvents`: one call per batch, one transaction. Set-based, with the semantics of
-- applying each event in order: the first occurrence of a key not seen before is applied, the rest are
-- duplicates; messages, counters and suppressions are joins, so their end state does not depend on the
-- order. Every writer locks rows table by table (event_keys, messages, tracking_ids, suppressions), each
-- in key order, so concurrent batches wait for each other instead of deadlocking.
--
-- p_events: the batch as a JSON object of columns, as `toEventColumns` (postgres-store.ts) sends them:
-- one JSON array per column, the n-th element of each belonging to the n-th event, JSON null where an
-- event has no such part; a column no event has is left out. Or the previous release's array of event
-- objects (step 0). Each statement reads the batch's events as rows (`ord` from 1, in event order) with
-- only the columns it uses: ROWS FROM zips the columns' arrays side by side, each element read once.
-- Text columns that are keys compare as bytes (COLLATE "C"). Beside the columns, this release's object
-- may hold `now` (the caller's clock, for expiry) and `rule` (the project's soft-bounce rule, which reads
-- the `rule_input` column; mailwarden_soft_bounce), `feed` (the store keeps a change feed: step 8) and
-- `alerts` (the project's alert rule: step 7). Without `feed` and `alerts`, it runs what it ran before.
-- With the feed, the `actor` column (sent only when an event has one) is the actor of each event's
-- suppression and status changes; the rules' changes carry the rules' actors (core's ruleActors).
--
-- Returns one character per event, as core's `eventOutcomeOfCode` reads it: 'd' duplicate, 'a' applied,
-- 's' suppressed (created the address's suppression), or the rank of the reason the event upgraded.
-- Core's numbers (the counters' masks from counterFacts, the stat facts, the timeline's cap) are filled
-- in by name: nothing here repeats them.

CREATE OR REPLACE FUNCTION {{schema}}.mailwarden_apply_events(p_project_id text, p_events jsonb) RETURNS text
LANGUAGE plpgsql AS $fn$
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
    INSERT INTO {{schema}}.event_keys (project_id, key, seen_at)
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
           {{> seen_fact_times}} AS fact_times
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
    INSERT INTO {{schema}}.messages AS m
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
                         FROM {{schema}}.messages m WHERE c.key IS NULL AND m.project_id = p_project_id AND m.key = u.message_key OFFSET 0) m ON true
    ), after AS (
      -- The includes read `facts`: the message's after the event here, before it in `x` below.
      SELECT y.*, {{> message_status}} AS to_status, {{> alert_flags}} AS to_flags FROM merged y
    ), x AS (
      SELECT y.*, {{> message_status}} AS from_status, {{> alert_flags}} AS from_flags
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
           {{> seen_fact_times}} AS fact_times
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
    JOIN {{schema}}.messages m ON m.project_id = p_project_id AND m.key = e.key
  ), merged AS (
    UPDATE {{schema}}.messages m SET
      tracking_id = least(k.tracking_id, s.tracking_id),
      stream = least(k.stream, s.stream),
      facts = k.facts | s.facts,
      first_event_at = least(k.first_event_at, s.first_event_at),
      last_event_at = greatest(k.last_event_at, s.last_event_at),
      fact_times = {{> merged_fact_times}}
    FROM known k JOIN seen s ON s.key = k.key
    WHERE m.project_id = p_project_id AND m.key = k.key
      AND (least(k.tracking_id, s.tracking_id) IS DISTINCT FROM k.tracking_id OR k.facts | s.facts <> k.facts
           OR least(k.stream, s.stream) IS DISTINCT FROM k.stream
           OR s.first_event_at < k.first_event_at OR s.last_event_at > k.last_event_at
           OR {{> merged_fact_times}} IS DISTINCT FROM k.fact_times)
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
    SELECT scope, t / {{HOUR_MS}} - (t % {{HOUR_MS}} < 0)::integer AS hour,
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
           -(before_facts & {{counterFacts.delivered}} <> 0)::integer AS delivered,
           -(before_facts & {{counterFacts.bounced}} <> 0)::integer AS bounced,
           -(before_facts & {{counterFacts.complained}} <> 0)::integer AS complained,
           -(before_facts & {{counterFacts.opened}} <> 0)::integer AS opened,
           -(before_facts & {{counterFacts.clicked}} <> 0)::integer AS clicked,
           -(before_facts & {{counterFacts.unsubscribed}} <> 0)::integer AS unsubscribed,
           NULL::bigint AS raise, true AS recompute
    FROM changes WHERE before_id IS NOT NULL AND before_id IS DISTINCT FROM tracking_id
    UNION ALL
    -- Counters move only when a fact flips from false to true.
    SELECT tracking_id, (before_id IS DISTINCT FROM tracking_id)::integer,
           (facts & {{counterFacts.delivered}} <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & {{counterFacts.delivered}} <> 0)::integer ELSE 0 END,
           (facts & {{counterFacts.bounced}} <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & {{counterFacts.bounced}} <> 0)::integer ELSE 0 END,
           (facts & {{counterFacts.complained}} <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & {{counterFacts.complained}} <> 0)::integer ELSE 0 END,
           (facts & {{counterFacts.opened}} <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & {{counterFacts.opened}} <> 0)::integer ELSE 0 END,
           (facts & {{counterFacts.clicked}} <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & {{counterFacts.clicked}} <> 0)::integer ELSE 0 END,
           (facts & {{counterFacts.unsubscribed}} <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & {{counterFacts.unsubscribed}} <> 0)::integer ELSE 0 END,
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
    INSERT INTO {{schema}}.tracking_ids AS t
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
    DELETE FROM {{schema}}.tracking_ids WHERE project_id = p_project_id AND tracking_id = ANY (v_emptied);
  END IF;
  IF v_recompute IS NOT NULL THEN
    -- From the messages still there; when retention purged them all, the row keeps its time.
    UPDATE {{schema}}.tracking_ids t SET last_event_at = coalesce((
      SELECT max(m.last_event_at) FROM {{schema}}.messages m
      WHERE m.project_id = p_project_id AND m.tracking_id = t.tracking_id
    ), t.last_event_at)
    WHERE t.project_id = p_project_id AND t.tracking_id = ANY (v_recompute);
  END IF;

  -- 4a. Counts over time: the hour buckets step 3 moved, in (scope, hour) order after the tracking-ID
  --     rows. A bucket is one hot row per project and hour: concurrent batches of a project queue on it.
  IF v_stats IS NOT NULL THEN
    INSERT INTO {{schema}}.stat_buckets AS b (project_id, tracking_id, hour, delivered, hard_bounced, soft_bounced, complained, opened, clicked, unsubscribed)
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
    INSERT INTO {{schema}}.timeline_entries (project_id, message_key, occurred_at, id, entry)
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
  WHERE c.key IS NULL OR a.n > {{TIMELINE_CAP}};
  IF v_timelines IS NOT NULL THEN
    DELETE FROM {{schema}}.timeline_entries t USING (
      SELECT message_key, occurred_at, id FROM (
        SELECT message_key, occurred_at, id,
               row_number() OVER (PARTITION BY message_key ORDER BY occurred_at, id) AS n,
               count(*) OVER (PARTITION BY message_key) AS total
        FROM {{schema}}.timeline_entries WHERE project_id = p_project_id AND message_key = ANY (v_timelines)
      ) r WHERE r.total > {{TIMELINE_CAP}} AND r.n > {{TIMELINE_LIMITS.first}} AND r.n <= r.total - {{TIMELINE_LIMITS.latest}}
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
        SELECT FROM {{schema}}.allowlist a WHERE a.project_id = p_project_id
          AND a.key IN (e.suppression->>'hash', '@' || substring(e.suppression->>'email' FROM '[^@]*$'))));
    IF v_suppressions IS NOT NULL THEN
      v_codes := {{schema}}.mailwarden_merge_suppressions(p_project_id, CASE
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
      INSERT INTO {{schema}}.soft_bounces AS h (project_id, hash, bounces, last_delivery, forget_at)
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
               SELECT FROM {{schema}}.allowlist a WHERE a.project_id = p_project_id
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
        v_codes := {{schema}}.mailwarden_merge_suppressions(p_project_id, CASE
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
      v_code := {{schema}}.mailwarden_soft_bounce(p_project_id, CASE WHEN v_feed THEN v_rule || jsonb_build_object('feed', v_event.ord) ELSE v_rule END,
        v_now, v_event.rule_input, v_event.allowlisted);
      -- 6a. An event that carried no suppression reports the rule's.
      IF v_code IS NOT NULL AND v_event.suppression IS NULL THEN
        v_event_codes[v_event.ord] := v_code;
      END IF;
    END LOOP;
    IF cardinality(v_pending_ords) > 0 THEN
      v_codes := {{schema}}.mailwarden_merge_suppressions(p_project_id, CASE
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
    v_changes := v_changes || {{schema}}.mailwarden_apply_alerts(p_project_id, v_alerts, v_step_o, v_step_key, v_step_tid, v_step_entered,
      v_step_flags, v_step_gained, v_step_at, v_feed);
  END IF;

  -- 8. The feed: per event, its suppression changes (pended by mailwarden_feed_suppressions and the
  --    rule, `p` 1 and 2), its status change (3), its alert crossings and the streams they paused (4),
  --    numbered by mailwarden_append_changes_with_statuses, which locks the project's counter last.
  IF v_feed THEN
    PERFORM {{schema}}.mailwarden_append_changes_with_statuses(p_project_id, v_changes, v_status_o, v_status_at, v_status_data);
  END IF;
  RETURN v_result;
END
$fn$;
