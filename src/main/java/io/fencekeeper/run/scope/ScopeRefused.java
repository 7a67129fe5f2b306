package io.fencekeeper.run.scope;

/**
 * The scope names something this node will not read (a file outside the scope directory, an unsafe
 * SQL source): the request is refused before anything is read. {@link #field()} names the request
 * field at fault, e.g. {@code scope.path}.
 */
public final class ScopeRefused extends ScopeException {

  private final String field;

  public ScopeRefused(String field, String message) {
    super(message);
    this.field = field;
  }

  public String field() {
    return field;
  }
}
