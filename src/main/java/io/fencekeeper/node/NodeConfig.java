package io.fencekeeper.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * Loads the node's HOCON: explicit overrides, then the given file (or the bundled {@code
 * fencekeeper.conf} from {@code conf/}), then the libraries' reference settings. Environment
 * variables are substituted by the {@code ${?FENCEKEEPER_...}} lines of the file.
 */
public final class NodeConfig {

  public static final String BUNDLED = "fencekeeper.conf";

  private NodeConfig() {}

  public static Config load(Optional<Path> file, Map<String, ?> overrides) {
    Config source;
    if (file.isPresent()) {
      Path path = file.get();
      if (!Files.isReadable(path)) {
        throw new IllegalArgumentException("config file " + path + " is not readable");
      }
      source =
          ConfigFactory.parseFile(
              path.toFile(), ConfigParseOptions.defaults().setAllowMissing(false));
    } else {
      source = ConfigFactory.parseResources(BUNDLED);
    }
    Config layered =
        ConfigFactory.parseMap(overrides)
            .withFallback(source)
            .withFallback(ConfigFactory.parseResources(BUNDLED));
    return ConfigFactory.defaultOverrides()
        .withFallback(layered)
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
  }
}
