package io.fencekeeper.verify;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import com.sun.net.httpserver.HttpServer;
import io.fencekeeper.api.HttpApi;
import io.fencekeeper.api.http.ApiSettings;
import io.fencekeeper.api.metrics.ApiMetrics;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.provider.sim.SimProviderServer;
import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunRequest;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.testing.TestNodes;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * A real node (its journal on {@code db}) whose default provider is a simulated provider over real
 * HTTP that outlives the node, so a test can stop the node and start it again on the same journal
 * and provider; and the steps of a verification test. {@link #refuseLookups} sends the lookups to a
 * real HTTP server that answers 403 to everything, as a provider that refuses a verifier would.
 */
public final class VerifyFixture implements AutoCloseable {

  public static final Duration WAIT = Duration.ofSeconds(120);
  public static final LocalDate DATE = LocalDate.parse("2026-11-29");

  public final Path dataDir;
  public final TestDatabases.Target db;
  public final SimProviderServer sim;
  private final HttpProvider provider;
  private final AtomicReference<Provider> lookups = new AtomicReference<>();
  private HttpServer refusing;
  private HttpProvider refused;
  public FencekeeperNode node;

  public VerifyFixture(Function<Path, TestDatabases.Target> database, long seed) throws Exception {
    dataDir = Files.createTempDirectory("fencekeeper-verify");
    db = database.apply(dataDir);
    sim = SimProviderServer.start(0, SimFaults.NONE, seed);
    provider = HttpProvider.create(sim.baseUrl(), Duration.ofSeconds(2), Duration.ofSeconds(10));
    lookups.set(provider);
  }

  /** From now on every lookup is answered 403 (a permanent refusal); plans and cleanups are not. */
  public void refuseLookups() throws IOException {
    if (refused != null) {
      lookups.set(refused);
      return;
    }
    refusing = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    refusing.createContext(
        "/",
        exchange -> {
          byte[] body =
              "{\"error\":\"forbidden\",\"message\":\"this caller may not look keys up\"}"
                  .getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(403, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    refusing.start();
    refused =
        HttpProvider.create(
            URI.create("http://127.0.0.1:" + refusing.getAddress().getPort() + "/"),
            Duration.ofSeconds(2),
            Duration.ofSeconds(5));
    lookups.set(refused);
  }

  /** Lookups go to the sim again. */
  public void acceptLookups() {
    lookups.set(provider);
  }

  /** The sim, except for lookups once {@link #refuseLookups} was called. */
  private final Provider routed =
      new Provider() {
        @Override
        public CompletionStage<Plan> plan(ItemId item) {
          return provider.plan(item);
        }

        @Override
        public CompletionStage<Receipt> apply(Cleanup cleanup) {
          return provider.apply(cleanup);
        }

        @Override
        public CompletionStage<Optional<Receipt>> lookup(ItemId item, String idempotencyKey) {
          return lookups.get().lookup(item, idempotencyKey);
        }

        @Override
        public void close() {}
      };

  /**
   * The node's HTTP API on a free loopback port with {@code token} (and the read token the node's
   * configuration names, if any), reporting to {@code metrics}; its base URL.
   */
  public String startApi(String token, ApiMetrics metrics) throws Exception {
    var binding =
        HttpApi.start(node, ApiSettings.from(node.settings()).withPort(0).withToken(token), metrics)
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    return "http://127.0.0.1:" + binding.localAddress().getPort();
  }

  /** Starts the node (again), with {@code workers} workers and config overrides. */
  public FencekeeperNode startNode(int workers, Map<String, Object> more) throws Exception {
    Map<String, Object> overrides = TestNodes.overrides(db, dataDir);
    overrides.putAll(more);
    node =
        FencekeeperNode.builder(FencekeeperNode.config(overrides))
            .provider(routed)
            .workers(workers)
            .start()
            .awaitUp(Duration.ofSeconds(30));
    return node;
  }

  public static List<AccountCursor> accounts(int count) {
    List<AccountCursor> accounts = new ArrayList<>(count);
    for (int i = 1; i <= count; i++) {
      accounts.add(new AccountCursor(String.format("acct-%05d", i), "c-" + (i % 3)));
    }
    return accounts;
  }

  public RunView create(String job, List<AccountCursor> accounts) throws Exception {
    RunRequest request =
        new RunRequest(
            job,
            DATE,
            new Scope.Inline(accounts),
            Instant.now().plus(Duration.ofHours(1)),
            5,
            accounts.size());
    RunCoordinator.CreateReply reply =
        node.runs().create(request).toCompletableFuture().get(60, TimeUnit.SECONDS);
    return assertInstanceOf(RunCoordinator.Created.class, reply).run();
  }

  public RunView awaitEnded(String runId) {
    return Await.until(
        WAIT,
        "run " + runId + " to end",
        () -> node.runs().get(runId).toCompletableFuture().join().orElseThrow(),
        run -> run.state().ended());
  }

  public VerificationKeeper.StartReply verify(String runId, long sample, OptionalLong seed)
      throws Exception {
    return node.verifications()
        .start(runId, sample, seed)
        .toCompletableFuture()
        .get(30, TimeUnit.SECONDS);
  }

  /** Starts a verification that must be accepted; its first view. */
  public VerificationView started(String runId, long sample, OptionalLong seed) throws Exception {
    VerificationKeeper.StartReply reply = verify(runId, sample, seed);
    return assertInstanceOf(VerificationKeeper.Accepted.class, reply, reply.toString()).view();
  }

  public VerificationView awaitConcluded(String runId, int number) {
    return Await.until(
            WAIT,
            "verification " + number + " of " + runId + " to end",
            () -> node.verifications().get(runId, number).toCompletableFuture().join(),
            v -> v.isPresent() && v.get().status() != VerificationView.Status.RUNNING)
        .orElseThrow();
  }

  public List<Finding> findings(VerificationView view) throws Exception {
    return node.verifications()
        .findings(view)
        .runWith(Sink.seq(), node.system())
        .toCompletableFuture()
        .get(30, TimeUnit.SECONDS);
  }

  /** Lookups per key at the sim since {@code before} (a snapshot of {@code sim.lookups()}). */
  public Map<String, Long> lookupsSince(Map<String, Long> before) {
    Map<String, Long> diff = new TreeMap<>();
    sim.lookups()
        .forEach(
            (key, n) -> {
              long more = n - before.getOrDefault(key, 0L);
              if (more > 0) {
                diff.put(key, more);
              }
            });
    return diff;
  }

  @Override
  public void close() {
    if (node != null) {
      node.close();
    }
    provider.close();
    sim.close();
    if (refusing != null) {
      refused.close();
      refusing.stop(0);
    }
  }
}
