package io.fencekeeper.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.fencekeeper.item.ItemAudit;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemTrails;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.node.NodeConfig;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunRequest;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Nodes of the cluster profile ({@code conf/cluster.conf}) with timings shrunk for tests, in the
 * same proportions as production: failure detection + resolver decision + removal margin stay below
 * the lease, so a downed node has stopped before its leases can expire elsewhere.
 *
 * <p>How far they are shrunk is set by the machine the suite runs on, not by a quiet one: two cores
 * shared by the suite's forks (and in CI by another busy core too). A JVM starting beside them
 * missed heartbeats for 1.2 s and more, which downed it under the earlier 1.2 s pause; 3 s of
 * acceptable pause is what the partition inequality leaves room for inside a 10 s lease: detection
 * 0.5 + 3 s, decision 2 s, removal margin 2 s: 7.5 s &lt; 10 s (docs/testing.md, "A process test on
 * a loaded machine").
 */
final class ClusterFixture {

  static final Path CLUSTER_CONF = Path.of("conf/cluster.conf").toAbsolutePath();
  static final LocalDate DATE = LocalDate.parse("2026-11-29");
  static final Duration LEASE = Duration.ofSeconds(10);

  private ClusterFixture() {}

  /** The test timings, as HOCON paths (also written into the process tests' config files). */
  static Map<String, Object> testTimings() {
    Map<String, Object> timings = new HashMap<>();
    timings.put("fencekeeper.lease", LEASE.toMillis() + "ms");
    timings.put("pekko.cluster.failure-detector.heartbeat-interval", "500ms");
    timings.put("pekko.cluster.failure-detector.acceptable-heartbeat-pause", "3s");
    timings.put("pekko.cluster.split-brain-resolver.stable-after", "2s");
    timings.put("pekko.cluster.split-brain-resolver.down-all-when-unstable", "6s");
    timings.put("pekko.cluster.sharding.rebalance-interval", "2s");
    timings.put("pekko.cluster.gossip-interval", "300ms");
    timings.put("pekko.cluster.leader-actions-interval", "300ms");
    timings.put("pekko.loglevel", "WARNING");
    // a leaving node drains its workers for 4/5 of it (worker.LeaveOnShutdown): shorter than the
    // lease, after which the leases run out anyway
    timings.put("pekko.coordinated-shutdown.phases.before-service-unbind.timeout", "5s");
    return timings;
  }

  static Map<String, Object> nodeOverrides(
      TestDatabases.Target db, Path dataDir, List<String> seeds, boolean worker) {
    Map<String, Object> overrides = new HashMap<>(testTimings());
    overrides.put("FENCEKEEPER_DB_URL", db.url());
    overrides.put("fencekeeper.db.url", db.url());
    overrides.put("fencekeeper.db.user", db.user());
    overrides.put("fencekeeper.db.password", db.password());
    overrides.put("fencekeeper.db.max-connections", 4);
    overrides.put("fencekeeper.data-dir", dataDir.toString());
    overrides.put("fencekeeper.seed-nodes", String.join(",", seeds));
    overrides.put("pekko.remote.artery.canonical.port", 0);
    overrides.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    if (!worker) {
      overrides.put("pekko.cluster.roles", List.of());
    }
    return overrides;
  }

  /** A node in this JVM; {@code seeds} empty makes it the first node (it joins itself). */
  static FencekeeperNode startNode(
      TestDatabases.Target db,
      Path dataDir,
      List<String> seeds,
      Provider provider,
      int workers,
      Map<String, Object> extra)
      throws TimeoutException {
    Map<String, Object> overrides = nodeOverrides(db, dataDir, seeds, workers > 0);
    overrides.putAll(extra);
    FencekeeperNode node =
        FencekeeperNode.builder(NodeConfig.load(Optional.of(CLUSTER_CONF), overrides))
            .provider(provider)
            .workers(workers)
            .start();
    return node.awaitUp(Duration.ofSeconds(60));
  }

  static List<AccountCursor> accounts(int count) {
    List<AccountCursor> accounts = new ArrayList<>();
    for (int i = 1; i <= count; i++) {
      accounts.add(new AccountCursor(String.format("acct-%05d", i), "cur-1"));
    }
    return accounts;
  }

  static RunView createRun(FencekeeperNode via, String job, List<AccountCursor> accounts)
      throws Exception {
    return createRun(via, job, accounts, null);
  }

  /** A run that calls the provider named {@code provider} (null: the default one). */
  static RunView createRun(
      FencekeeperNode via, String job, List<AccountCursor> accounts, String provider)
      throws Exception {
    RunRequest request =
        new RunRequest(
            job,
            DATE,
            new Scope.Inline(accounts),
            Instant.now().plus(Duration.ofHours(1)),
            20,
            0,
            provider);
    return assertInstanceOf(
            RunCoordinator.Created.class,
            via.runs().create(request).toCompletableFuture().get(60, TimeUnit.SECONDS))
        .run();
  }

  /** The run as the coordinator sees it; empty while the singleton is moving. */
  static Optional<RunView> view(FencekeeperNode via, String runId) {
    try {
      return via.runs().get(runId).toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      return Optional.empty();
    }
  }

  /** Waits until at least {@code done} items of the run are DONE (mid-run faults start there). */
  static void awaitDone(
      FencekeeperNode via, String runId, long done, Duration timeout, String what) {
    Await.until(
        timeout, what, () -> view(via, runId).map(r -> r.counts().done() >= done).orElse(false));
  }

  /** Waits for the run to end and returns it as it ended. */
  static RunView awaitEnded(FencekeeperNode via, String runId, Duration timeout) {
    return Await.until(
        timeout,
        "run " + runId + " to end",
        () -> view(via, runId).orElse(null),
        r -> r != null && r.state().ended());
  }

  /**
   * The item as its entity answers. A read that gets no answer in time (its shard moving after a
   * restart, a loaded machine: the gateway's ask timed out) is asked again.
   */
  static ItemView item(FencekeeperNode via, ItemId id) throws Exception {
    WorkItem.Reply reply =
        Await.until(
            Duration.ofSeconds(60),
            "item " + id.value() + " to answer",
            () -> {
              try {
                return via.items().get(id).toCompletableFuture().get(20, TimeUnit.SECONDS);
              } catch (Exception unanswered) {
                return null;
              }
            },
            answer -> answer != null);
    return assertInstanceOf(WorkItem.Accepted.class, reply).item();
  }

  /**
   * Every item DONE and exactly one effect at the provider per item that needed one (none for a
   * nothing-to-do item). Returns the effects-per-key histogram for the log.
   */
  static Map<Integer, Integer> assertOneEffectPerKey(
      FencekeeperNode via, String job, List<AccountCursor> accounts, Map<String, Integer> effects)
      throws Exception {
    Map<Integer, Integer> histogram = new TreeMap<>();
    views(via, itemIds(job, accounts))
        .forEach(
            (id, item) -> {
              assertEquals(WorkItem.Status.DONE, item.status(), id.value());
              int count = effects.getOrDefault(id.idempotencyKey(), 0);
              histogram.merge(count, 1, Integer::sum);
              int expected =
                  item.effectOutcome().kind() == WorkItem.OutcomeKind.NOTHING_TO_DO ? 0 : 1;
              assertEquals(expected, count, "effects at the provider for " + id);
            });
    return histogram;
  }

  /** The run's items, in the scope's order. */
  static List<ItemId> itemIds(String job, List<AccountCursor> accounts) {
    return accounts.stream()
        .map(account -> ItemId.of(job, DATE, account.accountId(), account.cursor()))
        .toList();
  }

  /**
   * Each item's journaled events, read from the journal's table 500 items a query ({@link
   * ItemTrails}, what the item pages read): a read-journal stream per item, or an ask to each
   * entity, took minutes for a run of thousands on a loaded machine.
   */
  static Map<ItemId, List<ItemAudit.Entry>> trails(FencekeeperNode via, List<ItemId> ids) {
    ItemTrails trails = new ItemTrails(via.system(), via.runItems().dataSource());
    Map<ItemId, List<ItemAudit.Entry>> all = new LinkedHashMap<>();
    for (List<ItemId> batch : batches(ids)) {
      all.putAll(trails.trails(batch));
    }
    return all;
  }

  /**
   * Each item as its journaled events make it, in the order asked: what its entity answers once it
   * has nothing more to write (a run that has ended).
   */
  static Map<ItemId, ItemView> views(FencekeeperNode via, List<ItemId> ids) {
    ItemTrails trails = new ItemTrails(via.system(), via.runItems().dataSource());
    Map<ItemId, ItemView> views = new LinkedHashMap<>();
    for (List<ItemId> batch : batches(ids)) {
      List<ItemView> read = trails.views(batch);
      for (int i = 0; i < batch.size(); i++) {
        views.put(batch.get(i), read.get(i));
      }
    }
    return views;
  }

  /** {@code ids} in pieces of at most the items one journal query reads. */
  private static List<List<ItemId>> batches(List<ItemId> ids) {
    List<List<ItemId>> batches = new ArrayList<>();
    for (int from = 0; from < ids.size(); from += ItemTrails.MAX_ITEMS) {
      batches.add(ids.subList(from, Math.min(ids.size(), from + ItemTrails.MAX_ITEMS)));
    }
    return batches;
  }

  /** Every lease ever granted for the run's items, read from the journal (the audit trail). */
  static List<WorkItem.LeaseGranted> leasesGranted(
      FencekeeperNode via, String job, List<AccountCursor> accounts) throws Exception {
    List<WorkItem.LeaseGranted> granted = new ArrayList<>();
    for (List<ItemAudit.Entry> trail : trails(via, itemIds(job, accounts)).values()) {
      for (ItemAudit.Entry entry : trail) {
        if (entry.event() instanceof WorkItem.LeaseGranted lease) {
          granted.add(lease);
        }
      }
    }
    return granted;
  }

  /** Worker ids are "{node address}/w{n}". */
  static String nodeOf(String workerId) {
    int slash = workerId.lastIndexOf("/w");
    return slash < 0 ? workerId : workerId.substring(0, slash);
  }
}
