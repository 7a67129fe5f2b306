package io.fencekeeper.run.scope;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.item.ItemId;

/** One account of a run's scope and the provider cursor its reconciliation starts from. */
public record AccountCursor(String accountId, String cursor) implements CborSerializable {

  public AccountCursor {
    // both become segments of the item id, so they obey the item id's rules
    ItemId.requireSegment("accountId", accountId);
    ItemId.requireSegment("cursor", cursor);
  }

  @Override
  public String toString() {
    return accountId + "," + cursor;
  }
}
