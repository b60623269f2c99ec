-- The `seen` addresses of suppression_events.sql as suppression rows, for an INSERT's column list;
-- ends in a WHERE for the caller to extend, and to order by hash, stream (the key's order, the lock order).

SELECT p_project_id, stream, hash, email, reason, created_at,
           cause->>'source', (cause->>'source_at')::bigint, cause->>'cause_provider', cause->>'cause_message_id',
           cause->>'cause_event_id', cause->>'cause_diagnostic',
           (cause->>'expires_at')::bigint, cause->>'cause_rule', (cause->>'allowlisted')::boolean
    FROM seen WHERE true
