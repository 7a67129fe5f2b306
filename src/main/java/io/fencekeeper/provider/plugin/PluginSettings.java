package io.fencekeeper.provider.plugin;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * A Java provider plugin's settings ({@code kind = java}): the class to load, where its jars are,
 * the strings handed to its constructor, and how many of its calls may run at once.
 *
 * @param providerName the provider's name ({@code default}, or its {@code fencekeeper.providers}
 *     block's), which the plugin is told
 * @param className the plugin's class, a binary name ({@code com.acme.LedgerProvider})
 * @param path a directory whose {@code *.jar} files (not its sub-directories) hold the plugin and
 *     every library it uses, or one {@code .jar}
 * @param settings the block's {@code settings { ... }}, nested keys joined with dots, values as
 *     strings
 * @param maxThreads the most calls at once (the provider's budget, {@code max-in-flight}); 0 = as
 *     many as the node has workers
 */
public record PluginSettings(
    String providerName,
    String className,
    Path path,
    Map<String, String> settings,
    int maxThreads) {

  private static final Pattern BINARY_NAME =
      Pattern.compile("[\\p{L}_$][\\p{L}\\p{N}_$]*(\\.[\\p{L}_$][\\p{L}\\p{N}_$]*)*");

  public PluginSettings {
    if (providerName == null || providerName.isBlank()) {
      throw new IllegalArgumentException("the provider's name");
    }
    if (className == null || !BINARY_NAME.matcher(className).matches()) {
      throw new IllegalArgumentException("a class name such as com.acme.LedgerProvider");
    }
    if (path == null) {
      throw new IllegalArgumentException("a directory of jars");
    }
    settings = Map.copyOf(new TreeMap<>(settings));
    if (maxThreads < 0) {
      throw new IllegalArgumentException("maxThreads must be >= 0, got " + maxThreads);
    }
  }

  /**
   * Reads {@code class}, {@code path} and {@code settings} of a provider block; the message of a
   * refusal names the key ({@code where}: the block's path, e.g. {@code fencekeeper.provider}) and
   * the environment variable when there is one.
   */
  public static PluginSettings fromConfig(
      String providerName, Config block, String where, boolean fromEnvironment) {
    String className = block.hasPath("class") ? block.getString("class").trim() : "";
    String path = block.hasPath("path") ? block.getString("path").trim() : "";
    if (className.isEmpty()) {
      throw new IllegalArgumentException(
          where
              + ".class is required for kind java"
              + (fromEnvironment ? " (FENCEKEEPER_PROVIDER_CLASS)" : "")
              + ": the plugin's class, e.g. com.acme.LedgerProvider");
    }
    if (path.isEmpty()) {
      throw new IllegalArgumentException(
          where
              + ".path is required for kind java"
              + (fromEnvironment ? " (FENCEKEEPER_PROVIDER_PATH)" : "")
              + ": the directory of the plugin's jars");
    }
    if (!BINARY_NAME.matcher(className).matches()) {
      throw new IllegalArgumentException(
          where + ".class must be a Java class name such as com.acme.LedgerProvider");
    }
    return new PluginSettings(providerName, className, Path.of(path), settings(block, where), 0);
  }

  /** The calls that may run at once on a node with {@code workers} workers. */
  public int threadsFor(int workers) {
    return maxThreads > 0 ? maxThreads : Math.max(1, workers);
  }

  public PluginSettings withMaxThreads(int maxThreads) {
    return new PluginSettings(providerName, className, path, settings, maxThreads);
  }

  private static Map<String, String> settings(Config block, String where) {
    Map<String, String> settings = new TreeMap<>();
    if (!block.hasPath("settings")) {
      return settings;
    }
    for (Map.Entry<String, ConfigValue> entry : block.getConfig("settings").entrySet()) {
      ConfigValueType type = entry.getValue().valueType();
      if (type == ConfigValueType.LIST || type == ConfigValueType.OBJECT) {
        throw new IllegalArgumentException(
            where + ".settings." + entry.getKey() + " must be a string, number or boolean");
      }
      if (type != ConfigValueType.NULL) {
        settings.put(entry.getKey(), String.valueOf(entry.getValue().unwrapped()));
      }
    }
    return settings;
  }
}
