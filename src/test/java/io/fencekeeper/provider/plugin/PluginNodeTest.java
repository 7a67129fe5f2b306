package io.fencekeeper.provider.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.cli.ServeCommand;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunRequest;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.Console;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.testing.TestNodes;
import io.fencekeeper.testing.plugins.MisbehavingPlugin;
import io.fencekeeper.testing.plugins.PluginJars;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * A node with a provider plugin: one that cannot be loaded stops its start (exit 78 for {@code
 * serve}, one line naming the class and what it did); one that misbehaves at run time (null
 * answers, exceptions) costs its items attempts, which end failed with that line in their record,
 * and the node goes on working for other runs.
 */
class PluginNodeTest {

  static final LocalDate DATE = LocalDate.of(2026, 11, 29);

  @TempDir Path dir;

  @Test
  void serveWithAPluginThatIsNotThereExits78WithOneLine() throws Exception {
    Path plugins = PluginJars.directoryWithTestPlugins(dir.resolve("plugins"));
    Path conf = dir.resolve("node.conf");
    Files.writeString(
        conf,
        "fencekeeper.data-dir = \""
            + dir.resolve("data")
            + "\"\npekko.remote.artery.canonical.port = 0\npekko.loglevel = OFF\n"
            + "fencekeeper.provider { kind = java, class = com.acme.Missing, path = \""
            + plugins
            + "\" }\n");
    Console serve =
        Console.capture(() -> new CommandLine(new ServeCommand()).execute("-c", conf.toString()));

    assertEquals(78, serve.exit());
    assertEquals(
        "fencekeeper node not started: provider default: plugin com.acme.Missing was not found in "
            + plugins
            + " (1 jars)",
        serve.err().strip());
  }

  @Test
  void aNamedPluginThatThrowsInItsConstructorStopsTheNodesStart() {
    Path plugins = PluginJars.directoryWithTestPlugins(dir.resolve("plugins"));
    Map<String, Object> overrides =
        TestNodes.overrides(TestDatabases.h2File(dir), dir.resolve("data"));
    overrides.put("fencekeeper.providers.ledger.kind", "java");
    overrides.put("fencekeeper.providers.ledger.class", MisbehavingPlugin.class.getName());
    overrides.put("fencekeeper.providers.ledger.path", plugins.toString());
    overrides.put("fencekeeper.providers.ledger.settings.constructor", "throw");

    IllegalArgumentException refused =
        assertThrows(
            IllegalArgumentException.class,
            () -> FencekeeperNode.start(FencekeeperNode.config(overrides)));
    assertEquals(
        "provider ledger: plugin "
            + MisbehavingPlugin.class.getName()
            + ": its constructor threw java.lang.IllegalStateException: cannot reach the ledger at"
            + " ledger.internal:5432",
        refused.getMessage());
  }

  @Test
  void aPluginThatMisbehavesAtRunTimeFailsItsItemsWithOneLineAndTheNodeWorksOn() throws Exception {
    Path plugins = PluginJars.directoryWithTestPlugins(dir.resolve("plugins"));
    Map<String, Object> overrides =
        TestNodes.overrides(TestDatabases.h2File(dir), dir.resolve("data"));
    named(overrides, "nulls", plugins, "plan", "null");
    named(overrides, "throws", plugins, "apply", "throw");
    try (FencekeeperNode node =
        FencekeeperNode.start(FencekeeperNode.config(overrides)).awaitUp(Duration.ofSeconds(30))) {
      RunView nulls = run(node, "plan-null", "nulls");
      RunView throwing = run(node, "apply-throws", "throws");
      RunView healthy = run(node, "healthy", null);

      assertEquals(RunState.SUCCEEDED, healthy.state(), "the node works on: " + healthy);
      assertEquals(RunState.FAILED, nulls.state(), nulls.toString());
      assertEquals(RunState.FAILED, throwing.state(), throwing.toString());
      String plugin = "plugin " + MisbehavingPlugin.class.getName() + ": ";
      ItemView planNull = item(node, "plan-null");
      assertEquals(WorkItem.Status.FAILED, planNull.status());
      assertTrue(
          planNull.lastError().contains(plugin + "plan returned null"), planNull.lastError());
      ItemView applyThrew = item(node, "apply-throws");
      assertEquals(WorkItem.Status.FAILED, applyThrew.status());
      assertTrue(
          applyThrew.lastError().contains(plugin + "apply threw java.lang.IllegalStateException"),
          applyThrew.lastError());
      // an apply that threw may have applied: the item stays ambiguous, to be looked up again
      assertEquals(WorkItem.EffectStatus.AMBIGUOUS, applyThrew.effect());
    }
  }

  private static void named(
      Map<String, Object> overrides, String name, Path plugins, String method, String how) {
    String block = "fencekeeper.providers." + name + ".";
    overrides.put(block + "kind", "java");
    overrides.put(block + "class", MisbehavingPlugin.class.getName());
    overrides.put(block + "path", plugins.toString());
    overrides.put(block + "request-timeout", "1s");
    overrides.put(block + "clock-skew-allowance", "100ms");
    overrides.put(block + "settings." + method, how);
  }

  private static RunView run(FencekeeperNode node, String job, String provider) throws Exception {
    RunRequest request =
        new RunRequest(
            job,
            DATE,
            new Scope.Inline(List.of(new AccountCursor("acct-1", "c1"))),
            Instant.now().plus(Duration.ofMinutes(10)),
            1,
            1,
            provider);
    RunView created =
        assertInstanceOf(
                RunCoordinator.Created.class,
                node.runs().create(request).toCompletableFuture().get(30, TimeUnit.SECONDS))
            .run();
    return Await.until(
        Duration.ofSeconds(90),
        "run " + created.runId() + " to end",
        () -> view(node, created.runId()),
        run -> run != null && run.state().ended());
  }

  private static RunView view(FencekeeperNode node, String runId) {
    try {
      return node.runs().get(runId).toCompletableFuture().get(10, TimeUnit.SECONDS).orElse(null);
    } catch (Exception unanswered) {
      return null;
    }
  }

  private static ItemView item(FencekeeperNode node, String job) throws Exception {
    WorkItem.Reply reply =
        node.items()
            .get(ItemId.of(job, DATE, "acct-1", "c1"))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    return assertInstanceOf(WorkItem.Accepted.class, reply).item();
  }
}
