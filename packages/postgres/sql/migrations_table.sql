-- The record of applied migrations, created by every migrate() before it reads which versions are
-- done. Never changed: the previous releases read and write it as it is.

CREATE TABLE IF NOT EXISTS {{schema}}.mailwarden_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);
