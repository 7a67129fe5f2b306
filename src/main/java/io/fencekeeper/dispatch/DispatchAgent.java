package io.fencekeeper.dispatch;

import io.fencekeeper.item.WorkItem;
import io.fencekeeper.worker.WorkProtocol.ToDispatcher;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.sharding.ClusterSharding;
import org.apache.pekko.cluster.sharding.ShardRegion;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;
import org.apache.pekko.pattern.Patterns;

/**
 * A node's side of dispatch (docs/design.md, "Dispatch on every node"): runs one {@link
 * NodeDispatcher} per run the coordinator assigns it, tells them which item shards this node hosts
 * (its own shard region's figures, read once a second while a run is assigned: nothing
 * cluster-wide, nothing while idle), and passes their reports on to the coordinator.
 */
public final class DispatchAgent {

  /** How often the hosted shards are read while a run is dispatched here. */
  static final Duration POLL = Duration.ofSeconds(1);

  /** Right after a run is assigned its shards are being allocated: read them more often. */
  static final Duration FAST_POLL = Duration.ofMillis(200);

  static final int FAST_POLLS = 10;

  private DispatchAgent() {}

  private record Poll() implements DispatchProtocol.ToAgent {}

  /** A member left the cluster: its shards are about to be allocated anew, some of them here. */
  private record MemberRemoved() implements DispatchProtocol.ToAgent {}

  private record Hosted(Set<Integer> shards) implements DispatchProtocol.ToAgent {}

  private record Reported(DispatchProtocol.RunReport report) implements DispatchProtocol.ToAgent {}

  /** Why a dispatcher is failing (sent by it, just before it stops). */
  private record Crashed(int incarnation, String cause) implements DispatchProtocol.ToAgent {}

  /** A dispatcher stopped that the agent did not stop: it failed. */
  private record Stopped(String runId, int incarnation) implements DispatchProtocol.ToAgent {}

  private record Child(ActorRef<ToDispatcher> ref, int resumes, int incarnation) {}

  public static Behavior<DispatchProtocol.ToAgent> create(NodeDispatcher.Dependencies deps) {
    return Behaviors.setup(
        ctx -> {
          ctx.getSystem()
              .receptionist()
              .tell(Receptionist.register(DispatchProtocol.AGENT_KEY, ctx.getSelf()));
          Cluster.get(ctx.getSystem())
              .subscriptions()
              .tell(
                  Subscribe.create(
                      ctx.messageAdapter(
                          ClusterEvent.MemberRemoved.class, e -> new MemberRemoved()),
                      ClusterEvent.MemberRemoved.class));
          return Behaviors.withTimers(timers -> new State(ctx, timers, deps).behavior());
        });
  }

  private static final class State {
    private final org.apache.pekko.actor.typed.javadsl.ActorContext<DispatchProtocol.ToAgent> ctx;
    private final TimerScheduler<DispatchProtocol.ToAgent> timers;
    private final NodeDispatcher.Dependencies deps;
    private final ActorRef<DispatchProtocol.RunReport> reports;
    private final Map<String, Child> dispatchers = new HashMap<>();
    private final Map<Integer, String> causes = new HashMap<>();
    private final Map<String, DispatchProtocol.DispatchFailure> failures = new HashMap<>();
    private Set<String> assigned = Set.of();
    // null until this node's shard region was first read
    private Set<Integer> hosted;
    private ActorRef<DispatchProtocol.NodeReport> reportTo;
    private int fastPolls;
    private boolean polling;
    private int spawned;

    State(
        org.apache.pekko.actor.typed.javadsl.ActorContext<DispatchProtocol.ToAgent> ctx,
        TimerScheduler<DispatchProtocol.ToAgent> timers,
        NodeDispatcher.Dependencies deps) {
      this.ctx = ctx;
      this.timers = timers;
      this.deps = deps;
      this.reports = ctx.messageAdapter(DispatchProtocol.RunReport.class, Reported::new);
    }

    Behavior<DispatchProtocol.ToAgent> behavior() {
      return Behaviors.receive(DispatchProtocol.ToAgent.class)
          .onMessage(DispatchProtocol.Assignments.class, this::onAssignments)
          .onMessage(Poll.class, p -> poll())
          .onMessage(
              MemberRemoved.class,
              removed -> {
                fastPolls = FAST_POLLS; // learn the shards that come here early
                // told before the shards it hosted arrive: they are paged first, to their end
                dispatchers.values().forEach(c -> c.ref().tell(new NodeDispatcher.MemberLost()));
                return Behaviors.same();
              })
          .onMessage(Hosted.class, this::onHosted)
          .onMessage(Reported.class, this::onReported)
          .onMessage(
              Crashed.class,
              crashed -> {
                causes.put(crashed.incarnation(), crashed.cause());
                return Behaviors.same();
              })
          .onMessage(Stopped.class, this::onStopped)
          .build();
    }

    /** The runs to dispatch now: new ones start, known ones learn their slice, others stop. */
    private Behavior<DispatchProtocol.ToAgent> onAssignments(
        DispatchProtocol.Assignments assignments) {
      reportTo = assignments.reportTo();
      Set<String> listed = new TreeSet<>();
      for (DispatchProtocol.Assignment assignment : assignments.runs()) {
        RunWork run = assignment.run();
        listed.add(run.runId());
        Child child = dispatchers.get(run.runId());
        if (child != null && child.resumes() != run.resumes()) {
          stop(child); // resumed since: a new dispatcher reopens what was closed
          child = null;
        }
        if (child == null) {
          start(assignment);
        } else {
          child
              .ref()
              .tell(
                  new NodeDispatcher.Assigned(
                      assignment.slice(), assignment.stopping(), assignment.lostLeases()));
        }
      }
      assigned = listed;
      dispatchers
          .entrySet()
          .removeIf(
              entry -> {
                if (listed.contains(entry.getKey())) {
                  return false;
                }
                stop(entry.getValue()); // the run ended
                return true;
              });
      return Behaviors.same();
    }

    private void start(DispatchProtocol.Assignment assignment) {
      RunWork run = assignment.run();
      String name =
          "dispatcher-"
              + URLEncoder.encode(run.runId(), StandardCharsets.UTF_8)
              + "-"
              + run.resumes()
              + "-"
              + ++spawned;
      int incarnation = spawned;
      ActorRef<DispatchProtocol.ToAgent> agent = ctx.getSelf();
      ActorRef<ToDispatcher> ref =
          ctx.spawn(
              Behaviors.intercept(
                  () ->
                      new CrashReport<>(
                          ToDispatcher.class,
                          cause -> agent.tell(new Crashed(incarnation, summary(cause)))),
                  NodeDispatcher.create(run, assignment, hosted, deps, reports)),
              name);
      // a message, not a signal: the agent learns which run's dispatcher stopped
      ctx.watchWith(ref, new Stopped(run.runId(), incarnation));
      dispatchers.put(run.runId(), new Child(ref, run.resumes(), incarnation));
      fastPolls = FAST_POLLS; // its shards are being allocated now: learn them early
      if (!polling) {
        poll();
      }
    }

    private void stop(Child child) {
      ctx.unwatch(child.ref());
      ctx.stop(child.ref());
    }

    /**
     * A dispatcher failed (a bug, or input that slipped past validation): the next assignment
     * starts it again, and the coordinator learns how often it failed, so that a run whose
     * dispatcher keeps failing ends FAILED with the reason instead of staying RUNNING.
     */
    private Behavior<DispatchProtocol.ToAgent> onStopped(Stopped stopped) {
      Child child = dispatchers.get(stopped.runId());
      if (child == null || child.incarnation() != stopped.incarnation()) {
        return Behaviors.same();
      }
      dispatchers.remove(stopped.runId());
      String cause = causes.getOrDefault(stopped.incarnation(), "it stopped");
      var previous = failures.get(stopped.runId());
      int count =
          previous == null || previous.resumes() != child.resumes() ? 1 : previous.count() + 1;
      failures.put(
          stopped.runId(),
          new DispatchProtocol.DispatchFailure(stopped.runId(), child.resumes(), count, cause));
      ctx.getLog().warn("run {}: dispatcher failed ({}), {} times", stopped.runId(), cause, count);
      sendReport(List.of());
      return Behaviors.same();
    }

    static String summary(Throwable cause) {
      String text = cause.getClass().getSimpleName() + ": " + cause.getMessage();
      return text.length() <= 300 ? text : text.substring(0, 300);
    }

    /** Reads this node's hosted item shards from its own shard region, while a run is here. */
    private Behavior<DispatchProtocol.ToAgent> poll() {
      if (dispatchers.isEmpty()) {
        polling = false;
        return Behaviors.same();
      }
      polling = true;
      var region =
          ClusterSharding.get(Adapter.toClassic(ctx.getSystem()))
              .shardRegion(WorkItem.ENTITY_TYPE_KEY.name());
      ctx.pipeToSelf(
          Patterns.ask(region, ShardRegion.getRegionStatsInstance(), Duration.ofSeconds(3)),
          (answer, failure) ->
              answer instanceof ShardRegion.ShardRegionStats stats
                  ? new Hosted(shardsOf(stats.getStats().keySet()))
                  : new Hosted(null));
      return Behaviors.same();
    }

    private static Set<Integer> shardsOf(Set<String> shardIds) {
      Set<Integer> shards = new TreeSet<>();
      for (String id : shardIds) {
        shards.add(Integer.parseInt(id));
      }
      return shards;
    }

    private Behavior<DispatchProtocol.ToAgent> onHosted(Hosted answer) {
      // no answer (a region busy handing off): keep what was known, ask again
      if (answer.shards() != null && !answer.shards().equals(hosted)) {
        hosted = Set.copyOf(answer.shards());
        dispatchers.values().forEach(c -> c.ref().tell(new NodeDispatcher.Hosted(hosted)));
        fastPolls = FAST_POLLS; // shards come in bursts (a node that left, a rebalance)
      }
      Duration next = fastPolls > 0 ? FAST_POLL : POLL;
      fastPolls = Math.max(0, fastPolls - 1);
      timers.startSingleTimer(new Poll(), next);
      return Behaviors.same();
    }

    /** A dispatcher's report goes on at once: it is at most one a second per run. */
    private Behavior<DispatchProtocol.ToAgent> onReported(Reported reported) {
      if (dispatchers.containsKey(reported.report().runId())) {
        sendReport(List.of(reported.report()));
      }
      return Behaviors.same();
    }

    private void sendReport(List<DispatchProtocol.RunReport> runs) {
      if (reportTo == null) {
        return;
      }
      failures.keySet().retainAll(assigned);
      reportTo.tell(
          new DispatchProtocol.NodeReport(
              ctx.getSelf(),
              deps.workers(),
              hosted == null ? List.of() : List.copyOf(hosted),
              runs,
              List.copyOf(failures.values())));
    }
  }
}
