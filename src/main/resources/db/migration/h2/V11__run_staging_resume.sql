-- Staging goes on by itself after a fault (issue 50): a stager commits its scope in steps, each
-- with how far it had come, so that a database outage, or the death of its node, costs the step
-- in progress and not the rows before it. docs/design.md, "Staging a scope".
--   request        the run's request as JSON: what another node needs to read the scope again
--                  (an upload's accounts are not in it: an upload cut off cannot go on)
--   holder         the stager's claim, new with every stager that takes the row over: steps and
--                  heartbeats are written only while the row is still the writer's
--   incarnation    the stager's cluster member (its unique id): a row whose member left the
--                  cluster, or whose holder its own node no longer runs, is taken over
--   next_seq       the seq after the last committed step
--   resume_rows    accounts of the last step that every row up to it obeyed the rules; the
--   resume_digest  scope digest of exactly those accounts: a stager that takes over reads the
--                  scope again up to there, checks the digest, and stages only what follows
--   scope_count    set once every account is staged and valid (an upload is answered only then):
--   scope_digest   the run can be created from the rows alone, on any node
--   rows_per_second  the stager's recent rate, with each heartbeat
--   resumes        how often another stager took over
ALTER TABLE run_staging ADD COLUMN request CHARACTER LARGE OBJECT;
ALTER TABLE run_staging ADD COLUMN holder VARCHAR(64);
ALTER TABLE run_staging ADD COLUMN incarnation VARCHAR(64);
ALTER TABLE run_staging ADD COLUMN next_seq INTEGER DEFAULT 0 NOT NULL;
ALTER TABLE run_staging ADD COLUMN resume_rows BIGINT DEFAULT 0 NOT NULL;
ALTER TABLE run_staging ADD COLUMN resume_digest VARCHAR(64);
ALTER TABLE run_staging ADD COLUMN scope_count BIGINT;
ALTER TABLE run_staging ADD COLUMN scope_digest VARCHAR(64);
ALTER TABLE run_staging ADD COLUMN rows_per_second DOUBLE PRECISION DEFAULT 0 NOT NULL;
ALTER TABLE run_staging ADD COLUMN resumes INTEGER DEFAULT 0 NOT NULL;
