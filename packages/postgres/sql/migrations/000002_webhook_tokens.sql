-- One-time webhook tokens (Mailgun's), for `claimWebhookToken`: the body digest of the request that
-- first used each token, until `expires_at` (epoch ms, from the caller). `purgeExpired` deletes rows
-- past it, project by project, through `webhook_tokens_by_expires_at` (which leads with project_id,
-- like every index here).

CREATE TABLE {{schema}}.webhook_tokens (
  project_id text COLLATE "C" NOT NULL,
  token text COLLATE "C" NOT NULL,
  digest text COLLATE "C" NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (project_id, token)
);
CREATE INDEX webhook_tokens_by_expires_at ON {{schema}}.webhook_tokens (project_id, expires_at);
