package io.fencekeeper.provider;

/** The one exception a provider stage fails with; the typed reason is {@link #error()}. */
public final class ProviderException extends RuntimeException {

  private final ProviderError error;

  public ProviderException(ProviderError error) {
    this(error, null);
  }

  public ProviderException(ProviderError error, Throwable cause) {
    super(error.getClass().getSimpleName() + ": " + error.message(), cause);
    this.error = error;
  }

  public ProviderError error() {
    return error;
  }
}
