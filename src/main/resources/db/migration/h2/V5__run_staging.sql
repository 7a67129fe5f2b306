-- Runs whose scope is being staged (issue 12): written by the node that stages, read by every
-- node, so that a retried create joins the staging in progress instead of staging a second copy,
-- and GET /api/runs/{id} shows the run as STAGING before the coordinator knows it. One row per
-- run id; the row goes when the coordinator has the run. updated_at is the stager's heartbeat:
-- a row not updated for 30 s belongs to a node that died, and the next create starts over.
CREATE TABLE run_staging (
  run_id VARCHAR(300) NOT NULL PRIMARY KEY,
  scope_id VARCHAR(64) NOT NULL,
  request_digest VARCHAR(64) NOT NULL,
  job VARCHAR(128) NOT NULL,
  business_date VARCHAR(10) NOT NULL,
  deadline VARCHAR(40) NOT NULL,
  max_attempts INTEGER NOT NULL,
  max_failed_items INTEGER NOT NULL,
  scope_kind VARCHAR(16) NOT NULL,
  node VARCHAR(300) NOT NULL,
  state VARCHAR(16) NOT NULL,
  rows_staged BIGINT DEFAULT 0 NOT NULL,
  failure VARCHAR(4000),
  started_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL,
  updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL
);
