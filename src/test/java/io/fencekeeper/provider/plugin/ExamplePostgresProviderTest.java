package io.fencekeeper.provider.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.cli.Main;
import io.fencekeeper.localdb.PostgresBinaries;
import io.fencekeeper.testing.Console;
import io.fencekeeper.testing.ExamplePlugin;
import io.fencekeeper.testing.TestDatabases;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * {@code examples/postgres-provider} proven without Maven or the SDK installed: compiled by the
 * JDK's compiler against this build ({@link ExamplePlugin}); its own test, which extends the test
 * kit, runs and every guarantee it claims holds; and {@code provider-check} passes it, loaded from
 * its plugin directory as a node loads it, with one write-off row per key in its table.
 */
class ExamplePostgresProviderTest {

  @TempDir Path dir;

  @Test
  void theExamplesOwnTestExtendingTheTestKitPasses() throws Exception {
    ExamplePlugin.Built built = ExamplePlugin.build();
    // the example starts an embedded PostgreSQL of its own, zonky's plain way: on the binaries
    // this build unpacked safely (zonky reads its working directory from this property)
    Path binaries = PostgresBinaries.defaultRoot();
    PostgresBinaries.unpacked(binaries);
    System.setProperty("ot.epg.working-dir", binaries.toString());
    try (URLClassLoader example =
        new URLClassLoader(
            new URL[] {built.mainClasses().toUri().toURL(), built.testClasses().toUri().toURL()},
            getClass().getClassLoader())) {
      Class<?> test = example.loadClass(ExamplePlugin.TEST_CLASS);
      SummaryGeneratingListener summary = new SummaryGeneratingListener();
      Launcher launcher = LauncherFactory.create();
      launcher.execute(
          LauncherDiscoveryRequestBuilder.request()
              .selectors(DiscoverySelectors.selectClass(test))
              .build(),
          summary);
      TestExecutionSummary result = summary.getSummary();
      StringBuilder failures = new StringBuilder();
      result
          .getFailures()
          .forEach(
              f ->
                  failures
                      .append(f.getTestIdentifier().getDisplayName())
                      .append(": ")
                      .append(f.getException())
                      .append('\n'));
      assertEquals(0, result.getTotalFailureCount(), failures.toString());
      // seven guarantees hold; throttling is not observed (the example never throttled): skipped
      assertEquals(7, result.getTestsSucceededCount(), "guarantees that hold");
      assertEquals(1, result.getTestsAbortedCount(), "throttling, not observed");
    }
  }

  @Test
  void providerCheckPassesTheExampleLoadedFromItsPluginDirectory() throws Exception {
    TestDatabases.Target db = TestDatabases.freshPostgres();
    seedResiduals(db, 8);
    Path accounts = dir.resolve("safe.csv");
    StringBuilder csv = new StringBuilder("accountId,cursor\n");
    for (int i = 1; i <= 8; i++) {
      csv.append("acct-").append(i).append(",c1\n");
    }
    Files.writeString(accounts, csv);

    Console check =
        Console.capture(
            () ->
                Main.commandLine()
                    .execute(
                        "provider-check",
                        "--accounts",
                        accounts.toString(),
                        "--provider",
                        "java",
                        "--provider-class",
                        ExamplePlugin.CLASS,
                        "--provider-path",
                        ExamplePlugin.pluginDirectory().toString(),
                        "--provider-setting",
                        "url=" + db.url(),
                        "--provider-setting",
                        "user=" + db.user()));
    int exit = check.exit();
    String report = check.out();

    assertEquals(0, exit, report);
    assertTrue(report.contains("claims    fences, keeps keys, honours the deadline"), report);
    // the write-off lines and the balances agree: every line took its amount off once, no
    // balance went below zero, and each guarantee probed left one line
    assertEquals(Map.of(), unbalanced(db, 8), "account -> initial, left, written off");
    assertTrue(writeOffs(db) >= 6, "a write-off per guarantee probed");
  }

  /** Accounts whose residual is not their seeded amount less the lines written off on them. */
  static Map<String, String> unbalanced(TestDatabases.Target db, int accounts) throws Exception {
    Map<String, String> wrong = new HashMap<>();
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        Statement s = c.createStatement();
        ResultSet r =
            s.executeQuery(
                "SELECT r.account_id, r.amount_minor, COALESCE(SUM(e.amount_minor), 0)"
                    + " FROM account_residual r LEFT JOIN cleanup_effect e"
                    + " ON e.account_id = r.account_id GROUP BY r.account_id, r.amount_minor")) {
      while (r.next()) {
        long initial = 1000L + Long.parseLong(r.getString(1).substring("acct-".length()));
        long left = r.getLong(2);
        long writtenOff = r.getLong(3);
        if (left < 0 || left + writtenOff != initial) {
          wrong.put(r.getString(1), initial + ", " + left + ", " + writtenOff);
        }
      }
    }
    return wrong;
  }

  static int writeOffs(TestDatabases.Target db) throws Exception {
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT count(*) FROM cleanup_effect")) {
      r.next();
      return r.getInt(1);
    }
  }

  static void seedResiduals(TestDatabases.Target db, int accounts) throws Exception {
    Map<String, Long> residuals = new HashMap<>();
    for (int i = 1; i <= accounts; i++) {
      residuals.put("acct-" + i, 1000L + i);
    }
    ExamplePlugin.seedResiduals(db, residuals);
  }
}
