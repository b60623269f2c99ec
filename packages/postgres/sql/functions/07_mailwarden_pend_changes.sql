-- Keeps changes for this transaction's mailwarden_append_changes, in a transaction-local setting: the
-- functions that find them (mailwarden_feed_suppressions, mailwarden_soft_bounce) run inside a caller
-- that appends once, at its end, after every other lock it takes.

CREATE OR REPLACE FUNCTION {{schema}}.mailwarden_pend_changes(p_changes jsonb) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  IF jsonb_array_length(p_changes) > 0 THEN
    PERFORM set_config('mailwarden.changes',
      (coalesce(nullif(current_setting('mailwarden.changes', true), ''), '[]')::jsonb || p_changes)::text, true);
  END IF;
END
$fn$;
