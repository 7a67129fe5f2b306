package io.fencekeeper.sdk.provider.check;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.sdk.provider.CleanupProvider;
import io.fencekeeper.sdk.provider.Guarantees;
import io.fencekeeper.sdk.provider.Item;
import io.fencekeeper.testing.plugins.ForgetfulLookupPlugin;
import io.fencekeeper.testing.plugins.LateCommittingPlugin;
import io.fencekeeper.testing.plugins.LedgerPlugin;
import io.fencekeeper.testing.plugins.TwiceApplyingPlugin;
import io.fencekeeper.testing.plugins.UnfencedPlugin;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The provider checks in process, against a plugin that keeps every guarantee and against one for
 * each broken guarantee: the report names the broken one first, says what was seen, and leaves the
 * guarantees a provider does not claim unprobed.
 */
class ProviderChecksTest {

  static final List<CheckAccount> ACCOUNTS =
      List.of(
          new CheckAccount("none-1", "c1"),
          new CheckAccount("safe-1", "c1"),
          new CheckAccount("safe-2", "c1"),
          new CheckAccount("safe-3", "c1"));

  static CheckReport check(CleanupProvider plugin) {
    return check(plugin, CheckSettings.defaults());
  }

  static CheckReport check(CleanupProvider plugin, CheckSettings settings) {
    try (PluginUnderCheck provider =
        new PluginUnderCheck(plugin, plugin.getClass().getSimpleName(), Duration.ofSeconds(5))) {
      return ProviderChecks.run(provider, ACCOUNTS, settings, line -> {});
    }
  }

  @Test
  void aProviderThatKeepsEveryGuaranteePassesAndEveryKeyHoldsOneEffect() {
    LedgerPlugin ledger = new LedgerPlugin();
    CheckReport report = check(ledger);
    System.out.print(report.table());

    assertEquals(CheckReport.HOLDS, report.exitCode(), report.table());
    for (CheckResult result : report.results()) {
      Verdict expected =
          result.guarantee() == Guarantee.THROTTLING ? Verdict.NOT_OBSERVED : Verdict.HOLDS;
      assertEquals(expected, result.verdict(), result.toString());
    }
    // one effect per key, whatever the checks sent (repeats, applies at once, a cut-off)
    assertTrue(
        ledger.applications().values().stream().allMatch(n -> n == 1),
        ledger.applications().toString());
    assertTrue(report.table().contains("OK: every guarantee the provider claims holds"));
  }

  @Test
  void aRepeatedKeyAppliedTwiceBreaksReplay() {
    CheckReport report = check(new TwiceApplyingPlugin());

    assertEquals(Guarantee.REPLAY, report.firstBroken().orElseThrow().guarantee(), report.table());
    assertTrue(
        report.firstBroken().get().detail().contains("applied it again"),
        report.firstBroken().get().detail());
    assertEquals(Verdict.BROKEN, report.result(Guarantee.CONCURRENT_APPLY).get().verdict());
    assertEquals(CheckReport.BROKEN, report.exitCode());
  }

  @Test
  void aLookupThatForgetsBreaksLookupAndTheCutOff() {
    CheckReport report = check(new ForgetfulLookupPlugin());

    assertEquals(Guarantee.LOOKUP, report.firstBroken().orElseThrow().guarantee(), report.table());
    assertEquals(Verdict.BROKEN, report.result(Guarantee.CUT_OFF).get().verdict());
  }

  @Test
  void aCommitAfterTheDeadlineBreaksTheDeadline() {
    CheckReport report = check(new LateCommittingPlugin());

    assertEquals(
        Guarantee.DEADLINE, report.firstBroken().orElseThrow().guarantee(), report.table());
    assertTrue(report.firstBroken().get().detail().contains("was committed"));
  }

  @Test
  void aProviderThatClaimsToFenceAndDoesNotBreaksFencing() {
    CheckReport report = check(new UnfencedPlugin());

    assertEquals(Guarantee.FENCING, report.firstBroken().orElseThrow().guarantee(), report.table());
    assertTrue(report.firstBroken().get().detail().contains("was accepted"));
  }

  @Test
  void aGuaranteeNotClaimedIsNotProbedAndTheReportSaysWhatIsLeft() {
    LedgerPlugin unfenced =
        new UnfencedPlugin() {
          @Override
          public Guarantees guarantees() {
            return new Guarantees(false, true, true);
          }
        };
    CheckSettings settings = CheckSettings.defaults();
    CheckReport report = check(unfenced, settings);

    assertEquals(CheckReport.HOLDS, report.exitCode(), report.table());
    CheckResult fencing = report.result(Guarantee.FENCING).orElseThrow();
    assertEquals(Verdict.NOT_CLAIMED, fencing.verdict());
    assertTrue(fencing.promise().contains("the lease alone protects"), fencing.promise());
    assertTrue(report.json().contains("\"verdict\":\"NOT_CLAIMED\""), report.json());
    for (CheckAccount account : ACCOUNTS) {
      String key =
          ProviderChecks.keyOf(
              new Item(
                  settings.job("fencing"),
                  settings.businessDate(),
                  account.accountId(),
                  account.cursor()));
      assertEquals(null, unfenced.applications().get(key), "nothing was applied to probe fencing");
    }
  }
}
