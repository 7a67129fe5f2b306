package io.fencekeeper.provider;

import io.fencekeeper.CborSerializable;
import java.util.regex.Pattern;

/**
 * What the provider says needs cleaning up for one item. {@code amountMinor} is in minor units of
 * {@code currency} (cents of EUR), so no floating point ever touches money.
 *
 * <p>{@code currency} is an ISO 4217 alphabetic code (three upper-case letters), required from a
 * provider of protocol 1.1 when there is something to do; null from a 1.0 provider, which has no
 * currency, and then the cleanup is sent without one (docs/provider-protocol.md, "Compatibility").
 */
public record Plan(
    boolean nothingToDo, String action, long amountMinor, String description, String currency)
    implements CborSerializable {

  private static final Pattern ISO_4217 = Pattern.compile("[A-Z]{3}");

  public Plan {
    if (currency != null && !isCurrency(currency)) {
      throw new IllegalArgumentException(
          "currency must be an ISO 4217 code of three upper-case letters, got '"
              + (currency.length() > 20 ? currency.substring(0, 20) + "..." : currency)
              + "'");
    }
  }

  /** Whether {@code code} has the shape of an ISO 4217 alphabetic code: three letters A-Z. */
  public static boolean isCurrency(String code) {
    return code != null && ISO_4217.matcher(code).matches();
  }

  public static Plan nothing(String description) {
    return new Plan(true, "none", 0, description, null);
  }

  /** Something to do, without a currency (a 1.0 provider's plan). */
  public static Plan action(String action, long amountMinor, String description) {
    return new Plan(false, action, amountMinor, description, null);
  }

  /** Something to do, in {@code currency}. */
  public static Plan action(String action, long amountMinor, String currency, String description) {
    return new Plan(false, action, amountMinor, description, currency);
  }
}
