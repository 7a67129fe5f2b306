package io.fencekeeper.bench;

import io.fencekeeper.sdk.provider.Cleanup;
import io.fencekeeper.sdk.provider.CleanupProvider;
import io.fencekeeper.sdk.provider.Guarantees;
import io.fencekeeper.sdk.provider.Item;
import io.fencekeeper.sdk.provider.Plan;
import io.fencekeeper.sdk.provider.Receipt;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;

/**
 * {@link NoopProvider} as a Java provider plugin: the same answers, through the plugin path (its
 * own class loader, its own threads, a timeout per call), so that {@code --noop-provider plugin}
 * measures what the path costs. It uses the plugin API and the JDK only: the bench writes it into
 * a jar of its own and the node loads it as an operator's plugin ({@link #jarIn}).
 */
public final class NoopPlugin implements CleanupProvider {

  private static final Plan ONE_ACTION = Plan.action("noop", 0, null, "bench no-op");

  @Override
  public Guarantees guarantees() {
    return Guarantees.NONE;
  }

  @Override
  public Plan plan(Item item) {
    return ONE_ACTION;
  }

  @Override
  public Receipt apply(Cleanup cleanup) {
    return Receipt.applied("noop-" + cleanup.fencingToken(), Instant.now());
  }

  @Override
  public Optional<Receipt> lookup(Item item, String idempotencyKey) {
    return Optional.empty();
  }

  /** {@code dir/noop-plugin.jar} holding this class; returns {@code dir}, the plugin's path. */
  static Path jarIn(Path dir) throws IOException {
    Files.createDirectories(dir);
    String entry = NoopPlugin.class.getName().replace('.', '/') + ".class";
    try (OutputStream file = Files.newOutputStream(dir.resolve("noop-plugin.jar"));
        JarOutputStream jar = new JarOutputStream(file);
        InputStream bytes = NoopPlugin.class.getResourceAsStream("/" + entry)) {
      jar.putNextEntry(new JarEntry(entry));
      bytes.transferTo(jar);
      jar.closeEntry();
    }
    return dir;
  }
}
