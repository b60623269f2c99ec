-- The input of mailwarden_merge_suppressions as two CTEs: its rows in order (`seen_events`), and joined
-- per address of a list (`seen`): the first email, the strongest reason, the earliest time, the winning
-- cause (as in cause_wins.sql, a cause without a time the latest). A row's list is its `stream`, '' (the
-- project-wide list) when it has none; `key` names the address in its list: the hash (64 characters)
-- then the stream, so a project-wide row's key is its hash. A row already expired at `v_now` is left
-- out: it is not written (docs/decisions.md, "Suppressions that expire").

seen_events AS (
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
  )
