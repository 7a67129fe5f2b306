-- the API's "is this item part of the run" check looks an account up within one scope
CREATE INDEX run_item_account_idx ON run_item (scope_id, account_id, provider_cursor);
