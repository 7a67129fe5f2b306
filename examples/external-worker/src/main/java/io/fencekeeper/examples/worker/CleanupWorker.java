package io.fencekeeper.examples.worker;

import io.fencekeeper.sdk.worker.FencekeeperWorker;
import io.fencekeeper.sdk.worker.Item;
import io.fencekeeper.sdk.worker.ItemHandler;
import io.fencekeeper.sdk.worker.Lease;
import io.fencekeeper.sdk.worker.Outcome;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;

/**
 * An external worker of one Fencekeeper run: claims the run's items from a node and voids each
 * account's duplicate capture in a PostgreSQL database, fenced by the lease's token and
 * deduplicated by the item's idempotency key ({@link ReconciliationTarget}). Configured by the
 * environment (README.md); stops when the run has ended, and on SIGTERM lets the items in hand
 * finish first.
 */
public final class CleanupWorker implements ItemHandler {

  private final ReconciliationTarget target;
  private final Duration margin;
  private final Duration workPerItem;

  public CleanupWorker(ReconciliationTarget target, Duration lease, Duration workPerItem) {
    this.target = target;
    Duration tenth = lease.dividedBy(10);
    this.margin = tenth.compareTo(Duration.ofSeconds(2)) > 0 ? Duration.ofSeconds(2) : tenth;
    this.workPerItem = workPerItem;
  }

  @Override
  public Outcome apply(Item item, Lease lease) throws Exception {
    System.out.println("applying " + item.itemId() + " token " + lease.fencingToken());
    if (!workPerItem.isZero()) {
      Thread.sleep(workPerItem.toMillis()); // the time a real cleanup takes to plan
    }
    return target.apply(item, lease, margin);
  }

  @Override
  public Optional<Outcome> lookup(Item item, Lease lease) throws Exception {
    return target.lookup(item.idempotencyKey());
  }

  public static void main(String[] args) throws Exception {
    URI node = URI.create(required("FENCEKEEPER_URL"));
    String runId = required("FENCEKEEPER_RUN");
    Duration lease = Duration.ofMillis(Long.parseLong(env("WORKER_LEASE_MS", "30000")));
    ReconciliationTarget target =
        new ReconciliationTarget(
            required("TARGET_JDBC_URL"), env("TARGET_USER", ""), env("TARGET_PASSWORD", ""));
    target.createTables();
    CleanupWorker handler =
        new CleanupWorker(
            target, lease, Duration.ofMillis(Long.parseLong(env("EXAMPLE_WORK_MS", "0"))));
    FencekeeperWorker worker =
        FencekeeperWorker.builder(node, runId, handler)
            .name(env("WORKER_NAME", "cleanup"))
            .lease(lease)
            .concurrency(Integer.parseInt(env("WORKER_CONCURRENCY", "4")))
            .events(event -> System.out.println("worker: " + event))
            .build();
    // SIGTERM: no new claim; the items in hand finish within a lease, then the process exits
    Runtime.getRuntime().addShutdownHook(new Thread(() -> worker.close(lease)));
    System.out.println("worker " + worker.workerId() + " started on " + runId);
    worker.start();
    while (!worker.awaitStopped(Duration.ofSeconds(60))) {
      // still working
    }
    System.out.println("worker stopped: " + worker.stoppedBecause().orElse("?"));
  }

  private static String required(String name) {
    String value = System.getenv(name);
    if (value == null || value.isEmpty()) {
      System.err.println(name + " is required (see README.md)");
      System.exit(78);
    }
    return value;
  }

  private static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }
}
