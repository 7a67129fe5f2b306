package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.provider.ProviderTestSupport;
import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ChildJvm;
import io.fencekeeper.testing.ProcessTest;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.testing.TestNodes;
import java.io.BufferedReader;
import java.io.InputStreamReader;
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
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The provider issue's judgement: a run against {@code sim-provider} started as its own process
 * with every fault flag on (accept-then-time-out 20 %, throttling, 5xx 5 %, latency and jitter)
 * finishes with exactly one effect per key, in idempotent mode and in non-idempotent mode where
 * only reconciliation prevents duplicates. The journal is a real PostgreSQL.
 */
@ProcessTest
class FaultMatrixTest {

  static final LocalDate DATE = LocalDate.parse("2026-11-29");
  static final int ITEMS = 2000;
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(1);

  @Test
  void everyFaultOnIdempotentProviderEndsWithOneEffectPerKey() throws Exception {
    runAgainstFaultySimProcess("faults-idempotent", List.of());
  }

  @Test
  void everyFaultOnNonIdempotentProviderEndsWithOneEffectPerKeyThroughReconciliation()
      throws Exception {
    RunView ended =
        runAgainstFaultySimProcess("faults-non-idempotent", List.of("--non-idempotent"));
    assertTrue(ended.reconciliations() > 0, "reconciliation did the work: " + ended);
  }

  RunView runAgainstFaultySimProcess(String job, List<String> extraFlags) throws Exception {
    List<String> command = new ArrayList<>(ChildJvm.command());
    command.addAll(
        List.of(
            "io.fencekeeper.cli.Main",
            "sim-provider",
            "--port",
            "0",
            "--seed",
            "7",
            "--latency-ms",
            "1",
            "--jitter-ms",
            "2",
            "--timeout-after-accept",
            "0.2",
            "--throttle-per-second",
            "400",
            "--error-rate",
            "0.05"));
    command.addAll(extraFlags);
    Process sim = new ProcessBuilder(command).redirectErrorStream(true).start();
    Path dataDir = Files.createTempDirectory("fencekeeper-faults");
    FencekeeperNode node = null;
    HttpProvider provider = null;
    try {
      URI simUrl = awaitListening(sim);
      // a sim at 1-3 ms answers well within a second; every cleanup cut off after the send waits
      // for its deadline (send + request timeout) and the allowance before its lookup
      provider = HttpProvider.create(simUrl, Duration.ofSeconds(2), REQUEST_TIMEOUT);
      Map<String, Object> overrides = TestNodes.overrides(TestDatabases.freshPostgres(), dataDir);
      // the client's own request timeout, which the cleanup deadlines are made of
      overrides.put("fencekeeper.provider.request-timeout", REQUEST_TIMEOUT.toMillis() + "ms");
      overrides.put("fencekeeper.provider.clock-skew-allowance", "100ms");
      node =
          FencekeeperNode.builder(FencekeeperNode.config(overrides))
              .provider(provider)
              .workers(32)
              .start()
              .awaitUp(Duration.ofSeconds(30));
      List<AccountCursor> accounts = new ArrayList<>();
      for (int i = 1; i <= ITEMS; i++) {
        accounts.add(new AccountCursor(String.format("acct-%05d", i), "cur-1"));
      }
      RunRequest request =
          new RunRequest(
              job,
              DATE,
              new Scope.Inline(accounts),
              Instant.now().plus(Duration.ofHours(1)),
              30,
              0);
      RunView created =
          assertInstanceOf(
                  RunCoordinator.Created.class,
                  node.runs().create(request).toCompletableFuture().get(60, TimeUnit.SECONDS))
              .run();
      FencekeeperNode running = node;
      RunView ended =
          Await.until(
              Duration.ofMinutes(4),
              "the run to end",
              () -> view(running, created.runId()),
              r -> r.state().ended());
      assertEquals(RunState.SUCCEEDED, ended.state(), ended.toString());

      Map<String, Integer> effects = ProviderTestSupport.effectsPerKey(simUrl);
      Map<Integer, Integer> histogram = new TreeMap<>();
      int withAction = 0;
      for (AccountCursor account : accounts) {
        ItemId id = ItemId.of(job, DATE, account.accountId(), account.cursor());
        ItemView item =
            assertInstanceOf(
                    WorkItem.Accepted.class,
                    node.items().get(id).toCompletableFuture().get(10, TimeUnit.SECONDS))
                .item();
        assertEquals(WorkItem.Status.DONE, item.status());
        int count = effects.getOrDefault(id.idempotencyKey(), 0);
        histogram.merge(count, 1, Integer::sum);
        if (item.effectOutcome().kind() != WorkItem.OutcomeKind.NOTHING_TO_DO) {
          withAction++;
          assertEquals(1, count, "effects at the provider for " + id);
        } else {
          assertEquals(0, count, "no effect for a nothing-to-do item " + id);
        }
      }
      System.out.printf(
          "fault matrix %s: %d items, %d with an action, effects-per-key histogram %s,"
              + " reconciliations %d, stale rejections %d, takeovers %d%n",
          job,
          ITEMS,
          withAction,
          histogram,
          ended.reconciliations(),
          ended.staleRejections(),
          ended.takeovers());
      return ended;
    } finally {
      if (node != null) {
        node.close();
      }
      if (provider != null) {
        provider.close();
      }
      sim.destroy();
      sim.waitFor(10, TimeUnit.SECONDS);
    }
  }

  static RunView view(FencekeeperNode node, String runId) {
    try {
      return node.runs().get(runId).toCompletableFuture().get(10, TimeUnit.SECONDS).orElseThrow();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static URI awaitListening(Process sim) throws Exception {
    BufferedReader out =
        new BufferedReader(new InputStreamReader(sim.getInputStream(), StandardCharsets.UTF_8));
    Pattern listening = Pattern.compile("listening on (http://\\S+)");
    CompletableFuture<URI> url =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                String line;
                while ((line = out.readLine()) != null) {
                  Matcher m = listening.matcher(line);
                  if (m.find()) {
                    URI found = URI.create(m.group(1));
                    // keep draining so the process never blocks on a full pipe
                    Thread drain =
                        new Thread(
                            () -> {
                              try {
                                while (out.readLine() != null) {
                                  // discard
                                }
                              } catch (Exception ignored) {
                                // the process ended
                              }
                            });
                    drain.setDaemon(true);
                    drain.start();
                    return found;
                  }
                }
                throw new IllegalStateException("sim-provider exited before listening");
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    return url.get(60, TimeUnit.SECONDS);
  }
}
