package io.fencekeeper.sdk.provider.check;

/**
 * A call without a clear answer: no answer within the patience, a connection lost after the send,
 * a 5xx, an exception outside the contract. A cleanup may or may not have been applied.
 */
public final class AmbiguousAnswer extends RuntimeException {

  public AmbiguousAnswer(String message) {
    super(message, null, false, false);
  }
}
