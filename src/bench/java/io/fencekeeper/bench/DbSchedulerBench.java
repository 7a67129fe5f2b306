package io.fencekeeper.bench;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.SchedulerClient;
import com.github.kagkarlsson.scheduler.task.TaskInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * The yardstick of docs/design.md, "Performance": db-scheduler executing N one-time tasks on the
 * same database, no-ops or a {@link Body} of the bench's choosing (the provider comparison's two
 * calls). The tasks are inserted first (untimed, like Fencekeeper's scope staging); the clock runs
 * from the scheduler's start until the last task has executed.
 */
final class DbSchedulerBench {

  /**
   * @param calls provider calls the tasks made (0 for no-ops)
   * @param failures tasks whose body threw; each still counts as executed, so the bench ends, and
   *     the caller decides (the provider comparison fails on its ledger)
   */
  record Result(
      String database,
      int tasks,
      int threads,
      String polling,
      double seconds,
      double tasksPerSecond,
      long calls,
      long failures,
      String firstFailure,
      ResourceMeter.Measured resources) {}

  /** What one task does for its account ({@code acct-<i>}); returns the provider calls made. */
  interface Body {
    int execute(String accountId) throws Exception;
  }

  static final Body NOOP = account -> 0;

  private DbSchedulerBench() {}

  /**
   * A one-time task is finished when db-scheduler has deleted its row, which happens just after the
   * task body ran; stop the clock there, as Fencekeeper's stops after the Complete is journaled.
   *
   * <p>The count has a condition on purpose, so that it scans: H2 answers a bare {@code count(*)}
   * from its row-count shortcut, which need not match a scan while other transactions change the
   * table. With the bare count, a smoke test on H2 once found a warm-up task still there when the
   * timed run inserted the same instance (a duplicate key), so the warm-up had ended early.
   */
  private static void awaitDeleted(BenchDatabase db, String taskName) throws Exception {
    // one connection for the whole wait: each new one would fork a PostgreSQL backend
    try (java.sql.Connection c = db.connect()) {
      while (remaining(c, taskName) > 0) {
        Thread.sleep(5);
      }
    }
  }

  /** The task's rows still in {@code scheduled_tasks}, counted by a scan, not a shortcut. */
  private static long remaining(java.sql.Connection c, String taskName) throws Exception {
    try (java.sql.PreparedStatement s =
        c.prepareStatement("SELECT count(*) FROM scheduled_tasks WHERE task_name = ?")) {
      s.setString(1, taskName);
      try (java.sql.ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  static Result run(BenchDatabase db, int tasks, int threads) throws Exception {
    return run(db, tasks, threads, NOOP, ProcessCpu.notMeasured("no sim process"));
  }

  static Result run(BenchDatabase db, int tasks, int threads, Body body, ProcessCpu sim)
      throws Exception {
    db.createSchedulerTable();
    HikariConfig pool = new HikariConfig();
    pool.setJdbcUrl(db.url());
    pool.setUsername(db.user());
    pool.setPassword(db.password());
    pool.setMaximumPoolSize(threads + 4);
    pool.setPoolName("db-scheduler-bench");
    try (HikariDataSource dataSource = new HikariDataSource(pool)) {
      CountDownLatch executed = new CountDownLatch(tasks);
      LongAdder calls = new LongAdder();
      LongAdder failures = new LongAdder();
      AtomicReference<String> firstFailure = new AtomicReference<>();
      String taskName = body == NOOP ? "fencekeeper-bench-noop" : "fencekeeper-bench-calls";
      long left;
      try (java.sql.Connection c = db.connect()) {
        left = remaining(c, taskName);
      }
      if (left > 0) {
        throw new IllegalStateException(
            left + " " + taskName + " tasks are still in scheduled_tasks from an earlier run");
      }
      OneTimeTask<Void> task =
          Tasks.oneTime(taskName)
              .execute(
                  (instance, ctx) -> {
                    try {
                      calls.add(body.execute(instance.getId()));
                    } catch (Exception e) {
                      // db-scheduler would retry it in five minutes; the bench records it instead
                      failures.increment();
                      firstFailure.compareAndSet(null, instance.getId() + ": " + e);
                    } finally {
                      executed.countDown();
                    }
                  });
      SchedulerClient client = SchedulerClient.Builder.create(dataSource, task).build();
      Instant due = Instant.now();
      List<TaskInstance<?>> batch = new ArrayList<>(1000);
      for (int i = 0; i < tasks; i++) {
        batch.add(task.instance("acct-" + i));
        if (batch.size() == 1000) {
          client.scheduleBatch(batch, due);
          batch.clear();
        }
      }
      if (!batch.isEmpty()) {
        client.scheduleBatch(batch, due);
      }
      // lock-and-fetch (UPDATE ... RETURNING with SKIP LOCKED) is PostgreSQL's; others fetch
      String polling = db.postgres() ? "lock-and-fetch(0.5, 3.0)" : "fetch-and-lock-on-execute";
      var builder =
          Scheduler.create(dataSource, task)
              .threads(threads)
              .pollingInterval(Duration.ofMillis(100));
      builder =
          db.postgres()
              ? builder.pollUsingLockAndFetch(0.5, 3.0)
              : builder.pollUsingFetchAndLockOnExecute(0.5, 3.0);
      Scheduler scheduler = builder.build();
      try (ResourceMeter meter = ResourceMeter.start(db.server(), sim)) {
        scheduler.start();
        if (!executed.await(30, TimeUnit.MINUTES)) {
          throw new IllegalStateException(
              "db-scheduler left " + executed.getCount() + " tasks after 30 minutes");
        }
        awaitDeleted(db, taskName);
        ResourceMeter.Measured measured = meter.stop();
        return new Result(
            db.name(),
            tasks,
            threads,
            polling,
            measured.wallSeconds(),
            tasks / measured.wallSeconds(),
            calls.sum(),
            failures.sum(),
            firstFailure.get(),
            measured);
      } finally {
        scheduler.stop();
      }
    }
  }
}
