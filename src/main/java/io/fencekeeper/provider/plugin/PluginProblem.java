package io.fencekeeper.provider.plugin;

/**
 * Why a provider plugin cannot be loaded, in one line naming its class and what it did: the node
 * refuses to start (exit 78 for {@code serve}).
 */
public final class PluginProblem extends IllegalArgumentException {

  PluginProblem(String line) {
    super(line);
  }

  /** The first line of what {@code failure} says, bounded: a plugin's message is not ours. */
  static String said(Throwable failure) {
    String message = failure.getMessage();
    String line =
        message == null || message.isBlank() ? "" : message.lines().findFirst().orElse("").trim();
    if (line.length() > 200) {
      line = line.substring(0, 200) + "...";
    }
    return failure.getClass().getName() + (line.isEmpty() ? "" : ": " + line);
  }
}
