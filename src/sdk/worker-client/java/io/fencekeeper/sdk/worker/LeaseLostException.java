package io.fencekeeper.sdk.worker;

/** The lease is lost (taken over, lapsed, or about to): write nothing more for this item. */
public final class LeaseLostException extends Exception {

  public LeaseLostException(String message) {
    super(message);
  }
}
