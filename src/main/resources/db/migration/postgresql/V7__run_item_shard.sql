-- Each node dispatches the items whose shard it hosts (issue 22, docs/design.md "Dispatch on
-- every node"): the item's shard is staged with it, and a node pages a run's items shard by shard.
-- Rows staged before this have none; the coordinator fills them in for a run that is still running.
-- The status column stays out of every index, so that caching a status stays a HOT update.
ALTER TABLE run_item ADD COLUMN shard SMALLINT;
CREATE INDEX run_item_shard_idx ON run_item (scope_id, shard, seq);
