-- The input of mailwarden_merge_suppressions as two CTEs: its rows in order (`seen_events`), and joined
-- per address (`seen`): the first email, the strongest reason, the earliest time, the winning cause (as
-- in cause_wins.sql, a cause without a time the latest).

seen_events AS (
    SELECT (x.event->>'hash') COLLATE "C" AS hash, x.event, x.ord,
           (x.event->>'reason')::smallint AS reason, (x.event->>'created_at')::bigint AS created_at
    FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(event, ord)
  ), seen AS (
    SELECT hash,
           (array_agg(event->>'email' ORDER BY ord))[1] AS email,
           max(reason) AS reason,
           min(created_at) AS created_at,
           (array_agg(event ORDER BY reason DESC, coalesce((event->>'source_at')::bigint, 9223372036854775807),
                      coalesce(event->>'cause_event_id', '') COLLATE "C", coalesce(event->>'source', '~') COLLATE "C"))[1] AS cause
    FROM seen_events
    GROUP BY 1
  )
