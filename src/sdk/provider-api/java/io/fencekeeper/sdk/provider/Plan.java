package io.fencekeeper.sdk.provider;

/**
 * What needs cleaning up for one item: nothing, or one action of {@code amountMinor} minor units
 * of {@code currency} (cents of EUR), so no floating point ever touches money.
 *
 * <p>A plan is deterministic for an item while nothing changes at the provider: Fencekeeper may
 * ask again after a retry or on another node, and sends the plan back in the {@link Cleanup}. Once
 * the effect is applied it may change (typically to nothing to do).
 *
 * @param nothingToDo true when the item needs no cleanup; {@code action} is then {@code "none"}
 * @param action what to do, 1-128 characters; part of the effect's identity
 * @param amountMinor how much, in minor units of {@code currency}; part of the effect's identity
 * @param currency an ISO 4217 code of three upper-case letters, or null when the action moves no
 *     money; part of the effect's identity when both sides of a comparison carry one
 * @param description a sentence for people (logs, the audit trail); not part of the identity
 */
public record Plan(
    boolean nothingToDo, String action, long amountMinor, String currency, String description) {

  public Plan {
    if (action == null || action.isEmpty() || action.length() > 128) {
      throw new IllegalArgumentException("a plan's action must be 1-128 characters");
    }
    if (currency != null && !isCurrency(currency)) {
      throw new IllegalArgumentException(
          "a plan's currency must be an ISO 4217 code of three upper-case letters");
    }
    description = description == null ? "" : description;
  }

  /** Nothing to clean up for this item. */
  public static Plan nothing(String description) {
    return new Plan(true, "none", 0, null, description);
  }

  /** One action of {@code amountMinor} minor units of {@code currency}. */
  public static Plan action(String action, long amountMinor, String currency, String description) {
    return new Plan(false, action, amountMinor, currency, description);
  }

  /** Whether {@code code} has the shape of an ISO 4217 alphabetic code: three letters A-Z. */
  public static boolean isCurrency(String code) {
    if (code == null || code.length() != 3) {
      return false;
    }
    for (int i = 0; i < 3; i++) {
      char c = code.charAt(i);
      if (c < 'A' || c > 'Z') {
        return false;
      }
    }
    return true;
  }
}
