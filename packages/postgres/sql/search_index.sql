-- The trigram index behind tracking-ID search, tried by every migrate() after the functions. Not a
-- versioned step: it needs the pg_trgm extension, which a database may not offer or the role may not be
-- allowed to create, so every migrate() tries again until it exists. Without it, search scans the
-- project's tracking IDs in order (correct, slower). With btree_gin too, the index leads with project_id
-- like every other one. fastupdate is off: new tracking IDs are rare and searches frequent, and a pending
-- list would be scanned by every search.

DO $do$
DECLARE
  v_schema text := {{schema_literal}};
  v_trgm name;
BEGIN
  IF to_regclass(format('%I.tracking_ids_search', v_schema)) IS NOT NULL THEN
    RETURN;
  END IF;
  BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
  EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'mailwarden: pg_trgm is not available (%); tracking-ID search will scan', SQLERRM;
  END;
  BEGIN
    CREATE EXTENSION IF NOT EXISTS btree_gin;
  EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'mailwarden: btree_gin is not available (%)', SQLERRM;
  END;
  SELECT n.nspname INTO v_trgm
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
  WHERE e.extname = 'pg_trgm';
  IF v_trgm IS NULL THEN
    RETURN;
  END IF;
  IF EXISTS (SELECT FROM pg_extension WHERE extname = 'btree_gin') THEN
    EXECUTE format('CREATE INDEX tracking_ids_search ON %I.tracking_ids USING gin (project_id, search_key %I.gin_trgm_ops)'
      ' WITH (fastupdate = off)', v_schema, v_trgm);
  ELSE
    EXECUTE format('CREATE INDEX tracking_ids_search ON %I.tracking_ids USING gin (search_key %I.gin_trgm_ops)'
      ' WITH (fastupdate = off)', v_schema, v_trgm);
  END IF;
END
$do$;
