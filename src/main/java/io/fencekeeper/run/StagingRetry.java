package io.fencekeeper.run;

import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * How a staging waits out a transient fault: a database connection lost or refused (an outage, a
 * restart, a failover), or the coordinator not answering while it fails over. The step is tried
 * again after a back-off of 0.5 s doubling to 5 s, for as long as the run's deadline is ahead; any
 * other failure, or {@link StagingLost}, goes straight to the caller. {@link #isTransient} and
 * {@link #backOff} are the rule, pure; {@link #call} carries it out on the staging's own thread.
 */
final class StagingRetry {

  /** A step of a staging; it may be tried again, so it starts from what is committed. */
  interface Step<T> {
    T run() throws Exception;
  }

  /** The staging could not go on before its run's deadline; the last fault is the cause. */
  static final class GaveUp extends RuntimeException {
    GaveUp(String what, Throwable fault) {
      super(
          "could not "
              + what
              + " before the run's deadline: "
              + describe(fault)
              + " (retried since the fault)",
          fault);
    }
  }

  static final Duration FIRST_BACK_OFF = Duration.ofMillis(500);
  static final Duration MAX_BACK_OFF = Duration.ofSeconds(5);

  /**
   * SQLStates of a fault that passes: the connection classes (08: lost, refused, broken), the
   * server shutting down or starting (57P01 "terminating connection due to administrator command",
   * 57P02, 57P03), too many connections (53300), and a transaction the server chose to abort (40001
   * serialization, 40P01 deadlock).
   */
  private static final Set<String> TRANSIENT_STATES =
      Set.of("57P01", "57P02", "57P03", "53300", "40001", "40P01");

  private final Instant deadline;
  private final Clock clock;
  private final Consumer<String> onFault;

  /**
   * @param onFault told of each fault waited out, described without its message (which may name the
   *     database's host): the run shows it while staging waits
   */
  StagingRetry(Instant deadline, Clock clock, Consumer<String> onFault) {
    this.deadline = deadline;
    this.clock = clock;
    this.onFault = onFault;
  }

  /** Runs {@code step}, again after each transient fault, until it succeeds or the deadline. */
  <T> T call(String what, Step<T> step) {
    for (int attempt = 1; ; attempt++) {
      try {
        return step.run();
      } catch (StagingLost lost) {
        throw lost;
      } catch (Exception e) {
        if (!isTransient(e)) {
          throw e instanceof RuntimeException runtime ? runtime : new IllegalStateException(e);
        }
        pause(what, e, attempt);
      }
    }
  }

  /** Waits out the {@code attempt}th fault in a row; throws {@link GaveUp} past the deadline. */
  void pause(String what, Throwable fault, int attempt) {
    Duration wait = backOff(attempt);
    if (!clock.instant().plus(wait).isBefore(deadline)) {
      throw new GaveUp(what, fault);
    }
    onFault.accept("waiting to " + what + ": " + describe(fault) + "; retrying");
    try {
      Thread.sleep(wait.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("staging interrupted while waiting out a fault", e);
    }
  }

  /** Whether {@code failure}, or a cause of it, is a fault that passes. */
  static boolean isTransient(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SQLTransientException
          || t instanceof SQLRecoverableException
          || t instanceof TimeoutException) {
        return true;
      }
      if (t instanceof SQLException sql && isTransientState(sql.getSQLState())) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  static boolean isTransientState(String sqlState) {
    return sqlState != null && (sqlState.startsWith("08") || TRANSIENT_STATES.contains(sqlState));
  }

  /** 0.5 s, 1 s, 2 s, 4 s, then 5 s: a short outage is over soon after it ends. */
  static Duration backOff(int attempt) {
    long millis = FIRST_BACK_OFF.toMillis() << Math.min(Math.max(attempt - 1, 0), 10);
    return Duration.ofMillis(Math.min(millis, MAX_BACK_OFF.toMillis()));
  }

  /**
   * A fault as the run shows it: its SQLState or kind, never its message (a driver's message may
   * name the database's host and port, or quote a value).
   */
  static String describe(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql && sql.getSQLState() != null) {
        return "a database connection failed (SQLState " + sql.getSQLState() + ")";
      }
      if (t instanceof TimeoutException) {
        return "no answer in time (" + t.getClass().getSimpleName() + ")";
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return "a database connection failed (" + failure.getClass().getSimpleName() + ")";
  }
}
