-- The store's `eraseAddress` (docs/decisions.md, "Erasure"; docs/storage.md, "Erasure"): in one
-- transaction, every row that held the address goes or loses it, and what blocks it stays, by hash.
-- p_erasure is core's AddressErasure as JSON, its `suppression` a suppressions row as toSuppressionRow
-- writes it, with `feed` when the store keeps a change feed. Locks are taken in applyEvents' order
-- (messages by key, then suppressions, then the feed's counter last). What it touches:
-- - messages whose recipient is the normalized address (their recipient indexes with them), their
--   timelines (the trigger timelines_follow_messages), and the dedup keys of their events;
-- - dedup keys that contain any form of the address (a scan of the project's keys: erasure is rare);
-- - the hash's soft-bounce history and allowlist entry;
-- - the hash's suppressions, every list: the placeholder email, no diagnostic (the event's, each of the
--   rule's bounces'), the project-wide one without expiry; written when none is live at `now`;
-- - the feed's changes about it (suppressions and allowlist entries of the hash, status changes of its
--   messages), then `address.erased`.
-- The hash's suppressions are read through the primary key whatever the statistics (the project as an
-- InitPlan, as mailwarden_feed_suppressions reads them).
-- Tracking-ID rows, stats, alert windows (message keys are digests) stay: counts, not addresses.
-- Returns {records, messages, changes, seq}: `seq` the erasure's, NULL without a feed.

CREATE OR REPLACE FUNCTION {{schema}}.mailwarden_erase_address(p_project_id text, p_erasure jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $fn$
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
  FROM (SELECT key FROM {{schema}}.messages WHERE project_id = p_project_id AND recipient = v_email ORDER BY key FOR UPDATE) m;
  v_messages := cardinality(v_keys);
  DELETE FROM {{schema}}.event_keys e
  WHERE e.project_id = p_project_id AND e.key IN (
    SELECT (t.entry->>'provider') || ':' || (t.entry->>'eventKey') FROM {{schema}}.timeline_entries t
    WHERE t.project_id = p_project_id AND t.message_key = ANY (v_keys));
  DELETE FROM {{schema}}.event_keys e
  WHERE e.project_id = p_project_id
    AND EXISTS (SELECT FROM jsonb_array_elements_text(p_erasure->'forms') AS f(form) WHERE strpos(e.key, f.form) > 0);
  DELETE FROM {{schema}}.messages WHERE project_id = p_project_id AND key = ANY (v_keys);

  -- 2. Its soft-bounce history and allowlist entry.
  DELETE FROM {{schema}}.soft_bounces WHERE project_id = p_project_id AND hash = v_hash;
  DELETE FROM {{schema}}.allowlist WHERE project_id = p_project_id AND key = v_hash;

  -- 3. The project-wide suppression, written when there is none live at `now` (an expired one replaced),
  --    else locked as it is; then every list's row of the hash loses the address.
  INSERT INTO {{schema}}.suppressions AS s (project_id, stream, hash, email, reason, created_at, source, source_at,
                                            cause_provider, cause_message_id, cause_event_id, cause_diagnostic, expires_at, cause_rule, allowlisted)
  VALUES (p_project_id, '', v_hash, v_row->>'email', (v_row->>'reason')::smallint, (v_row->>'created_at')::bigint,
          v_row->>'source', (v_row->>'source_at')::bigint, v_row->>'cause_provider', v_row->>'cause_message_id',
          v_row->>'cause_event_id', NULL, NULL, NULL, NULL)
  ON CONFLICT (project_id, hash, stream) DO UPDATE SET email = excluded.email, reason = excluded.reason,
    created_at = excluded.created_at, source = excluded.source, source_at = excluded.source_at,
    cause_provider = excluded.cause_provider, cause_message_id = excluded.cause_message_id,
    cause_event_id = excluded.cause_event_id, cause_diagnostic = NULL, expires_at = NULL, cause_rule = NULL, allowlisted = NULL
  WHERE s.expires_at <= v_now;
  UPDATE {{schema}}.suppressions SET email = v_row->>'email', cause_diagnostic = NULL,
    expires_at = CASE WHEN stream = '' THEN NULL ELSE expires_at END,
    -- The rule's bounces as packProvenance packs them, [provider, messageId, eventId, at, diagnostic]: no diagnostic.
    cause_rule = CASE WHEN cause_rule IS NOT NULL THEN (
      SELECT jsonb_build_array(r->0, r->1, r->2, coalesce(
               (SELECT jsonb_agg(jsonb_set(b, '{4}', 'null') ORDER BY n) FROM jsonb_array_elements(r->3) WITH ORDINALITY AS x(b, n)), '[]'))::text
      FROM (SELECT cause_rule::jsonb AS r) x) END
  WHERE project_id = (SELECT p_project_id) AND hash = v_hash;
  SELECT jsonb_agg(to_jsonb(s) - 'project_id' ORDER BY s.stream) INTO v_records
  FROM {{schema}}.suppressions s WHERE s.project_id = (SELECT p_project_id) AND s.hash = v_hash;
  PERFORM pg_notify('{{INVALIDATION_CHANNEL}}', json_build_object(
    'schema', {{schema_literal}}, 'projectId', p_project_id, 'hashes', json_build_array(v_hash))::text);

  -- 4. The feed's changes about it (earlier erasures stay), then the erasure, with the counter locked last.
  DELETE FROM {{schema}}.changes c
  WHERE c.project_id = p_project_id AND c.kind <> 'address.erased' AND (
    c.data->'record'->>'hash' = v_hash
    OR (c.kind IN ('allowlist.added', 'allowlist.removed') AND c.data->'entry'->>'key' = v_hash)
    OR (c.kind = 'message.status_changed' AND c.data->>3 = v_email));
  GET DIAGNOSTICS v_changes = ROW_COUNT;
  IF p_erasure ? 'feed' THEN
    v_seq := {{schema}}.mailwarden_append_changes(p_project_id, jsonb_build_array(jsonb_build_object(
      'kind', 'address.erased', 'at', v_now, 'actor', p_erasure->>'actor',
      'data', jsonb_build_object('hash', v_hash, 'records', v_records, 'messages', v_messages, 'changes', v_changes))));
  END IF;
  RETURN jsonb_build_object('records', v_records, 'messages', v_messages, 'changes', v_changes, 'seq', v_seq);
END
$fn$;
