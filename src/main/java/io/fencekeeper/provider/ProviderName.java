package io.fencekeeper.provider;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Providers are named things (docs/design.md, "Provider budgets"): {@code fencekeeper.providers.
 * <name>} in the configuration, {@code "provider"} in a run's create request. The block {@code
 * fencekeeper.provider} is the provider named {@value #DEFAULT}, which a run uses when it names
 * none.
 */
public final class ProviderName {

  public static final String DEFAULT = "default";

  private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");

  private ProviderName() {}

  /** The name a run means: its own, or the default provider's when it names none. */
  public static String orDefault(String name) {
    return name == null || name.isBlank() ? DEFAULT : name;
  }

  /** What is wrong with a provider name, if anything: lower case letters, digits, - and _. */
  public static Optional<String> problem(String name) {
    if (name == null || !NAME.matcher(name).matches()) {
      return Optional.of("provider must be 1-63 lower case letters, digits, '-' or '_'");
    }
    return Optional.empty();
  }
}
