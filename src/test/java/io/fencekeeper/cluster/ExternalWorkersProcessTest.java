package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.DATE;
import static io.fencekeeper.cluster.ClusterFixture.accounts;
import static io.fencekeeper.cluster.ClusterFixture.awaitEnded;
import static io.fencekeeper.cluster.ClusterFixture.createRun;
import static io.fencekeeper.cluster.ClusterFixture.item;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemAudit;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ChildJvm;
import io.fencekeeper.testing.ExampleWorkerBuild;
import io.fencekeeper.testing.ProcessTest;
import io.fencekeeper.testing.TestDatabases;
import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Issue 51's proof: external workers a team can trust. Two {@code serve} nodes with no workers of
 * their own host the items; three external worker processes of the example worker
 * (examples/external-worker, over the Java worker client) apply the run's cleanups to a PostgreSQL
 * target, fenced by token and keyed by the item's key:
 *
 * <ul>
 *   <li>the <b>crasher</b> first dies right after its first claim of each of a fixed set of items
 *       (a process per claim, halted as kill -9 would), then works as the others do;
 *   <li>the <b>pauser</b> is stopped (SIGSTOP) past its lease while it holds items, then woken;
 *   <li>the <b>lossy</b> worker talks to its node through a proxy that drops the answers of 5% of
 *       its claims (the lease was granted; the worker never heard).
 * </ul>
 *
 * At the default K = 2: one effect per key at the target (each account debited once, each item's
 * recorded effect the target's), no item quarantined, each crash item lost one holder and never
 * two, each dropped claim answered again with the same lease, counters equal to the journal, and
 * the run SUCCEEDED. The pause comes after the crash items are done: a crash item whose next holder
 * is paused past its lease has lost two holders in a row until that holder wakes, and is
 * quarantined meanwhile, as it would be with node workers (docs/external-workers.md, "Lost
 * holders").
 */
@ProcessTest
class ExternalWorkersProcessTest {

  static final Duration LEASE = Duration.ofSeconds(5);

  /**
   * The crasher's lease: long enough that its items wait, held by a dead process, until the pause
   * is over, so that no item is held by the crasher and then by the paused worker (two holders lost
   * in a row until the paused one wakes: quarantined meanwhile, as with node workers).
   */
  static final Duration CRASH_LEASE = Duration.ofSeconds(90);

  static final int ITEMS = 600;
  static final int CRASHES = 4;

  static final ProcessCluster.Launch NO_WORKERS =
      new ProcessCluster.Launch(
          List.of(), Map.of("FENCEKEEPER_WORKERS", "0", "FENCEKEEPER_HOST_SHARDS", "on"));

  @Test
  void crashPauseAndLostAnswersOfExternalWorkersLeaveOneEffectPerKeyAndNoQuarantine()
      throws Exception {
    try (ProcessCluster cluster = ProcessCluster.ofNodes(2, 0, Map.of(), n -> NO_WORKERS);
        AnswerDroppingProxy proxy =
            new AnswerDroppingProxy(cluster.nodes.get(1).httpPort(), 0.05, 51)) {
      TestDatabases.Target target = TestDatabases.freshPostgres();
      createTargetTables(target);
      String job = "external-workers";
      List<AccountCursor> accounts = accounts(ITEMS);
      RunView created = createRun(cluster.client, job, accounts);
      String runId = created.runId();
      String node1 = "http://127.0.0.1:" + cluster.nodes.get(0).httpPort();
      String node2 = "http://127.0.0.1:" + cluster.nodes.get(1).httpPort();

      // the crasher's first life: a claim, then death, on each item of its set
      Map<ItemId, String> crashedOn = new TreeMap<>((a, b) -> a.value().compareTo(b.value()));
      for (int i = 0; i < CRASHES; i++) {
        ItemId id = ItemId.of(job, DATE, accounts.get(i).accountId(), accounts.get(i).cursor());
        Path log = cluster.dir.resolve("crasher-" + i + ".log");
        Process crasher =
            start(
                List.of(
                    ClaimThenCrash.class.getName(),
                    node1,
                    id.value(),
                    String.valueOf(CRASH_LEASE.toMillis())),
                Map.of(),
                log);
        assertTrue(crasher.waitFor(60, TimeUnit.SECONDS), "the crasher dies: " + tail(log));
        Matcher claimed =
            Pattern.compile("claim 200 by (crasher-\\S+):").matcher(Files.readString(log));
        assertTrue(claimed.find(), "the crasher was granted its claim: " + tail(log));
        crashedOn.put(id, claimed.group(1));
      }

      // the three workers, the crasher's next life among them
      Process crashWorker = startWorker(cluster, "crasher", node1, runId, target);
      Process pauser = startWorker(cluster, "pauser", node2, runId, target);
      Process lossy =
          startWorker(cluster, "lossy", "http://127.0.0.1:" + proxy.port(), runId, target);
      Path pauserLog = cluster.dir.resolve("worker-pauser.log");

      // the pause, while the crasher's items still wait for its leases to end
      Await.until(
          Duration.ofSeconds(120),
          "the pauser working on items",
          () -> count(pauserLog, "applying ") >= 2);
      ProcessCluster.signal(pauser, "STOP");
      long pausedAt = System.nanoTime();
      // the fault itself: stopped until its leases have lapsed, whatever else happens meanwhile
      Await.until(
          LEASE.multipliedBy(4),
          "the pauser's leases lapsed",
          () -> System.nanoTime() - pausedAt > LEASE.plusSeconds(2).toNanos());
      ProcessCluster.signal(pauser, "CONT");
      for (ItemId id : crashedOn.keySet()) {
        assertEquals(
            crashedOn.get(id),
            item(cluster.client, id).owner(),
            "the crash items were still the dead crasher's when the pause ended: " + id.value());
      }

      RunView ended = awaitEnded(cluster.client, runId, Duration.ofSeconds(400));
      for (Process worker : List.of(crashWorker, pauser, lossy)) {
        assertTrue(worker.waitFor(90, TimeUnit.SECONDS), "a worker stops once the run ended");
        assertEquals(0, worker.exitValue());
      }

      // the run and the target
      assertEquals(RunState.SUCCEEDED, ended.state(), ended.toString());
      assertEquals(0, ended.quarantines(), "no item was ever quarantined: " + ended);
      Map<String, String> effects = new HashMap<>();
      Map<String, Long> balances = new HashMap<>();
      readTarget(target, effects, balances);
      assertEquals(ITEMS, effects.size(), "one effect per key at the target");
      Map<ItemId, ItemView> views =
          ClusterFixture.views(cluster.client, ClusterFixture.itemIds(job, accounts));
      for (AccountCursor account : accounts) {
        ItemId id = ItemId.of(job, DATE, account.accountId(), account.cursor());
        ItemView seen = views.get(id);
        assertEquals(WorkItem.Status.DONE, seen.status(), id.value());
        assertEquals(
            effects.get(id.idempotencyKey()),
            seen.effectOutcome().providerReference(),
            "the journal's effect is the target's: " + id.value());
        assertEquals(-1_000L, balances.get(account.accountId()), "debited once: " + id.value());
      }

      // the journal: counters, the crashes, the pause, the lost answers
      FaultOutcome.JournalCounts journal =
          FaultOutcome.JournalCounts.of(cluster.client, job, accounts);
      assertEquals(List.of(), journal.quarantined(), "no innocent item is quarantined");
      ProcessCluster.NodeProcess survivor = cluster.nodes.get(0);
      assertEquals(
          journal.asCounters(),
          FaultOutcome.viewCounters(survivor, runId),
          "the run view vs the journal");
      assertEquals(
          journal.asCounters(),
          FaultOutcome.metricCounters(survivor, runId),
          "/metrics vs the journal");

      Map<ItemId, List<ItemAudit.Entry>> trails =
          ClusterFixture.trails(cluster.client, ClusterFixture.itemIds(job, accounts));
      Map<String, Integer> grantsByRequest = new HashMap<>();
      Map<String, String> lastOwnerByRequest = new HashMap<>();
      long pauserStale = 0;
      for (AccountCursor account : accounts) {
        ItemId id = ItemId.of(job, DATE, account.accountId(), account.cursor());
        List<WorkItem.LeaseGranted> grants = new ArrayList<>();
        for (ItemAudit.Entry entry : trails.get(id)) {
          if (entry.event() instanceof WorkItem.LeaseGranted granted) {
            grants.add(granted);
            if (granted.requestId() != null) {
              grantsByRequest.merge(granted.requestId(), 1, Integer::sum);
            }
          }
        }
        for (int g = 0; g < grants.size(); g++) {
          // the request whose lease this was, and whether a later grant took it over
          WorkItem.LeaseGranted granted = grants.get(g);
          if (granted.requestId() != null) {
            lastOwnerByRequest.put(
                granted.requestId(), g == grants.size() - 1 ? "kept" : "taken over");
          }
        }
        pauserStale +=
            grants.stream()
                .filter(g -> g.previousOwner() != null && g.previousOwner().startsWith("pauser-"))
                .count();
        String crasher = crashedOn.get(id);
        if (crasher != null) {
          List<String> takenFrom =
              grants.stream()
                  .map(WorkItem.LeaseGranted::previousOwner)
                  .filter(owner -> owner != null)
                  .toList();
          assertEquals(List.of(crasher), takenFrom, "one holder lost, never two: " + id.value());
        }
      }
      assertTrue(
          pauserStale > 0, "the pauser held leases that lapsed while it was stopped (taken over)");
      List<String> dropped = proxy.dropped();
      assertFalse(dropped.isEmpty(), "the proxy dropped claim answers");
      for (String requestId : dropped) {
        assertEquals(
            1,
            grantsByRequest.getOrDefault(requestId, 0),
            "a dropped claim answer, asked again, was one grant: " + requestId);
        assertEquals(
            "kept",
            lastOwnerByRequest.get(requestId),
            "its worker learnt of the lease and finished it: " + requestId);
      }
      System.out.printf(
          "EXTERNAL-WORKERS: %d items, %d crashes, %d leases of the pauser taken over, %d claim"
              + " answers dropped, journal %s%n",
          ITEMS, CRASHES, pauserStale, dropped.size(), journal.asCounters());
    }
  }

  /** The example worker as a process of its own: the example's main over this build's classes. */
  private static Process startWorker(
      ProcessCluster cluster, String name, String node, String runId, TestDatabases.Target target)
      throws Exception {
    Map<String, String> env = new HashMap<>();
    env.put("FENCEKEEPER_URL", node);
    env.put("FENCEKEEPER_RUN", runId);
    env.put("TARGET_JDBC_URL", target.url());
    env.put("TARGET_USER", target.user());
    env.put("TARGET_PASSWORD", target.password());
    env.put("WORKER_NAME", name);
    env.put("WORKER_CONCURRENCY", "2");
    env.put("WORKER_LEASE_MS", String.valueOf(LEASE.toMillis()));
    env.put("EXAMPLE_WORK_MS", "300");
    return start(
        List.of(ExampleWorkerBuild.MAIN), env, cluster.dir.resolve("worker-" + name + ".log"));
  }

  /** A child JVM of this build with the example's classes added to its class path. */
  private static Process start(List<String> main, Map<String, String> env, Path log)
      throws Exception {
    List<String> command = new ArrayList<>(ChildJvm.command());
    int cp = command.indexOf("-cp");
    command.set(cp + 1, command.get(cp + 1) + File.pathSeparator + ExampleWorkerBuild.classes());
    command.addAll(main);
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().putAll(env);
    builder.environment().remove("FENCEKEEPER_API_TOKEN");
    return builder.redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }

  private static void createTargetTables(TestDatabases.Target target) throws Exception {
    try (URLClassLoader example =
        new URLClassLoader(
            new URL[] {ExampleWorkerBuild.classes().toUri().toURL()},
            ExternalWorkersProcessTest.class.getClassLoader())) {
      Class<?> targetClass =
          example.loadClass("io.fencekeeper.examples.worker.ReconciliationTarget");
      Object db =
          targetClass
              .getConstructor(String.class, String.class, String.class)
              .newInstance(target.url(), target.user(), target.password());
      targetClass.getMethod("createTables").invoke(db);
    }
  }

  private static void readTarget(
      TestDatabases.Target target, Map<String, String> effects, Map<String, Long> balances)
      throws Exception {
    try (Connection c =
            DriverManager.getConnection(target.url(), target.user(), target.password());
        Statement s = c.createStatement()) {
      try (ResultSet rs = s.executeQuery("SELECT idempotency_key, effect_id FROM cleanup_effect")) {
        while (rs.next()) {
          effects.put(rs.getString(1), rs.getString(2));
        }
      }
      try (ResultSet rs = s.executeQuery("SELECT account_id, balance_minor FROM account_balance")) {
        while (rs.next()) {
          balances.put(rs.getString(1), rs.getLong(2));
        }
      }
    }
  }

  private static int count(Path log, String text) {
    try {
      String all = Files.readString(log);
      int n = 0;
      for (int at = all.indexOf(text); at >= 0; at = all.indexOf(text, at + 1)) {
        n++;
      }
      return n;
    } catch (java.io.IOException e) {
      return 0;
    }
  }

  private static String tail(Path log) {
    return ProcessCluster.tail(log);
  }
}
