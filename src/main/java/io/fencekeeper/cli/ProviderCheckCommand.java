package io.fencekeeper.cli;

import com.typesafe.config.Config;
import io.fencekeeper.node.NodeConfig;
import io.fencekeeper.provider.ProviderName;
import io.fencekeeper.provider.check.ProvidersUnderCheck;
import io.fencekeeper.provider.factory.ProviderCatalog;
import io.fencekeeper.provider.factory.ProviderSettings;
import io.fencekeeper.sdk.provider.ProviderFailure;
import io.fencekeeper.sdk.provider.check.AmbiguousAnswer;
import io.fencekeeper.sdk.provider.check.CheckAccount;
import io.fencekeeper.sdk.provider.check.CheckReport;
import io.fencekeeper.sdk.provider.check.CheckSettings;
import io.fencekeeper.sdk.provider.check.Guarantee;
import io.fencekeeper.sdk.provider.check.ProviderChecks;
import io.fencekeeper.sdk.provider.check.ProviderUnderCheck;
import io.fencekeeper.sdk.provider.check.UnreadableAnswer;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code fencekeeper provider-check}: the ugly transitions of a night, run directly against a
 * provider before its first night (docs/writing-a-provider.md, "Proving it"). It makes real
 * cleanups on the accounts the operator names as safe to touch, says so before it starts, and
 * refuses without them; it reports each guarantee ({@link Guarantee}) as a table, or JSON, with
 * what Fencekeeper can promise with this provider. Exit 0 when every guarantee the provider claims
 * holds, 1 naming the first broken one, 3 when a claimed one could not be shown either way, 64 on a
 * usage error, 65 for an accounts file it cannot use, 78 for a provider configuration it refuses.
 */
@Command(
    name = "provider-check",
    description =
        "Check a provider's guarantees with real cleanups on accounts that are safe to touch:"
            + " replay, one effect at once, lookup, a cut-off cleanup, fencing, the deadline,"
            + " throttling, readable answers.")
public final class ProviderCheckCommand implements Callable<Integer> {

  static final int USAGE = 64;
  static final int BAD_ACCOUNTS = 65;
  static final int CONFIGURATION = 78;

  @Mixin ProviderOptions provider = new ProviderOptions();

  @Option(
      names = "--provider-name",
      defaultValue = ProviderName.DEFAULT,
      description =
          "without --provider: the provider of the configuration to check, default (the one of"
              + " FENCEKEEPER_PROVIDER) or a fencekeeper.providers.<name> (default:"
              + " ${DEFAULT-VALUE})")
  String providerName;

  @Option(
      names = {"-c", "--config"},
      description = "HOCON file (default: the bundled conf/fencekeeper.conf and the environment)")
  Path config;

  @Option(
      names = "--accounts",
      description =
          "CSV of accountId,cursor: the accounts the check may apply real cleanups to (required)")
  Path accounts;

  @Option(
      names = "--date",
      description = "the business date of the check's items, yyyy-MM-dd (default: today, UTC)")
  LocalDate date;

  @Option(
      names = "--run-id",
      description =
          "carried by every job name of the check (pc-<run-id>-<check>), 1-24 lower-case letters"
              + " and digits (default: a fresh one, so a second check never meets the first's"
              + " keys)")
  String runId;

  @Option(names = "--json", description = "print the report as JSON instead of a table")
  boolean json;

  @Override
  public Integer call() {
    PrintStream out = System.out;
    PrintStream err = System.err;
    if (accounts == null) {
      err.println(
          "provider-check makes real cleanups: --accounts FILE must name the accounts that are"
              + " safe to touch (a CSV of accountId,cursor)");
      return USAGE;
    }
    if (runId != null && !CheckSettings.isRunId(runId)) {
      err.println("--run-id must be 1-24 lower-case letters and digits");
      return USAGE;
    }
    if (ProviderName.problem(providerName).isPresent()) {
      err.println("--provider-name: " + ProviderName.problem(providerName).get());
      return USAGE;
    }
    ProviderSettings settings;
    try {
      settings = settings();
    } catch (ProviderOptions.Usage usage) {
      err.println(usage.getMessage());
      return USAGE;
    } catch (IllegalArgumentException | com.typesafe.config.ConfigException refused) {
      err.println("provider-check: " + refused.getMessage());
      return CONFIGURATION;
    }
    CheckSettings checkSettings =
        CheckSettings.defaults()
            .withPatience(settings.requestTimeout())
            .withClockSkewAllowance(settings.clockSkewAllowance());
    if (runId != null) {
      checkSettings = checkSettings.withRunId(runId);
    }
    if (date != null) {
      checkSettings = checkSettings.withBusinessDate(date);
    }
    List<CheckAccount> safe;
    try {
      safe = SafeAccounts.read(accounts);
    } catch (SafeAccounts.Refused refused) {
      err.println("provider-check: " + refused.getMessage());
      return BAD_ACCOUNTS;
    }
    ProviderUnderCheck underCheck;
    try {
      underCheck = ProvidersUnderCheck.open(settings);
    } catch (IllegalArgumentException refused) {
      err.println("provider-check: " + refused.getMessage());
      return CONFIGURATION;
    } catch (UnreadableAnswer unreadable) {
      err.println(
          "BROKEN: "
              + Guarantee.READABLE.id()
              + " ("
              + Guarantee.READABLE.title()
              + "): "
              + unreadable.getMessage());
      return CheckReport.BROKEN;
    } catch (AmbiguousAnswer | ProviderFailure | IllegalStateException unanswered) {
      err.println(
          "INCONCLUSIVE: the provider could not be asked what it claims: "
              + unanswered.getMessage());
      return CheckReport.INCONCLUSIVE;
    }
    try (underCheck) {
      err.printf(
          "provider-check makes REAL cleanups at %s on %d account%s of %s (jobs pc-%s-*,"
              + " business date %s), at least one per guarantee it claims%n",
          underCheck.description(),
          safe.size(),
          safe.size() == 1 ? "" : "s",
          accounts,
          checkSettings.runId(),
          checkSettings.businessDate());
      CheckReport report = ProviderChecks.run(underCheck, safe, checkSettings, err::println);
      if (json) {
        out.println(report.json());
      } else {
        out.print(report.table());
      }
      return report.exitCode();
    }
  }

  /**
   * The provider: from the flags when {@code --provider} is given (as {@code run} reads them), else
   * the configuration's provider of {@code --provider-name}, as {@code serve} reads it.
   */
  private ProviderSettings settings() throws ProviderOptions.Usage {
    Map<String, Object> overrides = new HashMap<>();
    String name = providerName;
    if (provider.given()) {
      overrides.putAll(
          provider.overrides(
              "sim",
              "--provider must be sim, http or jdbc with --provider-url, or java with"
                  + " --provider-class and --provider-path",
              ProviderSettings.Kind.values()));
      name = ProviderName.DEFAULT;
    }
    Config resolved = NodeConfig.load(Optional.ofNullable(config), overrides);
    ProviderCatalog.Entry entry = ProviderCatalog.fromConfig(resolved).get(name);
    if (entry == null) {
      throw new IllegalArgumentException(
          "no provider named " + name + " in the configuration (fencekeeper.providers.<name>)");
    }
    return entry.settings();
  }
}
