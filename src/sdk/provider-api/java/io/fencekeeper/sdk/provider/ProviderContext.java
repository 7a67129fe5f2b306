package io.fencekeeper.sdk.provider;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What a plugin is constructed with: its provider's name in the node's configuration ({@code
 * default}, or the name of a {@code fencekeeper.providers.<name>} block) and the strings of that
 * block's {@code settings { ... }} (nested keys joined with dots).
 */
public record ProviderContext(String name, Map<String, String> settings) {

  public ProviderContext {
    Objects.requireNonNull(name, "name");
    settings = Map.copyOf(new TreeMap<>(Objects.requireNonNull(settings, "settings")));
  }

  /** A setting, if the block has it. */
  public Optional<String> setting(String key) {
    return Optional.ofNullable(settings.get(key));
  }

  /** A setting, or {@code fallback} when the block has none. */
  public String setting(String key, String fallback) {
    return settings.getOrDefault(key, fallback);
  }

  /**
   * A setting the plugin cannot work without: its absence is an {@link IllegalArgumentException}
   * naming the provider and the key, which a constructor may let through (the node then refuses to
   * start, exit 78, with that line).
   */
  public String required(String key) {
    String value = settings.get(key);
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(
          "provider " + name + " needs the setting '" + key + "' (settings." + key + ")");
    }
    return value;
  }
}
