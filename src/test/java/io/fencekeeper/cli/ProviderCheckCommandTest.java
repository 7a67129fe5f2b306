package io.fencekeeper.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.fencekeeper.provider.sim.SimProtocol;
import io.fencekeeper.provider.sim.SimProviderServer;
import io.fencekeeper.testing.Console;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.testing.plugins.ForgetfulLookupPlugin;
import io.fencekeeper.testing.plugins.LateCommittingPlugin;
import io.fencekeeper.testing.plugins.LedgerPlugin;
import io.fencekeeper.testing.plugins.PluginJars;
import io.fencekeeper.testing.plugins.TwiceApplyingPlugin;
import io.fencekeeper.testing.plugins.UnfencedPlugin;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fencekeeper provider-check} as an operator runs it: it passes the sim, the jdbc provider
 * and a plugin that keeps its guarantees; it fails, naming the guarantee, on a provider built to
 * break each one (a plugin loaded from its jar as a node loads it, an http server that answers a
 * cleanup with a body nobody can read); it refuses to start without accounts that are safe to
 * touch, and a plugin that cannot be loaded is one line and exit 78.
 */
class ProviderCheckCommandTest {

  @TempDir static Path dir;
  static Path accounts;
  static Path plugins;

  @BeforeAll
  static void files() throws IOException {
    accounts = dir.resolve("safe.csv");
    Files.writeString(accounts, "accountId,cursor\nsafe-1,c1\nsafe-2,c1\nsafe-3,c1\n");
    plugins = PluginJars.directoryWithTestPlugins(dir.resolve("plugins"));
  }

  static Console check(String... args) {
    return Console.capture(() -> Main.commandLine().execute(args));
  }

  static Console plugin(Class<?> type, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "provider-check",
                "--accounts",
                accounts.toString(),
                "--provider",
                "java",
                "--provider-class",
                type.getName(),
                "--provider-path",
                plugins.toString()));
    args.addAll(List.of(more));
    return check(args.toArray(String[]::new));
  }

  @Test
  void theSimPasses() {
    Console sim = check("provider-check", "--accounts", accounts.toString(), "--provider", "sim");

    assertEquals(0, sim.exit(), sim.out() + sim.err());
    assertTrue(sim.err().contains("makes REAL cleanups"), sim.err());
    assertTrue(
        sim.out().contains("GET /v1/guarantees"), "the sim says what it claims: " + sim.out());
    assertTrue(sim.out().contains("OK: every guarantee the provider claims holds"), sim.out());
  }

  @Test
  void theJdbcProviderPassesAsTheConfigurationDescribesIt() throws IOException {
    TestDatabases.Target db = TestDatabases.freshPostgres();
    Path conf = dir.resolve("jdbc.conf");
    Files.writeString(
        conf,
        "include \"fencekeeper.conf\"\n"
            + "fencekeeper.provider { kind = jdbc, url = \""
            + db.url()
            + "\", user = \""
            + db.user()
            + "\", password = \""
            + db.password()
            + "\", jdbc.currency = EUR }\n");

    Console jdbc =
        check("provider-check", "--accounts", accounts.toString(), "-c", conf.toString());

    assertEquals(0, jdbc.exit(), jdbc.out() + jdbc.err());
    assertTrue(jdbc.out().contains("jdbc provider jdbc:postgresql:"), jdbc.out());
    assertFalse(jdbc.out().contains("fencing") && jdbc.out().contains("not claimed"), jdbc.out());
  }

  @Test
  void aPluginThatKeepsItsGuaranteesPassesAndSaysSoInJson() {
    Console ok = plugin(LedgerPlugin.class, "--json");

    assertEquals(0, ok.exit(), ok.out() + ok.err());
    assertTrue(ok.out().startsWith("{\"provider\":\"java plugin " + LedgerPlugin.class.getName()));
    assertTrue(ok.out().contains("\"firstBroken\":null"), ok.out());
  }

  @Test
  void aPluginThatAppliesARepeatedKeyTwiceFailsOnReplay() {
    assertBroken(plugin(TwiceApplyingPlugin.class), "replay");
  }

  @Test
  void aPluginWhoseLookupForgetsFailsOnLookup() {
    assertBroken(plugin(ForgetfulLookupPlugin.class), "lookup");
  }

  @Test
  void aPluginThatCommitsAfterTheDeadlineFailsOnTheDeadline() {
    assertBroken(plugin(LateCommittingPlugin.class), "deadline");
  }

  @Test
  void aPluginThatClaimsToFenceAndDoesNotFailsOnFencing() {
    assertBroken(plugin(UnfencedPlugin.class), "fencing");
  }

  @Test
  void anHttpProviderAnsweringACleanupWithABodyNobodyCanReadFailsOnReadableAnswers()
      throws IOException {
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(
        "/v1/guarantees",
        x -> answer(x, 200, "{\"fences\":true,\"keepsKeys\":true,\"honoursDeadline\":true}"));
    server.createContext(
        "/v1/plans",
        x ->
            answer(
                x,
                200,
                "{\"nothingToDo\":false,\"action\":\"write-off\",\"amountMinor\":120,"
                    + "\"currency\":\"EUR\",\"description\":\"write off\"}"));
    server.createContext(
        "/v1/cleanups",
        x -> {
          if (x.getRequestMethod().equals("POST")) {
            answer(x, 200, "<html><body>Service temporarily unavailable</body></html>");
          } else {
            answer(x, 404, "{\"error\":\"not_found\",\"message\":\"no cleanup under this key\"}");
          }
        });
    server.start();
    try {
      Console garbled =
          check(
              "provider-check",
              "--accounts",
              accounts.toString(),
              "--provider",
              "http",
              "--provider-url",
              "http://127.0.0.1:" + server.getAddress().getPort() + "/");

      assertBroken(garbled, "readable");
      assertTrue(garbled.out().contains("with a body that is not a JSON object"), garbled.out());
    } finally {
      server.stop(0);
    }
  }

  @Test
  void aProtocol10ProviderIsCheckedForWhat10PromisedAndTheRestIsNotClaimed() {
    try (SimProviderServer sim = SimProviderServer.start(0)) {
      sim.setProtocol(SimProtocol.V1_0);

      Console old =
          check(
              "provider-check",
              "--accounts",
              accounts.toString(),
              "--provider",
              "http",
              "--provider-url",
              sim.baseUrl().toString(),
              "--json");

      assertEquals(0, old.exit(), old.out() + old.err());
      assertTrue(
          old.out().contains("\"claimsSource\":\"protocol 1.0, no /v1/guarantees"), old.out());
      for (String unclaimed : List.of("replay", "concurrent-apply", "fencing", "deadline")) {
        assertTrue(
            old.out().contains("{\"id\":\"" + unclaimed + "\",")
                && old.out()
                    .split("\\{\"id\":\"" + unclaimed + "\",")[1]
                    .contains("\"claimed\":false,\"verdict\":\"NOT_CLAIMED\""),
            unclaimed + ": " + old.out());
      }
    }
  }

  @Test
  void withoutSafeAccountsItRefusesToStart() {
    Console refused = check("provider-check", "--provider", "sim");

    assertEquals(64, refused.exit());
    assertEquals(
        "provider-check makes real cleanups: --accounts FILE must name the accounts that are safe"
            + " to touch (a CSV of accountId,cursor)",
        refused.err().strip());
    assertEquals("", refused.out());
  }

  @Test
  void anAccountsFileThatIsNotAccountsIsRefusedByLineWithoutEchoingIt() throws IOException {
    Path bad = dir.resolve("bad.csv");
    Files.writeString(bad, "safe-1,c1\nDROP TABLE accounts;\n");

    Console refused = check("provider-check", "--provider", "sim", "--accounts", bad.toString());

    assertEquals(65, refused.exit());
    assertTrue(refused.err().contains("line 2 must be accountId,cursor"), refused.err());
    assertFalse(refused.err().contains("DROP"), refused.err());
  }

  @Test
  void aPluginWhoseConstructorThrowsIsOneLineAndExit78() {
    Console refused =
        plugin(
            io.fencekeeper.testing.plugins.MisbehavingPlugin.class,
            "--provider-setting",
            "constructor=throw");

    assertEquals(78, refused.exit(), refused.out() + refused.err());
    assertEquals(
        "provider-check: provider default: plugin "
            + io.fencekeeper.testing.plugins.MisbehavingPlugin.class.getName()
            + ": its constructor threw java.lang.IllegalStateException: cannot reach the ledger"
            + " at ledger.internal:5432",
        refused.err().strip());
  }

  private static void assertBroken(Console result, String guarantee) {
    assertEquals(1, result.exit(), result.out() + result.err());
    String last = result.out().strip().lines().reduce((a, b) -> b).orElse("");
    assertTrue(last.startsWith("BROKEN: " + guarantee + " ("), result.out());
  }

  private static void answer(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Fencekeeper-Protocol", "1.1");
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    exchange.getResponseBody().write(bytes);
    exchange.close();
  }
}
