-- Timelines go with their message by a statement-level trigger instead of the foreign key: the key's
-- check ran once per inserted entry (a query and a row lock each, a tenth of an applyEvents batch),
-- for rows that mailwarden_apply_events only ever inserts for messages it has just inserted or locked.
-- Deleting messages, by purgeExpired or by hand, still deletes their entries in the same statement, once
-- per statement rather than once per row.

ALTER TABLE {{schema}}.timeline_entries DROP CONSTRAINT IF EXISTS timeline_entries_project_id_message_key_fkey;
CREATE FUNCTION {{schema}}.mailwarden_delete_timelines() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM {{schema}}.timeline_entries t USING deleted d WHERE t.project_id = d.project_id AND t.message_key = d.key;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER timelines_follow_messages AFTER DELETE ON {{schema}}.messages
  REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION {{schema}}.mailwarden_delete_timelines();
