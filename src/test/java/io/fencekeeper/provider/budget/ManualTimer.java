package io.fencekeeper.provider.budget;

import java.time.Duration;
import java.util.PriorityQueue;

/** A clock in nanoseconds and a timer that only moves when the test says so. */
final class ManualTimer implements PermitPool.Timer {

  private record Task(long at, long seq, Runnable run, boolean[] cancelled) {}

  private final PriorityQueue<Task> due =
      new PriorityQueue<>(
          (a, b) ->
              a.at() != b.at() ? Long.compare(a.at(), b.at()) : Long.compare(a.seq(), b.seq()));
  private long now;
  private long seq;

  long nanos() {
    return now;
  }

  @Override
  public synchronized Runnable schedule(Duration delay, Runnable task) {
    boolean[] cancelled = {false};
    due.add(new Task(now + delay.toNanos(), seq++, task, cancelled));
    return () -> cancelled[0] = true;
  }

  /** Moves time on, running what falls due on the way, in order. */
  void advance(Duration by) {
    long target = now + by.toNanos();
    while (true) {
      Task next;
      synchronized (this) {
        next = due.peek();
        if (next == null || next.at() > target) {
          break;
        }
        due.poll();
        now = Math.max(now, next.at());
      }
      if (!next.cancelled()[0]) {
        next.run().run();
      }
    }
    now = target;
  }
}
