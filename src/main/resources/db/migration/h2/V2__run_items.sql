-- The expanded scope of a run: one row per work item, written once when the run is created.
-- The dispatcher pages through it instead of holding every item in memory, and caches the
-- terminal status of each item here (the WorkItem entities stay the authority) so that a
-- coordinator recovering on another node does not have to ask a million entities.
CREATE TABLE run_item (
  scope_id VARCHAR(64) NOT NULL,
  seq INTEGER NOT NULL,
  account_id VARCHAR(128) NOT NULL,
  provider_cursor VARCHAR(128) NOT NULL,
  status SMALLINT DEFAULT 0 NOT NULL,
  PRIMARY KEY (scope_id, seq)
);
