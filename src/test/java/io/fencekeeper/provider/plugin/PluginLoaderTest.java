package io.fencekeeper.provider.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.sdk.provider.CleanupProvider;
import io.fencekeeper.sdk.provider.Guarantees;
import io.fencekeeper.sdk.provider.Item;
import io.fencekeeper.testing.plugins.LedgerPlugin;
import io.fencekeeper.testing.plugins.MisbehavingPlugin;
import io.fencekeeper.testing.plugins.NotAPlugin;
import io.fencekeeper.testing.plugins.NullGuaranteesPlugin;
import io.fencekeeper.testing.plugins.PluginJars;
import io.fencekeeper.testing.plugins.ProbingPlugin;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Loading a plugin as an operator deploys it (its jar in a directory, its class named): it gets a
 * class loader of its own that shows it the JDK and the API and nothing else of the node, and every
 * way the load can fail is one line naming the class and what it did.
 */
class PluginLoaderTest {

  @TempDir static Path dir;
  static Path plugins;

  @BeforeAll
  static void jars() {
    plugins = PluginJars.directoryWithTestPlugins(dir.resolve("plugins"));
  }

  static PluginSettings settings(String className, Map<String, String> settings) {
    return new PluginSettings("ledger", className, plugins, settings, 0);
  }

  static String problem(PluginSettings settings) {
    return assertThrows(PluginProblem.class, () -> PluginLoader.load("ledger", settings))
        .getMessage();
  }

  @Test
  void aPluginIsItsOwnCopyAndSeesTheJdkAndTheApiOnly() throws Exception {
    PluginLoader.Loaded loaded =
        PluginLoader.load("ledger", settings(ProbingPlugin.class.getName(), Map.of("url", "x")));
    try {
      CleanupProvider plugin = loaded.plugin();
      assertNotSame(ProbingPlugin.class, plugin.getClass(), "loaded from its jar, not the tests'");
      assertSame(loaded.loader(), plugin.getClass().getClassLoader());
      // the node's API class, not a copy: the node and the plugin agree on what a provider is
      assertSame(
          CleanupProvider.class.getClassLoader(),
          loaded.loader().loadClass(CleanupProvider.class.getName()).getClassLoader());
      assertEquals(Guarantees.ALL, loaded.guarantees());
      String seen =
          plugin.plan(new Item("j", LocalDate.of(2026, 11, 29), "a-1", "c1")).description();
      assertTrue(seen.contains("name=ledger settings={url=x}"), seen);
      assertTrue(seen.contains("pekko=hidden"), seen);
      assertTrue(seen.contains("jackson=hidden"), seen);
      assertTrue(seen.contains("fencekeeper=hidden"), seen);
      assertTrue(seen.contains("checks=hidden"), "only the API's package: " + seen);
      assertTrue(seen.contains("api=visible"), seen);
      assertTrue(seen.contains("jdk=visible"), "java.sql is the JDK's: " + seen);
    } finally {
      PluginLoader.closeQuietly(loaded.loader());
    }
  }

  @Test
  void aClassThatIsNotThereIsOneLine() {
    assertEquals(
        "provider ledger: plugin com.acme.Missing was not found in " + plugins + " (1 jars)",
        problem(settings("com.acme.Missing", Map.of())));
  }

  @Test
  void aClassThatIsNotAProviderIsOneLine() {
    assertEquals(
        "provider ledger: plugin "
            + NotAPlugin.class.getName()
            + " does not implement io.fencekeeper.sdk.provider.CleanupProvider (API 1.x)",
        problem(settings(NotAPlugin.class.getName(), Map.of())));
  }

  @Test
  void aConstructorThatThrowsIsOneLineWithWhatItSaid() {
    assertEquals(
        "provider ledger: plugin "
            + MisbehavingPlugin.class.getName()
            + ": its constructor threw java.lang.IllegalStateException: cannot reach the ledger at"
            + " ledger.internal:5432",
        problem(settings(MisbehavingPlugin.class.getName(), Map.of("constructor", "throw"))));
  }

  @Test
  void guaranteesThatAreNullAreOneLine() {
    assertEquals(
        "plugin " + NullGuaranteesPlugin.class.getName() + ": guarantees() returned null",
        problem(settings(NullGuaranteesPlugin.class.getName(), Map.of())));
  }

  @Test
  void aPathWithoutJarsOrThatIsNotThereIsOneLine() throws Exception {
    Path empty = Files.createDirectories(dir.resolve("empty"));
    assertEquals(
        "provider ledger: plugin path " + empty + " has no .jar files",
        problem(new PluginSettings("ledger", LedgerPlugin.class.getName(), empty, Map.of(), 0)));
    Path missing = dir.resolve("missing");
    assertEquals(
        "provider ledger: plugin path " + missing + " is neither a directory nor a .jar file",
        problem(new PluginSettings("ledger", LedgerPlugin.class.getName(), missing, Map.of(), 0)));
  }

  @Test
  void aPluginWithOnlyANoArgumentConstructorLoadsToo() {
    PluginLoader.Loaded loaded =
        PluginLoader.load(
            "ledger",
            settings(io.fencekeeper.testing.plugins.TwiceApplyingPlugin.class.getName(), Map.of()));
    PluginLoader.closeQuietly(loaded.loader());
    assertEquals(Guarantees.ALL, loaded.guarantees());
  }
}
