-- Counts over time (core messages/stats.ts): each message's fact times (`statColumns` order, NULL for a
-- fact it lacks, or had before this step: never counted, so it never moves), and the hour buckets per
-- project ('' in tracking_id) and tracking ID. Buckets have no foreign key and are not purged: counts
-- outlive the messages counted. A day is summed from its 24 hours when read.

ALTER TABLE {{schema}}.messages ADD COLUMN fact_times bigint[];
CREATE TABLE {{schema}}.stat_buckets (
  project_id text COLLATE "C" NOT NULL,
  tracking_id text COLLATE "C" NOT NULL,
  hour bigint NOT NULL,
  delivered integer NOT NULL,
  hard_bounced integer NOT NULL,
  soft_bounced integer NOT NULL,
  complained integer NOT NULL,
  opened integer NOT NULL,
  clicked integer NOT NULL,
  unsubscribed integer NOT NULL,
  PRIMARY KEY (project_id, tracking_id, hour)
);
