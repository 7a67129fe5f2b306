-- An account+cursor appears once per staged scope: the database finds repeats while a scope is
-- staged, so the reader needs no memory per account (issue 12). The unique index replaces the
-- lookup index of V3 (same columns). source_position is where the row came from (CSV line, SQL
-- row, inline index), so that a repeat is reported with both positions.
DROP INDEX run_item_account_idx;
CREATE UNIQUE INDEX run_item_account_unique ON run_item (scope_id, account_id, provider_cursor);
ALTER TABLE run_item ADD COLUMN source_position BIGINT;
