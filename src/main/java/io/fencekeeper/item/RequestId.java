package io.fencekeeper.item;

import java.util.regex.Pattern;

/**
 * A claim's request id (docs/external-workers.md, "A claim that can be retried"): the lease API
 * client's name for one claim, which it repeats when the answer did not reach it. It is journaled
 * and shown as it is, so it is short and of a safe alphabet.
 */
public final class RequestId {

  private RequestId() {}

  private static final Pattern SAFE = Pattern.compile("[A-Za-z0-9._:-]{1,64}");

  /** The rule, as a refusal names it. */
  public static final String RULE = "1-64 characters of letters, digits or ._:-";

  /** Whether {@code requestId} keeps the rule (null is not a request id: check it first). */
  public static boolean valid(String requestId) {
    return requestId != null && SAFE.matcher(requestId).matches();
  }
}
