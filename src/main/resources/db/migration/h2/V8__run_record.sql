-- Ended runs (issue 22, docs/design.md "Runs and the coordinator"): the coordinator keeps only
-- the runs that have not ended; a run that ends is filed here, and read from here when asked for.
-- record and signals are the coordinator's RunRecord and the run's counters, as JSON.
CREATE TABLE run_record (
  run_id VARCHAR(300) NOT NULL PRIMARY KEY,
  job VARCHAR(128) NOT NULL,
  business_date VARCHAR(10) NOT NULL,
  state VARCHAR(16) NOT NULL,
  created_at TIMESTAMP WITH TIME ZONE NOT NULL,
  ended_at TIMESTAMP WITH TIME ZONE,
  record CHARACTER LARGE OBJECT NOT NULL,
  signals CHARACTER LARGE OBJECT NOT NULL
);
-- the run list pages newest first; a job's runs are found by business date
CREATE INDEX run_record_created_idx ON run_record (created_at, run_id);
CREATE INDEX run_record_job_idx ON run_record (job, business_date);
