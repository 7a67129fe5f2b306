package io.fencekeeper.run.scope;

import java.util.List;

/**
 * The scope cannot be read or is invalid; the run must not be created. The message names what is
 * wrong (the file, the header, every bad row up to a cap); {@link #problems()} lists the bad rows
 * one per entry for callers that render them separately.
 */
public class ScopeException extends RuntimeException {

  private final List<String> problems;

  public ScopeException(String message) {
    this(message, List.of(), null);
  }

  public ScopeException(String message, Throwable cause) {
    this(message, List.of(), cause);
  }

  ScopeException(String message, List<String> problems, Throwable cause) {
    super(message, cause);
    this.problems = List.copyOf(problems);
  }

  /** The reported row problems (at most the reporting cap), e.g. {@code "line 7: ..."}. */
  public List<String> problems() {
    return problems;
  }
}
