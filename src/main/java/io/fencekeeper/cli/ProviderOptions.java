package io.fencekeeper.cli;

import io.fencekeeper.provider.factory.ProviderSettings;
import java.net.URI;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import picocli.CommandLine.Option;

/**
 * The provider flags of {@code run} and {@code provider-check}: which provider, and where. They
 * become overrides of {@code fencekeeper.provider}, so a provider given by flags is read exactly as
 * the node reads its configuration.
 */
public final class ProviderOptions {

  /** A setting's key: dot-separated words, as HOCON paths without quoting. */
  private static final Pattern SETTING_KEY =
      Pattern.compile("[A-Za-z0-9_-]{1,64}(\\.[A-Za-z0-9_-]{1,64}){0,7}");

  @Option(
      names = "--provider",
      description =
          "sim (in-process), http (--provider-url), jdbc (--provider-url = its JDBC URL) or java"
              + " (--provider-class, --provider-path, --provider-setting)")
  String provider;

  @Option(names = "--provider-url", description = "base URL of an http provider")
  URI providerUrl;

  @Option(
      names = "--provider-class",
      description =
          "java: the plugin's class (implements io.fencekeeper.sdk.provider.CleanupProvider)")
  String providerClass;

  @Option(
      names = "--provider-path",
      description = "java: the directory of the plugin's jar and of every jar it needs")
  Path providerPath;

  @Option(
      names = "--provider-setting",
      description = "java: a setting handed to the plugin, key=value (repeatable)")
  Map<String, String> providerSettings = new LinkedHashMap<>();

  /** A flag combination that cannot work: one line for the person at the terminal. */
  static final class Usage extends Exception {
    Usage(String line) {
      super(line);
    }
  }

  boolean given() {
    return provider != null;
  }

  /**
   * The overrides of {@code fencekeeper.provider} for the provider the flags name ({@code fallback}
   * when {@code --provider} is absent); {@code allowed} lists the kinds this command takes.
   */
  Map<String, Object> overrides(String fallback, String usage, ProviderSettings.Kind... allowed)
      throws Usage {
    ProviderSettings.Kind kind;
    try {
      kind = ProviderSettings.Kind.parse(provider != null ? provider : fallback);
    } catch (IllegalArgumentException unknown) {
      throw new Usage(usage);
    }
    if (!java.util.List.of(allowed).contains(kind)) {
      throw new Usage(usage);
    }
    if ((kind == ProviderSettings.Kind.HTTP || kind == ProviderSettings.Kind.JDBC)
        && providerUrl == null) {
      throw new Usage("--provider " + name(kind) + " needs --provider-url");
    }
    if (kind == ProviderSettings.Kind.JAVA && (providerClass == null || providerPath == null)) {
      throw new Usage("--provider java needs --provider-class and --provider-path");
    }
    Map<String, Object> overrides = new LinkedHashMap<>();
    overrides.put("fencekeeper.provider.kind", name(kind));
    if (providerUrl != null) {
      overrides.put("fencekeeper.provider.url", providerUrl.toString());
    }
    if (kind == ProviderSettings.Kind.JAVA) {
      overrides.put("fencekeeper.provider.class", providerClass);
      overrides.put("fencekeeper.provider.path", providerPath.toString());
      for (Map.Entry<String, String> setting : providerSettings.entrySet()) {
        if (!SETTING_KEY.matcher(setting.getKey()).matches()) {
          throw new Usage(
              "--provider-setting keys are words of letters, digits, '-' or '_' joined by dots");
        }
        overrides.put("fencekeeper.provider.settings." + setting.getKey(), setting.getValue());
      }
    } else if (!providerSettings.isEmpty() || providerClass != null || providerPath != null) {
      throw new Usage(
          "--provider-class, --provider-path and --provider-setting are for --provider java");
    }
    return overrides;
  }

  private static String name(ProviderSettings.Kind kind) {
    return kind.name().toLowerCase(Locale.ROOT);
  }
}
