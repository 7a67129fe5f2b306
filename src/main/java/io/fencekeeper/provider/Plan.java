package io.fencekeeper.provider;

import io.fencekeeper.CborSerializable;

/**
 * What the provider says needs cleaning up for one item. {@code amountMinor} is in minor currency
 * units (cents), so no floating point ever touches money.
 */
public record Plan(boolean nothingToDo, String action, long amountMinor, String description)
    implements CborSerializable {

  public static Plan nothing(String description) {
    return new Plan(true, "none", 0, description);
  }

  public static Plan action(String action, long amountMinor, String description) {
    return new Plan(false, action, amountMinor, description);
  }
}
