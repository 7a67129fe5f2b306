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

/**
 * The yardstick of docs/design.md, "Performance": db-scheduler executing N no-op one-time tasks on the same database.
 * The tasks are inserted first (untimed, like Fencekeeper's scope staging); the clock runs from the
 * scheduler's start until the last task has executed.
 */
final class DbSchedulerBench {

  record Result(
      String database,
      int tasks,
      int threads,
      String polling,
      double seconds,
      double tasksPerSecond,
      ResourceMeter.Measured resources) {}

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
    db.createSchedulerTable();
    HikariConfig pool = new HikariConfig();
    pool.setJdbcUrl(db.url());
    pool.setUsername(db.user());
    pool.setPassword(db.password());
    pool.setMaximumPoolSize(threads + 4);
    pool.setPoolName("db-scheduler-bench");
    try (HikariDataSource dataSource = new HikariDataSource(pool)) {
      CountDownLatch executed = new CountDownLatch(tasks);
      OneTimeTask<Void> noop =
          Tasks.oneTime("fencekeeper-bench-noop").execute((instance, ctx) -> executed.countDown());
      SchedulerClient client = SchedulerClient.Builder.create(dataSource, noop).build();
      Instant due = Instant.now();
      List<TaskInstance<?>> batch = new ArrayList<>(1000);
      for (int i = 0; i < tasks; i++) {
        batch.add(noop.instance("t" + i));
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
          Scheduler.create(dataSource, noop)
              .threads(threads)
              .pollingInterval(Duration.ofMillis(100));
      builder =
          db.postgres()
              ? builder.pollUsingLockAndFetch(0.5, 3.0)
              : builder.pollUsingFetchAndLockOnExecute(0.5, 3.0);
      Scheduler scheduler = builder.build();
      try (ResourceMeter meter = ResourceMeter.start()) {
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
            measured);
      } finally {
        scheduler.stop();
      }
    }
  }
}
