package io.fencekeeper.dispatch;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.provider.budget.ThrottleShare;
import java.util.List;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;

/**
 * What the run coordinator and each node's {@link DispatchAgent} say to each other (docs/design.md,
 * "Dispatch on every node"): the coordinator hands every node the runs to dispatch with the node's
 * slice of each run's cap; each node reports once a second what it dispatched, per shard it hosts.
 * Nothing here grows with the run: a run of a million items costs these two messages per node and
 * second, and the only items named are the ones in flight (at most a slice).
 */
public final class DispatchProtocol {

  private DispatchProtocol() {}

  /** What a node's agent accepts from the coordinator. */
  public interface ToAgent extends CborSerializable {}

  /** Every node that hosts item shards runs an agent; the coordinator subscribes to the listing. */
  public static final ServiceKey<ToAgent> AGENT_KEY =
      ServiceKey.create(ToAgent.class, "dispatch-agent");

  /**
   * Every run the node dispatches now, with its slice; a run not listed is not (or no longer)
   * dispatched. Sent when something changes and at least every second. {@code reportTo}: where the
   * node's reports go (the coordinator, wherever it lives now).
   */
  public record Assignments(List<Assignment> runs, ActorRef<NodeReport> reportTo)
      implements ToAgent {}

  /**
   * One run for one node: at most {@code slice} of its items in flight from this node's dispatcher
   * (the slices of all nodes add up to at most the run's cap), or {@link #KEEP_SLICE}: the slice it
   * has (a coordinator that just started and does not know the slices yet); {@code stopping}: hand
   * nothing more out, the coordinator closes what is open. {@code lostLeases}: the items (by seq)
   * that a node removed from the cluster last reported in flight from its own shards, until every
   * shard it hosted has a new host: whichever node their shards arrive at offers them first, so
   * that their leases are taken over when they end and not after the rest of the shards' items.
   */
  public record Assignment(RunWork run, int slice, boolean stopping, List<Integer> lostLeases)
      implements CborSerializable {

    public Assignment {
      lostLeases = lostLeases == null ? List.of() : List.copyOf(lostLeases);
    }
  }

  /** An {@link Assignment}'s slice that leaves the node's slice as it is (0 for a new one). */
  public static final int KEEP_SLICE = -1;

  /**
   * One node's word, once a second: its agent, its workers, the item shards it hosts, what each of
   * its dispatchers did, and how often each run's dispatcher failed here.
   */
  public record NodeReport(
      ActorRef<ToAgent> agent,
      int workers,
      List<Integer> hostedShards,
      List<RunReport> runs,
      List<DispatchFailure> failures)
      implements CborSerializable {}

  /**
   * A run's dispatcher on this node failed {@code count} times (it is started again each time);
   * {@code cause}: the last failure in one line.
   */
  public record DispatchFailure(String runId, int resumes, int count, String cause)
      implements CborSerializable {}

  /**
   * What one node's dispatcher of a run reports: the slice it applies, its items in flight, how
   * many more it could put in flight now ({@code demand}), its completion rate, the age of its
   * oldest waiting item, whether every hosted shard is paged in ({@code allPaged}), the tally of
   * each hosted shard, the seqs of its items in flight ({@code inFlightSeqs}: at most its slice; if
   * the node is lost, these are the leases a takeover waits for), and the provider calls the pools
   * made for its items since its last report ({@code calls}: how many, how many were throttled; the
   * run's governor reads throttling as their share). The statuses behind the tallies are written to
   * {@code run_item} before the report is sent.
   */
  public record RunReport(
      String runId,
      int resumes,
      int slice,
      int inFlight,
      int demand,
      double itemsPerSecond,
      double backlogAgeSeconds,
      boolean allPaged,
      List<ShardTally> shards,
      List<Integer> inFlightSeqs,
      ThrottleShare.Calls calls)
      implements CborSerializable {

    public RunReport {
      inFlightSeqs = inFlightSeqs == null ? List.of() : List.copyOf(inFlightSeqs);
      calls = calls == null ? ThrottleShare.Calls.NONE : calls;
    }

    /** A report without provider calls. */
    public RunReport(
        String runId,
        int resumes,
        int slice,
        int inFlight,
        int demand,
        double itemsPerSecond,
        double backlogAgeSeconds,
        boolean allPaged,
        List<ShardTally> shards,
        List<Integer> inFlightSeqs) {
      this(
          runId,
          resumes,
          slice,
          inFlight,
          demand,
          itemsPerSecond,
          backlogAgeSeconds,
          allPaged,
          shards,
          inFlightSeqs,
          ThrottleShare.Calls.NONE);
    }
  }

  /** How many of a run's items in one shard are DONE, FAILED, CLOSED and QUARANTINED. */
  public record ShardTally(int shard, long done, long failed, long closed, long quarantined)
      implements CborSerializable {

    public long settled() {
      return done + failed;
    }
  }
}
