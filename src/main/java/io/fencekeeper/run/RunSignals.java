package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.item.WorkItem;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/**
 * A run's counters, each derived from its items' journaled events (docs/design.md,
 * "Observability"), so they survive node deaths, coordinator moves and restarts:
 *
 * @param staleRejections commands refused for a stale token, another worker or a lapsed lease
 *     ({@code StaleCommandRejected})
 * @param takeovers claims of an item whose previous holder's lease expired before it completed,
 *     failed or released the item ({@code LeaseGranted} with a previous owner)
 * @param reconciliations completions (or effect records) that resolved an AMBIGUOUS effect
 * @param throttledAnswers throttled provider answers (429 / Retry-After) met by attempts that ended
 *     with an outcome
 * @param attemptsWithoutCompletion attempts that ended without completing the item: failed,
 *     released, taken over, or closed while leased. Every claim ends in exactly one of these or in
 *     a completion, so a run's ended attempts are its DONE items plus this
 * @param quarantines items quarantined because their holders vanished attempt after attempt ({@code
 *     ItemQuarantined})
 * @param takeoversByNode the takeovers by the node whose worker held the lease (the worker id up to
 *     {@code /w}), with when the first and the last happened: when a node's leases were taken over
 */
public record RunSignals(
    long staleRejections,
    long takeovers,
    long reconciliations,
    long throttledAnswers,
    long attemptsWithoutCompletion,
    long quarantines,
    Map<String, NodeTakeovers> takeoversByNode)
    implements CborSerializable {

  public static final RunSignals NONE = new RunSignals(0, 0, 0, 0, 0, 0);

  /** Beyond this many nodes (or external lease-API workers), takeovers count under "other". */
  static final int MAX_NODES = 64;

  public RunSignals {
    takeoversByNode = takeoversByNode == null ? Map.of() : Map.copyOf(takeoversByNode);
  }

  public RunSignals(
      long staleRejections,
      long takeovers,
      long reconciliations,
      long throttledAnswers,
      long attemptsWithoutCompletion,
      long quarantines) {
    this(
        staleRejections,
        takeovers,
        reconciliations,
        throttledAnswers,
        attemptsWithoutCompletion,
        quarantines,
        Map.of());
  }

  /** How many leases held by one node's workers were taken over, the first and the last when. */
  public record NodeTakeovers(long count, Instant first, Instant last) implements CborSerializable {

    NodeTakeovers plus(NodeTakeovers other) {
      return new NodeTakeovers(
          count + other.count,
          first.isBefore(other.first) ? first : other.first,
          last.isAfter(other.last) ? last : other.last);
    }
  }

  /** What one journaled item event adds to its run's counters. */
  public static RunSignals of(WorkItem.Event event) {
    if (event instanceof WorkItem.StaleCommandRejected) {
      return new RunSignals(1, 0, 0, 0, 0, 0);
    }
    if (event instanceof WorkItem.LeaseGranted granted && granted.previousOwner() != null) {
      return new RunSignals(
          0,
          1,
          0,
          0,
          1,
          0,
          Map.of(
              nodeOf(granted.previousOwner()), new NodeTakeovers(1, granted.at(), granted.at())));
    }
    if (event instanceof WorkItem.ItemCompleted completed) {
      return new RunSignals(0, 0, completed.reconciled() ? 1 : 0, completed.throttles(), 0, 0);
    }
    if (event instanceof WorkItem.EffectRecorded recorded) {
      return new RunSignals(0, 0, recorded.reconciled() ? 1 : 0, 0, 0, 0);
    }
    if (event instanceof WorkItem.AttemptFailed failed) {
      return new RunSignals(0, 0, 0, failed.throttles(), 1, 0);
    }
    if (event instanceof WorkItem.LeaseReleased) {
      return new RunSignals(0, 0, 0, 0, 1, 0);
    }
    if (event instanceof WorkItem.ItemClosed closed && closed.abandonedOwner() != null) {
      return new RunSignals(0, 0, 0, 0, 1, 0);
    }
    if (event instanceof WorkItem.ItemQuarantined quarantined) {
      return new RunSignals(0, 0, 0, 0, endsALease(quarantined.previousOwner()), 1);
    }
    if (event instanceof WorkItem.AttemptsExhausted exhausted) {
      return new RunSignals(0, 0, 0, 0, endsALease(exhausted.previousOwner()), 0);
    }
    return NONE;
  }

  private static long endsALease(String previousOwner) {
    return previousOwner == null ? 0 : 1;
  }

  /** Worker ids of this node's pools are {@code {node address}/w{n}}; others stay whole. */
  static String nodeOf(String workerId) {
    int slash = workerId.lastIndexOf("/w");
    return slash < 0 ? workerId : workerId.substring(0, slash);
  }

  private static Map<String, NodeTakeovers> merged(
      Map<String, NodeTakeovers> a, Map<String, NodeTakeovers> b) {
    if (b.isEmpty()) {
      return a;
    }
    Map<String, NodeTakeovers> all = new TreeMap<>(a);
    b.forEach(
        (node, t) ->
            all.merge(
                all.containsKey(node) || all.size() < MAX_NODES ? node : "other",
                t,
                NodeTakeovers::plus));
    return all;
  }

  public RunSignals plus(RunSignals other) {
    return new RunSignals(
        staleRejections + other.staleRejections,
        takeovers + other.takeovers,
        reconciliations + other.reconciliations,
        throttledAnswers + other.throttledAnswers,
        attemptsWithoutCompletion + other.attemptsWithoutCompletion,
        quarantines + other.quarantines,
        merged(takeoversByNode, other.takeoversByNode));
  }
}
