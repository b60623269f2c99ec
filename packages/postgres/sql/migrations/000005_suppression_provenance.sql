-- Suppression provenance: how each came to be (`source`: api, webhook, import), when (`source_at`: the
-- cause's time, the join's tie-break after the reason) and, for a webhook one, its event. Nullable
-- columns added without a default: no rewrite, and rows from before read as unknown provenance (NULL).

ALTER TABLE {{schema}}.suppressions
  ADD COLUMN source text,
  ADD COLUMN source_at bigint,
  ADD COLUMN cause_provider text,
  ADD COLUMN cause_message_id text,
  ADD COLUMN cause_event_id text,
  ADD COLUMN cause_diagnostic text;
