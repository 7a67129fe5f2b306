-- Retention (issue 24, docs/design.md "Retention and the archive", docs/archive.md): an ended run
-- older than fencekeeper.retention.keep-ended-runs-for is written to one archive file, then its
-- items' events and snapshots, its run_item and run_staging rows are deleted. Its run_record row
-- stays as the run's tombstone: the run id stays known (a create of the same run answers the
-- archived run instead of running the night again) and GET /api/runs/{id} says where it went.
--   archive_writer  the retention pass writing the archive now (the last to claim it wins; only
--                   that writer may mark it archived, and nothing is deleted before the mark)
--   archive_file    the archive's file name in the archive directory of archive_node
--   archived_at     set once the archive and its manifest are complete on disk: deletes may start
--   pruned_at       set once every row of the run is deleted
--   rows_deleted    journal, tag, snapshot and run_item rows deleted, counted in each batch's
--                   own transaction (exact across a crash)
ALTER TABLE run_record ADD COLUMN archive_writer VARCHAR(64);
ALTER TABLE run_record ADD COLUMN archive_file VARCHAR(600);
ALTER TABLE run_record ADD COLUMN archive_sha256 VARCHAR(64);
ALTER TABLE run_record ADD COLUMN archive_bytes BIGINT;
ALTER TABLE run_record ADD COLUMN archive_items BIGINT;
ALTER TABLE run_record ADD COLUMN archive_events BIGINT;
ALTER TABLE run_record ADD COLUMN archive_node VARCHAR(300);
ALTER TABLE run_record ADD COLUMN archived_at TIMESTAMP WITH TIME ZONE;
ALTER TABLE run_record ADD COLUMN pruned_at TIMESTAMP WITH TIME ZONE;
ALTER TABLE run_record ADD COLUMN rows_deleted BIGINT DEFAULT 0 NOT NULL;
-- the daily pass looks for the runs that ended before its cutoff
CREATE INDEX run_record_ended_idx ON run_record (ended_at);
