package io.fencekeeper.sdk.provider.testkit;

import io.fencekeeper.sdk.provider.CleanupProvider;
import io.fencekeeper.sdk.provider.check.CheckAccount;
import io.fencekeeper.sdk.provider.check.CheckReport;
import io.fencekeeper.sdk.provider.check.CheckResult;
import io.fencekeeper.sdk.provider.check.CheckSettings;
import io.fencekeeper.sdk.provider.check.Guarantee;
import io.fencekeeper.sdk.provider.check.PluginUnderCheck;
import io.fencekeeper.sdk.provider.check.ProviderChecks;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The provider check of {@code fencekeeper provider-check}, as JUnit 5 tests in your own build:
 * extend this class, hand it your provider and accounts it may touch, and every guarantee becomes a
 * test of its own (a dynamic test named after it). A guarantee your provider claims and breaks
 * fails with what was seen; one it does not claim is skipped (aborted) with what Fencekeeper is
 * left with.
 *
 * <pre>{@code
 * class LedgerProviderTest extends CleanupProviderTestKit {
 *   protected CleanupProvider provider() {
 *     return new LedgerProvider(new ProviderContext("ledger", Map.of("url", TEST_DB_URL)));
 *   }
 *
 *   protected List<CheckAccount> safeAccounts() {
 *     return List.of(new CheckAccount("test-1", "c1"), new CheckAccount("test-2", "c1"));
 *   }
 * }
 * }</pre>
 *
 * The checks make real cleanups, under keys of their own ({@code pc-<runId>-<check>} jobs on
 * today's date), at least one per guarantee: the accounts must be ones that may be cleaned up,
 * with something to clean up (a plan that is not nothing to do) for each check.
 */
public abstract class CleanupProviderTestKit {

  private CheckReport report;

  /** The provider under test; asked once per test class instance and closed after the checks. */
  protected abstract CleanupProvider provider() throws Exception;

  /** Accounts the checks may apply real cleanups to, at least one with something to clean up. */
  protected abstract List<CheckAccount> safeAccounts();

  /** How the checks run: a fresh run id, 10 s per call, a cut-off deadline of 3 s. */
  protected CheckSettings checkSettings() {
    return CheckSettings.defaults();
  }

  /** One dynamic test per guarantee, in the report's order. */
  @TestFactory
  public Stream<DynamicTest> guarantees() {
    return Arrays.stream(Guarantee.values())
        .map(
            guarantee ->
                DynamicTest.dynamicTest(
                    guarantee.id() + ": " + guarantee.title(), () -> verify(guarantee)));
  }

  private void verify(Guarantee guarantee) throws Exception {
    CheckResult result = report().result(guarantee).orElseThrow();
    switch (result.verdict()) {
      case HOLDS -> {}
      case BROKEN ->
          Assertions.fail(
              guarantee.id() + " is broken: " + result.detail() + " (" + result.promise() + ")");
      case INCONCLUSIVE ->
          Assertions.fail(guarantee.id() + " could not be checked: " + result.detail());
      case NOT_CLAIMED, NOT_OBSERVED ->
          org.junit.jupiter.api.Assumptions.abort(result.detail() + ": " + result.promise());
    }
  }

  /** The checks run once, at the first guarantee's test; each test reads its own line. */
  private synchronized CheckReport report() throws Exception {
    if (report == null) {
      CheckSettings settings = checkSettings();
      CleanupProvider provider = provider();
      try (PluginUnderCheck underCheck =
          new PluginUnderCheck(
              provider, "java plugin " + provider.getClass().getName(), settings.patience())) {
        report = ProviderChecks.run(underCheck, safeAccounts(), settings, line -> {});
      }
      System.out.print(report.table());
    }
    return report;
  }
}
