package io.fencekeeper.run;

import io.fencekeeper.run.RunCoordinator.Command;
import java.time.Duration;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.stream.UniqueKillSwitch;

/**
 * When the coordinator wakes (docs/design.md, "Runs and the coordinator"): while it holds a run,
 * the deadline check every 250 ms, the steering every fourth of those, and the live projection of
 * the counters; with no run, a look once a minute, the projection stopped a minute after the last
 * run left, and the tagged events written meanwhile caught up once a minute. An idle cluster must
 * not wake four times a second for nothing.
 */
final class CoordinatorTicks {

  static final String TICK = "tick";
  static final String IDLE_TICK = "idle-tick";
  static final Duration TICK_EVERY = Duration.ofMillis(250);

  /** The second's work (slices, governors, pokes) every this many ticks of the deadline check. */
  static final int STEER_EVERY_TICKS = 4;

  /** With no run held, the coordinator looks around this rarely. */
  static final Duration IDLE_EVERY = Duration.ofSeconds(60);

  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;
  private UniqueKillSwitch projection;
  private long ticks;
  private long idleSinceNanos = System.nanoTime();

  CoordinatorTicks(ActorContext<Command> ctx, TimerScheduler<Command> timers) {
    this.ctx = ctx;
    this.timers = timers;
    timers.startTimerWithFixedDelay(IDLE_TICK, new RunCoordinator.IdleTick(), IDLE_EVERY);
  }

  /** A run is held: the deadline check runs, and the projection counts from {@code offset}. */
  void wake(long offset) {
    if (!timers.isTimerActive(TICK)) {
      timers.startTimerWithFixedDelay(TICK, new RunCoordinator.Tick(), TICK_EVERY);
    }
    if (projection == null) {
      projection = SignalProjection.start(ctx.getSystem(), offset, ctx.getSelf());
    }
  }

  /** Counts a tick; true on the ones the second's work is due. */
  boolean steerNow() {
    return ++ticks % STEER_EVERY_TICKS == 0;
  }

  /** Nothing held: the ticks stop, and the idle tick looks once a minute. */
  void sleep() {
    timers.cancel(TICK);
    idleSinceNanos = System.nanoTime();
  }

  /**
   * Idle: the live projection stops a minute after the last run left (it polls the journal every
   * second); while it is stopped, the tagged events written since (a late holder refused after a
   * run ended) are counted from {@code offset}.
   */
  void idleTick(long offset) {
    if (timers.isTimerActive(TICK)) {
      return;
    }
    if (projection == null) {
      SignalProjection.catchUp(ctx.getSystem(), offset, ctx.getSelf());
    } else if (System.nanoTime() - idleSinceNanos >= IDLE_EVERY.toNanos()) {
      stopProjection();
    }
  }

  void stopProjection() {
    if (projection != null) {
      projection.shutdown();
      projection = null;
    }
  }
}
