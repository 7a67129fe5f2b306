package io.fencekeeper.provider.factory;

import com.typesafe.config.Config;
import io.fencekeeper.provider.ProviderName;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.jdbc.JdbcProviderSettings;
import io.fencekeeper.provider.plugin.PluginSettings;
import io.fencekeeper.provider.sim.SimFaults;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;

/**
 * Which provider a node talks to ({@code FENCEKEEPER_PROVIDER}, {@code FENCEKEEPER_PROVIDER_URL})
 * and how patiently.
 *
 * @param url the provider's base URL (http); ignored for sim, which picks its own port
 * @param connectTimeout how long to wait for a TCP connection (http, sim)
 * @param requestTimeout how long to wait for an answer once connected (http, sim); past it, a
 *     mutation is ambiguous
 * @param simFaults fault knobs of the in-process simulated provider
 * @param simSeed seed of the simulated provider's random fault decisions
 * @param jdbc target database and statements (jdbc only)
 * @param maxConnections the most connections to the provider (http, sim); 0 = one per worker of the
 *     node ({@code fencekeeper.provider.http.max-connections})
 * @param clockSkewAllowance how far the clocks of a worker, the provider and an item's host may
 *     disagree: a key is looked up only once the deadline of every cleanup sent under it plus this
 *     has passed ({@code clock-skew-allowance}, docs/provider-protocol.md, "The deadline")
 * @param plugin the Java plugin's class, jars and settings (java only)
 */
public record ProviderSettings(
    Kind kind,
    URI url,
    Duration connectTimeout,
    Duration requestTimeout,
    SimFaults simFaults,
    long simSeed,
    JdbcProviderSettings jdbc,
    int maxConnections,
    Duration clockSkewAllowance,
    PluginSettings plugin) {

  public enum Kind {
    SIM,
    HTTP,
    JDBC,
    JAVA;

    /** Parses {@code sim}, {@code http}, {@code jdbc} or {@code java}, case-insensitively. */
    public static Kind parse(String value) {
      try {
        return valueOf(value.trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException | NullPointerException e) {
        throw new IllegalArgumentException(
            "provider kind must be one of sim, http, jdbc, java (got '" + value + "')");
      }
    }
  }

  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);

  /**
   * Clocks kept by NTP agree within a few milliseconds; docs/cluster.md asks to alert at a few
   * hundred. A second is well beyond that, and small next to the request timeout a lookup already
   * waits for.
   */
  public static final Duration DEFAULT_CLOCK_SKEW_ALLOWANCE = Duration.ofSeconds(1);

  /** The most a clock-skew allowance may be: a lookup waits it, under a renewed lease. */
  public static final Duration MAX_CLOCK_SKEW_ALLOWANCE = Duration.ofMinutes(1);

  public ProviderSettings {
    if (kind == null) {
      throw new IllegalArgumentException("provider kind is required");
    }
    if (kind == Kind.HTTP && url == null) {
      throw new IllegalArgumentException("the http provider needs a url");
    }
    if (kind == Kind.JDBC && jdbc == null) {
      throw new IllegalArgumentException("the jdbc provider needs jdbc settings");
    }
    if (kind == Kind.JAVA && plugin == null) {
      throw new IllegalArgumentException("the java provider needs its plugin's settings");
    }
    connectTimeout = connectTimeout == null ? DEFAULT_CONNECT_TIMEOUT : connectTimeout;
    requestTimeout = requestTimeout == null ? DEFAULT_REQUEST_TIMEOUT : requestTimeout;
    requirePositive("connectTimeout", connectTimeout);
    requirePositive("requestTimeout", requestTimeout);
    if (requestTimeout.compareTo(HttpProtocol.MAX_REQUEST_TIMEOUT) > 0) {
      // every cleanup's deadline is at most the request timeout ahead, and a provider need not
      // accept one further ahead than 10 minutes (docs/provider-protocol.md, "The deadline")
      throw new IllegalArgumentException(
          "request-timeout must be at most "
              + HttpProtocol.MAX_REQUEST_TIMEOUT.toMinutes()
              + " minutes, got "
              + requestTimeout);
    }
    simFaults = simFaults == null ? SimFaults.NONE : simFaults;
    if (maxConnections < 0) {
      throw new IllegalArgumentException(
          "maxConnections must be >= 0 (0 = one per worker), got " + maxConnections);
    }
    clockSkewAllowance =
        clockSkewAllowance == null ? DEFAULT_CLOCK_SKEW_ALLOWANCE : clockSkewAllowance;
    if (clockSkewAllowance.isNegative()
        || clockSkewAllowance.compareTo(MAX_CLOCK_SKEW_ALLOWANCE) > 0) {
      throw new IllegalArgumentException(
          "clock-skew-allowance must be between 0 and "
              + MAX_CLOCK_SKEW_ALLOWANCE.toSeconds()
              + "s, got "
              + clockSkewAllowance);
    }
  }

  /** Without a connection limit of its own, with the default clock-skew allowance. */
  public ProviderSettings(
      Kind kind,
      URI url,
      Duration connectTimeout,
      Duration requestTimeout,
      SimFaults simFaults,
      long simSeed,
      JdbcProviderSettings jdbc,
      int maxConnections) {
    this(
        kind,
        url,
        connectTimeout,
        requestTimeout,
        simFaults,
        simSeed,
        jdbc,
        maxConnections,
        null,
        null);
  }

  /** Without a connection limit of its own: one connection per worker. */
  public ProviderSettings(
      Kind kind,
      URI url,
      Duration connectTimeout,
      Duration requestTimeout,
      SimFaults simFaults,
      long simSeed,
      JdbcProviderSettings jdbc) {
    this(kind, url, connectTimeout, requestTimeout, simFaults, simSeed, jdbc, 0, null, null);
  }

  /**
   * The connections for a node with {@code workers} workers: the configured number, or one each.
   */
  public int connectionsFor(int workers) {
    return maxConnections > 0 ? maxConnections : Math.max(1, workers);
  }

  /**
   * Reads a provider block of the node's configuration ({@code fencekeeper.provider}): {@code kind}
   * is {@code sim}, {@code http} (the base URL in {@code url}), {@code jdbc} (the target database's
   * JDBC URL in {@code url}, with {@code user}, {@code password} and the {@code jdbc} statements)
   * or {@code java} (a plugin: {@code class}, {@code path}, {@code settings}). The message of a
   * refusal names the environment variable to set.
   */
  public static ProviderSettings fromConfig(Config block) {
    Kind kind = Kind.parse(block.getString("kind"));
    String url = block.getString("url").trim();
    int maxConnections =
        block.hasPath("http.max-connections") ? block.getInt("http.max-connections") : 0;
    return switch (kind) {
      case SIM -> sim().withMaxConnections(maxConnections);
      case HTTP -> {
        if (url.isEmpty()) {
          throw new IllegalArgumentException(
              "FENCEKEEPER_PROVIDER=http needs FENCEKEEPER_PROVIDER_URL (the provider's base URL)");
        }
        yield http(URI.create(url)).withMaxConnections(maxConnections);
      }
      case JDBC -> {
        if (url.isEmpty()) {
          throw new IllegalArgumentException(
              "FENCEKEEPER_PROVIDER=jdbc needs FENCEKEEPER_PROVIDER_URL (the target database's"
                  + " JDBC URL)");
        }
        Config statements = block.getConfig("jdbc");
        yield jdbc(
            JdbcProviderSettings.of(url, block.getString("user"), block.getString("password"))
                .withEffectSql(statements.getString("effect-sql"))
                .withPlanSql(statements.getString("plan-sql"))
                .withThreads(statements.getInt("threads"), statements.getInt("queue-capacity"))
                .withCurrency(
                    statements.hasPath("currency") ? statements.getString("currency") : null)
                .validated());
      }
      case JAVA ->
          java(
              PluginSettings.fromConfig(ProviderName.DEFAULT, block, "fencekeeper.provider", true));
    };
  }

  /** The embedded default: an in-process simulated provider without faults. */
  public static ProviderSettings sim() {
    return new ProviderSettings(Kind.SIM, null, null, null, SimFaults.NONE, 1L, null);
  }

  public static ProviderSettings http(URI url) {
    return new ProviderSettings(Kind.HTTP, url, null, null, null, 1L, null);
  }

  public static ProviderSettings jdbc(JdbcProviderSettings jdbc) {
    return new ProviderSettings(Kind.JDBC, null, null, null, null, 1L, jdbc);
  }

  /** A Java provider plugin (docs/design.md, "The provider boundary"). */
  public static ProviderSettings java(PluginSettings plugin) {
    return new ProviderSettings(Kind.JAVA, null, null, null, null, 1L, null, 0, null, plugin);
  }

  /** The same plugin, its calls at once bounded by {@code maxThreads} (its budget; 0 = none). */
  public ProviderSettings withPluginThreads(int maxThreads) {
    if (plugin == null) {
      return this;
    }
    return new ProviderSettings(
        kind,
        url,
        connectTimeout,
        requestTimeout,
        simFaults,
        simSeed,
        jdbc,
        maxConnections,
        clockSkewAllowance,
        plugin.withMaxThreads(maxThreads));
  }

  public ProviderSettings withTimeouts(Duration connectTimeout, Duration requestTimeout) {
    return new ProviderSettings(
        kind,
        url,
        connectTimeout,
        requestTimeout,
        simFaults,
        simSeed,
        jdbc,
        maxConnections,
        clockSkewAllowance,
        plugin);
  }

  public ProviderSettings withMaxConnections(int maxConnections) {
    return new ProviderSettings(
        kind,
        url,
        connectTimeout,
        requestTimeout,
        simFaults,
        simSeed,
        jdbc,
        maxConnections,
        clockSkewAllowance,
        plugin);
  }

  public ProviderSettings withClockSkewAllowance(Duration clockSkewAllowance) {
    return new ProviderSettings(
        kind,
        url,
        connectTimeout,
        requestTimeout,
        simFaults,
        simSeed,
        jdbc,
        maxConnections,
        clockSkewAllowance,
        plugin);
  }

  private static void requirePositive(String field, Duration value) {
    if (value.isZero() || value.isNegative()) {
      throw new IllegalArgumentException(field + " must be positive, got " + value);
    }
  }
}
