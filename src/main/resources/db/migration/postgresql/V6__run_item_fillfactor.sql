-- The dispatcher updates each row's status (not indexed) a few times during a run. Room left in
-- every page lets PostgreSQL write the new row version in the same page without touching the
-- indexes (a HOT update): one WAL record per update instead of one per index as well. New pages
-- only; rows staged before this keep their pages.
ALTER TABLE run_item SET (fillfactor = 60);
