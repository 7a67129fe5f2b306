package io.fencekeeper.provider.factory;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigUtil;
import io.fencekeeper.provider.ProviderName;
import io.fencekeeper.provider.budget.ProviderBudget;
import io.fencekeeper.provider.jdbc.JdbcProviderSettings;
import io.fencekeeper.provider.plugin.PluginSettings;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

/**
 * The providers a node knows (docs/design.md, "Provider budgets"): {@code fencekeeper.provider} is
 * the one named {@value ProviderName#DEFAULT} (so {@code FENCEKEEPER_PROVIDER} / {@code _URL} keep
 * working), and every block of {@code fencekeeper.providers} is one more, by its name. Each has its
 * settings (kind, url, ..., its own {@code http.max-connections}) and its budget ({@code
 * max-in-flight}, {@code max-rate}); {@code fencekeeper.budget} says how the budgets are leased.
 *
 * @param permitLease how long a node may use permits without renewing them: a dead node's permits
 *     come back after it
 * @param decreaseCooldown the least time between two halvings of a budget under throttling
 */
public record ProviderCatalog(
    Map<String, Entry> entries, Duration permitLease, Duration decreaseCooldown) {

  public static final Duration DEFAULT_PERMIT_LEASE = Duration.ofSeconds(30);
  public static final Duration DEFAULT_DECREASE_COOLDOWN = Duration.ofSeconds(2);

  /** What a named block leaves out. */
  private static final Config NAMED_DEFAULTS =
      ConfigFactory.parseString(
          "url = \"\", user = \"\", password = \"\", max-in-flight = 0, max-rate = 0,"
              + " class = \"\", path = \"\","
              + " jdbc { effect-sql = \"\", plan-sql = \"\", threads = 4, queue-capacity = 1024,"
              + " currency = \"\" }");

  public record Entry(String name, ProviderSettings settings, ProviderBudget budget) {}

  public ProviderCatalog {
    entries = Map.copyOf(entries);
    if (!entries.containsKey(ProviderName.DEFAULT)) {
      throw new IllegalArgumentException("the catalog needs the default provider");
    }
    if (permitLease.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException(
          "fencekeeper.budget.permit-lease must be at least 1s, got " + permitLease);
    }
  }

  /** Reads {@code fencekeeper.provider}, {@code fencekeeper.providers} and {@code .budget}. */
  public static ProviderCatalog fromConfig(Config root) {
    Config fk = root.getConfig("fencekeeper");
    Map<String, Entry> entries = new TreeMap<>();
    Config defaultBlock = fk.getConfig("provider").withFallback(NAMED_DEFAULTS);
    ProviderBudget defaultBudget = budget(defaultBlock, "fencekeeper.provider");
    entries.put(
        ProviderName.DEFAULT,
        new Entry(
            ProviderName.DEFAULT,
            withTimeouts(
                    ProviderSettings.fromConfig(defaultBlock), defaultBlock, "fencekeeper.provider")
                .withPluginThreads(defaultBudget.maxInFlight()),
            defaultBudget));
    if (fk.hasPath("providers")) {
      Config named = fk.getConfig("providers");
      for (String name : named.root().keySet()) {
        String path = "fencekeeper.providers." + name;
        ProviderName.problem(name)
            .ifPresent(
                problem -> {
                  throw new IllegalArgumentException(path + ": " + problem);
                });
        if (name.equals(ProviderName.DEFAULT)) {
          throw new IllegalArgumentException(
              path + ": the default provider is fencekeeper.provider (FENCEKEEPER_PROVIDER)");
        }
        Config block = named.getConfig(ConfigUtil.quoteString(name)).withFallback(NAMED_DEFAULTS);
        ProviderBudget budget = budget(block, path);
        entries.put(
            name,
            new Entry(
                name, settings(name, block, path).withPluginThreads(budget.maxInFlight()), budget));
      }
    }
    Config budget = fk.hasPath("budget") ? fk.getConfig("budget") : ConfigFactory.empty();
    return new ProviderCatalog(
        entries,
        budget.hasPath("permit-lease") ? budget.getDuration("permit-lease") : DEFAULT_PERMIT_LEASE,
        budget.hasPath("decrease-cooldown")
            ? budget.getDuration("decrease-cooldown")
            : DEFAULT_DECREASE_COOLDOWN);
  }

  /** A catalog of the default provider alone, without a budget (nodes built in code). */
  public static ProviderCatalog defaultOnly(ProviderSettings settings) {
    return new ProviderCatalog(
        Map.of(
            ProviderName.DEFAULT, new Entry(ProviderName.DEFAULT, settings, ProviderBudget.NONE)),
        DEFAULT_PERMIT_LEASE,
        DEFAULT_DECREASE_COOLDOWN);
  }

  public Entry get(String name) {
    return entries.get(name);
  }

  /** Every provider's configured budget, by name. */
  public Map<String, ProviderBudget> budgets() {
    Map<String, ProviderBudget> budgets = new TreeMap<>();
    entries.forEach((name, entry) -> budgets.put(name, entry.budget()));
    return budgets;
  }

  private static ProviderSettings settings(String name, Config block, String path) {
    ProviderSettings.Kind kind = ProviderSettings.Kind.parse(block.getString("kind"));
    String url = block.getString("url").trim();
    if ((kind == ProviderSettings.Kind.HTTP || kind == ProviderSettings.Kind.JDBC)
        && url.isEmpty()) {
      throw new IllegalArgumentException(
          path + ".url is required for kind " + kind.name().toLowerCase(java.util.Locale.ROOT));
    }
    ProviderSettings settings =
        switch (kind) {
          case SIM -> ProviderSettings.sim();
          case HTTP -> ProviderSettings.http(URI.create(url));
          case JDBC -> {
            Config statements = block.getConfig("jdbc");
            yield ProviderSettings.jdbc(
                JdbcProviderSettings.of(url, block.getString("user"), block.getString("password"))
                    .withEffectSql(statements.getString("effect-sql"))
                    .withPlanSql(statements.getString("plan-sql"))
                    .withThreads(statements.getInt("threads"), statements.getInt("queue-capacity"))
                    .withCurrency(statements.getString("currency"))
                    .validated());
          }
          case JAVA -> ProviderSettings.java(PluginSettings.fromConfig(name, block, path, false));
        };
    if (block.hasPath("http.max-connections")) {
      try {
        settings = settings.withMaxConnections(block.getInt("http.max-connections"));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(path + ".http.max-connections: " + e.getMessage(), e);
      }
    }
    return withTimeouts(settings, block, path);
  }

  /** The timeouts and the clock-skew allowance of a block, where it gives them. */
  private static ProviderSettings withTimeouts(
      ProviderSettings settings, Config block, String path) {
    Duration connect =
        block.hasPath("connect-timeout")
            ? block.getDuration("connect-timeout")
            : settings.connectTimeout();
    Duration request =
        block.hasPath("request-timeout")
            ? block.getDuration("request-timeout")
            : settings.requestTimeout();
    ProviderSettings timed;
    try {
      timed = settings.withTimeouts(connect, request);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(path + ": " + e.getMessage(), e);
    }
    if (!block.hasPath("clock-skew-allowance")) {
      return timed;
    }
    Duration allowance;
    try {
      allowance = block.getDuration("clock-skew-allowance");
    } catch (ConfigException e) {
      throw new IllegalArgumentException(
          path + ".clock-skew-allowance must be a duration (1s, 500ms)", e);
    }
    try {
      return timed.withClockSkewAllowance(allowance);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(path + "." + e.getMessage(), e);
    }
  }

  private static ProviderBudget budget(Config block, String path) {
    try {
      return new ProviderBudget(block.getInt("max-in-flight"), block.getInt("max-rate"));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(path + ": " + e.getMessage(), e);
    }
  }
}
