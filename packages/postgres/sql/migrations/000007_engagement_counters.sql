-- Lifetime counters of opened, clicked and unsubscribed messages per tracking ID, beside the spec's.
-- Backfilled from the messages still retained (a lower bound where retention purged some), so a row's
-- counters stay consistent with what later moves subtract.

ALTER TABLE {{schema}}.tracking_ids
  ADD COLUMN opened integer NOT NULL DEFAULT 0,
  ADD COLUMN clicked integer NOT NULL DEFAULT 0,
  ADD COLUMN unsubscribed integer NOT NULL DEFAULT 0;
UPDATE {{schema}}.tracking_ids t SET opened = c.opened, clicked = c.clicked, unsubscribed = c.unsubscribed
FROM (SELECT project_id, tracking_id,
             count(*) FILTER (WHERE facts & {{Fact.opened}} <> 0) AS opened,
             count(*) FILTER (WHERE facts & {{Fact.clicked}} <> 0) AS clicked,
             count(*) FILTER (WHERE facts & {{Fact.unsubscribed}} <> 0) AS unsubscribed
      FROM {{schema}}.messages WHERE tracking_id IS NOT NULL GROUP BY 1, 2) c
WHERE t.project_id = c.project_id AND t.tracking_id = c.tracking_id
  AND (c.opened > 0 OR c.clicked > 0 OR c.unsubscribed > 0);
