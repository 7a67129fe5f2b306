package io.fencekeeper.archive;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.DaemonThreads;
import io.fencekeeper.item.ItemTrails;
import io.fencekeeper.run.EndedRuns;
import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunItemStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.PreRestart;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.ClusterSingleton;
import org.apache.pekko.cluster.typed.SingletonActor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The retention keeper (docs/design.md, "Retention and the archive"): a small cluster singleton
 * that, once a day by the node's clock, archives and deletes the ended runs older than {@code
 * fencekeeper.retention.keep-ended-runs-for}, and on an operator's request ({@code POST
 * /api/archive/prune}) those that ended before a given instant. One pass at a time, on a thread of
 * its own; the pass stops at its next step when the singleton stops (it moves, or the node leaves),
 * and the next keeper finishes what it left.
 */
public final class RetentionKeeper {

  private static final Logger log = LoggerFactory.getLogger(RetentionKeeper.class);

  /** At most this many decisions come back with a plan; the count says how many there are. */
  public static final int MAX_LISTED = 500;

  /** After a pass that failed, the next one waits this long (not a day, not a minute). */
  static final Duration RETRY_AFTER_FAILURE = Duration.ofHours(1);

  /** What a keeper needs from its node. */
  public record Dependencies(
      ActorSystem<?> system,
      ActorRef<RunCoordinator.Command> coordinator,
      EndedRuns ended,
      RunItemStore store,
      ItemTrails trails,
      ArchiveViews views,
      RetentionSettings settings,
      Clock clock,
      String node,
      RetentionListener listener) {}

  public sealed interface Command extends CborSerializable {}

  /**
   * Prune the runs that ended before {@code endedBefore} now ({@code dryRun}: only say which); the
   * answer comes once the plan is made, the pass goes on after it.
   */
  public record Prune(Instant endedBefore, boolean dryRun, ActorRef<PruneAnswer> replyTo)
      implements Command {}

  record Check() implements Command {}

  /** A pass ended; {@code daily}: the daily one (it decides when the next is due). */
  record PassEnded(boolean daily, String failure) implements Command {}

  public sealed interface PruneAnswer extends CborSerializable {}

  /**
   * The plan of a pass: the first {@link #MAX_LISTED} decisions of {@code total}; {@code started}:
   * the pass goes on now (false in a dry run).
   */
  public record PrunePlanned(
      Instant endedBefore, boolean dryRun, boolean started, List<PruneDecision> runs, long total)
      implements PruneAnswer {}

  /** Another pass is running; nothing was started. */
  public record PruneRefused(String error, String message) implements PruneAnswer {}

  /** Starts (or connects to) the singleton; the returned ref is a proxy on every node. */
  public static ActorRef<Command> initSingleton(ActorSystem<?> system, Dependencies deps) {
    return ClusterSingleton.get(system)
        .init(
            SingletonActor.of(
                Behaviors.supervise(create(deps))
                    .onFailure(
                        SupervisorStrategy.restartWithBackoff(
                            Duration.ofSeconds(1), Duration.ofMinutes(1), 0.2)),
                "retention-keeper"));
  }

  static Behavior<Command> create(Dependencies deps) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> {
                  timers.startTimerWithFixedDelay(new Check(), deps.settings().checkInterval());
                  return new RetentionKeeper(ctx, deps).idle();
                }));
  }

  private final ActorContext<Command> ctx;
  private final Dependencies deps;
  private final AtomicBoolean stopped = new AtomicBoolean();
  private final ExecutorService thread;
  // when the next daily pass is due, by the node's clock; null: at the first check
  private Instant nextDaily;
  // when the running daily pass started, by the node's clock: the next is due a day after
  private Instant dailyStarted;

  private RetentionKeeper(ActorContext<Command> ctx, Dependencies deps) {
    this.ctx = ctx;
    this.deps = deps;
    this.thread = Executors.newSingleThreadExecutor(DaemonThreads.named("fencekeeper-retention"));
  }

  private Behavior<Command> idle() {
    return Behaviors.receive(Command.class)
        .onMessage(Check.class, c -> check())
        .onMessage(Prune.class, this::onDemand)
        .onMessage(PassEnded.class, this::passEnded)
        .onSignal(PostStop.class, s -> stop())
        .onSignal(PreRestart.class, s -> stop())
        .build();
  }

  private Behavior<Command> busy() {
    return Behaviors.receive(Command.class)
        .onMessage(Check.class, c -> Behaviors.same())
        .onMessage(
            Prune.class,
            p -> {
              p.replyTo()
                  .tell(
                      new PruneRefused(
                          "retention_busy",
                          "a retention pass is running; ask again when it has ended"));
              return Behaviors.same();
            })
        .onMessage(PassEnded.class, this::passEnded)
        .onSignal(PostStop.class, s -> stop())
        .onSignal(PreRestart.class, s -> stop())
        .build();
  }

  private Behavior<Command> stop() {
    stopped.set(true); // the pass stops at its next step; the next keeper finishes it
    thread.shutdown();
    return Behaviors.same();
  }

  /**
   * The daily pass, when a day has passed by the node's clock since the last one started (the first
   * one comes at the first check). With retention off it only finishes what an earlier pass began.
   */
  private Behavior<Command> check() {
    Instant now = deps.clock().instant();
    if (nextDaily != null && now.isBefore(nextDaily)) {
      return Behaviors.same();
    }
    Instant cutoff = deps.settings().cutoff(now).orElse(null);
    dailyStarted = now;
    ActorRef<Command> self = ctx.getSelf();
    thread.execute(
        () -> {
          String failure = null;
          try {
            new RetentionPass(deps, stopped::get)
                .run(cutoff, cutoff == null ? "retention off" : "daily");
          } catch (Exception e) {
            failure = summary(e);
          }
          self.tell(new PassEnded(true, failure));
        });
    return busy();
  }

  private Behavior<Command> onDemand(Prune prune) {
    ActorRef<Command> self = ctx.getSelf();
    thread.execute(
        () -> {
          RetentionPass pass = new RetentionPass(deps, stopped::get);
          RetentionPass.Plan plan = new RetentionPass.Plan(MAX_LISTED);
          try {
            pass.plan(prune.endedBefore(), plan);
          } catch (RuntimeException e) {
            prune.replyTo().tell(new PruneRefused("unavailable", "no plan: " + summary(e)));
            self.tell(new PassEnded(false, null));
            return;
          }
          prune
              .replyTo()
              .tell(
                  new PrunePlanned(
                      prune.endedBefore(),
                      prune.dryRun(),
                      !prune.dryRun(),
                      List.copyOf(plan.decisions),
                      plan.total));
          String failure = null;
          if (!prune.dryRun()) {
            try {
              pass.run(prune.endedBefore(), "on demand");
            } catch (Exception e) {
              failure = summary(e);
            }
          }
          self.tell(new PassEnded(false, failure));
        });
    return busy();
  }

  private Behavior<Command> passEnded(PassEnded ended) {
    Instant now = deps.clock().instant();
    if (ended.failure() != null) {
      log.error("retention pass failed, next one in {}: {}", RETRY_AFTER_FAILURE, ended.failure());
      nextDaily = now.plus(RETRY_AFTER_FAILURE);
    } else if (ended.daily()) {
      // a day after the pass started, not after it ended: the runs that came due while it ran
      // (a long pass, or a clock that moved on meanwhile) wait a day at most, never a day more
      nextDaily = dailyStarted.plus(Duration.ofDays(1));
    }
    return idle();
  }

  /** A failure as one line: its kind and message, never a trace. */
  static String summary(Throwable e) {
    Throwable cause = e.getCause() != null && e instanceof RuntimeException ? e.getCause() : e;
    String text = cause.getClass().getSimpleName() + ": " + cause.getMessage();
    return text.length() <= 500 ? text : text.substring(0, 500);
  }
}
