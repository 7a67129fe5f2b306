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
   */
  private static void awaitDeleted(BenchDatabase db, int tasks) throws Exception {
    try (java.sql.Connection c = db.connect();
        java.sql.Statement s = c.createStatement()) {
      while (true) {
        try (java.sql.ResultSet rs = s.executeQuery("SELECT count(*) FROM scheduled_tasks")) {
          rs.next();
          if (rs.getLong(1) == 0) {
            return;
          }
        }
        Thread.sleep(5);
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
      OneTimeTask<Void> task =
          Tasks.oneTime(body == NOOP ? "fencekeeper-bench-noop" : "fencekeeper-bench-calls")
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
        awaitDeleted(db, tasks);
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
