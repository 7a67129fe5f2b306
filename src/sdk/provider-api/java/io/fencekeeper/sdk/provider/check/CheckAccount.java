package io.fencekeeper.sdk.provider.check;

import java.util.Objects;

/**
 * An account that is safe to touch: the checks apply real cleanups to it (each under a key of its
 * own, so a check run never meets another's keys).
 */
public record CheckAccount(String accountId, String cursor) {

  public CheckAccount {
    Objects.requireNonNull(accountId, "accountId");
    Objects.requireNonNull(cursor, "cursor");
  }
}
