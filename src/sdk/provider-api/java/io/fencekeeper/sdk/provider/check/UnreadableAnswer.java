package io.fencekeeper.sdk.provider.check;

/**
 * An answer that cannot be read: a 2xx whose body is not what the protocol says, a null from a
 * plugin, a 429 whose Retry-After is neither seconds nor a date. A broken guarantee in itself
 * ("every answer is readable").
 *
 * @see Guarantee#READABLE
 */
public final class UnreadableAnswer extends RuntimeException {

  private final int status;

  /** {@code status}: the HTTP status of the answer, 0 when it was not HTTP. */
  public UnreadableAnswer(int status, String message) {
    super(message, null, false, false);
    this.status = status;
  }

  public int status() {
    return status;
  }
}
