-- The lease API's retryable claim-next (issue 51, docs/external-workers.md "A claim that can be
-- retried"): which item a worker's request id was granted, so that the same request sent again
-- after a lost answer, to any node, claims the same item and gets the same lease instead of a
-- second one. Written before the item is asked (a node that dies between the grant and its answer
-- leaves the row for the retry to find); moved, by a compare on item_id, when the item it named
-- could not be claimed. Rows older than the longest lease are deleted as claims come in: by then
-- the lease they named has lapsed.
CREATE TABLE lease_request (
  run_id VARCHAR(300) NOT NULL,
  worker_id VARCHAR(200) NOT NULL,
  request_id VARCHAR(64) NOT NULL,
  item_id VARCHAR(1000) NOT NULL,
  requested_at TIMESTAMP WITH TIME ZONE NOT NULL,
  PRIMARY KEY (run_id, worker_id, request_id)
);
CREATE INDEX lease_request_age_idx ON lease_request (requested_at);
