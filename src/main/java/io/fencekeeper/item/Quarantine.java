package io.fencekeeper.item;

import io.fencekeeper.item.WorkItem.AttemptsExhausted;
import io.fencekeeper.item.WorkItem.Event;
import io.fencekeeper.item.WorkItem.HolderNodeAlive;
import io.fencekeeper.item.WorkItem.HolderSpokeElsewhere;
import io.fencekeeper.item.WorkItem.ItemQuarantined;
import io.fencekeeper.item.WorkItem.KeptApart;
import io.fencekeeper.item.WorkItem.LateHolderHeard;
import io.fencekeeper.item.WorkItem.LeaseCommand;
import io.fencekeeper.item.WorkItem.NotClaimable;
import io.fencekeeper.item.WorkItem.State;
import io.fencekeeper.item.WorkItem.Status;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * "Lost holders count" (docs/design.md): when the holders an item lost keep it out of work, and
 * when a holder is forgiven. A poison item must not go from node to node until every node has
 * crashed, and a holder that was only paused or cut off must not make an innocent item look like
 * one. Pure functions of the item's state and the time (and, for the claim's membership read, what
 * {@link HolderNodes} answered); the entity journals the events they return.
 */
final class Quarantine {

  private Quarantine() {}

  /** A claim refused for the holders lost: the event that says so, and the claim's answer. */
  record Refusal(Event event, NotClaimable answer) {}

  /**
   * The claim that would start the next attempt counts the holders that vanished, the one whose
   * lease it would take over included: the last {@code k} all lost makes the item QUARANTINED, and
   * a next attempt past {@code maxAttempts} makes it FAILED. Either fences off the last holder with
   * a new token.
   */
  static Optional<Refusal> atClaim(State item, int maxAttempts, int k, Instant now) {
    AttemptBudget budget = item.budgetAfterLeaseEnds();
    if (budget.quarantines(k)) {
      int inARow = budget.consecutiveLosses();
      List<String> lost = inARow >= k ? budget.consecutivelyLost() : budget.silentHolders();
      String reason =
          WorkItem.truncate(
              (inARow >= k
                      ? "holder lost " + inARow + " times in a row ("
                      : budget.silentRun().size()
                          + " leases in a row ended without a word from their holders, "
                          + (budget.silentRun().size() - inARow)
                          + " of whom were found alive or spoke later (")
                  + String.join(", ", lost)
                  + "); quarantined until an operator retries it");
      return Optional.of(
          new Refusal(
              new ItemQuarantined(item.token() + 1, reason, lost, LeaseRules.holder(item), now),
              new NotClaimable(Status.QUARANTINED, reason, null)));
    }
    int used = budget.used(item.attempt());
    if (used >= maxAttempts) {
      List<String> lost = budget.lostHolders();
      String reason =
          WorkItem.truncate(
              "holder lost "
                  + lost.size()
                  + " times"
                  + (lost.isEmpty() ? "" : " (" + String.join(", ", lost) + ")")
                  + "; attempts used up: "
                  + used
                  + " of "
                  + maxAttempts);
      return Optional.of(
          new Refusal(
              new AttemptsExhausted(item.token() + 1, reason, lost, LeaseRules.holder(item), now),
              new NotClaimable(Status.FAILED, reason, null)));
    }
    return Optional.empty();
  }

  /**
   * The loss cohorts of an item whose attempt budget is {@code budget}: the nodes of the holders it
   * lost in a row and has not heard from since (docs/design.md, "Lost together, kept apart"). A
   * holder that spoke, or whose node was found alive, is in none; a holder that reported ends the
   * run, and with it the item's cohorts.
   */
  static Set<String> cohorts(AttemptBudget budget) {
    Set<String> cohorts = new TreeSet<>();
    for (String holder : budget.consecutivelyLost()) {
      cohorts.add(NodeWorkers.nodeOf(holder));
    }
    return cohorts;
  }

  /**
   * A claim that must keep apart from a cohort this item is in, once the lease it would take over
   * has ended (its silent holder judged by the membership read already), is refused with the item's
   * cohorts.
   */
  static Optional<KeptApart> keptApart(State judged, KeepApart keepApart) {
    Set<String> cohorts = cohorts(judged.budgetAfterLeaseEnds());
    return keepApart.refuses(cohorts) ? Optional.of(new KeptApart(cohorts)) : Optional.empty();
  }

  /**
   * The silent holder of the lapsed lease a claim ends, if its node (the incarnation it claimed
   * from) is still an Up member that everyone reaches: a node the item killed is unreachable or
   * gone by the time its lease has lapsed; one that is alive was not killed. A holder whose node is
   * not known (a lease API worker, an older journal) counts as lost.
   */
  static Optional<HolderNodeAlive> holderNodeAlive(State item, HolderNodes nodes, Instant now) {
    return item.silentHolder()
        .filter(holder -> item.budget().heardLate() != item.token())
        .filter(holder -> item.ownerIncarnation() != 0)
        .filter(holder -> nodes.alive(holder, item.ownerIncarnation()))
        .map(holder -> new HolderNodeAlive(holder, item.token(), now));
  }

  /**
   * How much later than a lease's end a lease API worker's word must be to say it was alive then:
   * the word is stamped by the clock of the node that heard it, the end by the item's; the margin
   * absorbs their skew (docs/cluster.md, "Whose clock decides a lease").
   */
  static final Duration WORD_MARGIN = Duration.ofSeconds(1);

  /**
   * The lost holders of the lease API that have spoken, on any item, since their lease ended: the
   * holder of the lapsed lease this claim ends, and each lost holder of the item's run of silent
   * ends. A poison item kills its holder's process, which never speaks again; a worker whose claim
   * answer was lost, or whose renewals of this item failed, goes on speaking elsewhere, and is
   * judged alive as a node's worker whose node is still a member is ({@link #holderNodeAlive}). A
   * node's own workers (their claims name their node) are left to the membership read.
   */
  static List<HolderSpokeElsewhere> spokeElsewhere(State item, ExternalWorkers words, Instant now) {
    List<HolderSpokeElsewhere> heard = new ArrayList<>();
    item.silentHolder()
        .filter(holder -> item.budget().heardLate() != item.token())
        .filter(holder -> item.ownerIncarnation() == 0)
        .flatMap(holder -> wordAfter(words, holder, item.leaseExpiresAt()))
        .ifPresent(at -> heard.add(new HolderSpokeElsewhere(item.owner(), item.token(), at, now)));
    for (AttemptBudget.SilentEnd end : item.budget().lostEnds()) {
      if (end.endedAt() != null) {
        wordAfter(words, end.holder(), end.endedAt())
            .ifPresent(
                at -> heard.add(new HolderSpokeElsewhere(end.holder(), end.token(), at, now)));
      }
    }
    return heard;
  }

  private static Optional<Instant> wordAfter(ExternalWorkers words, String worker, Instant end) {
    return words.lastWord(worker).filter(at -> at.isAfter(end.plus(WORD_MARGIN)));
  }

  /**
   * A stale command tells poison from bad luck: a holder that speaks after its lease lapsed was
   * alive (paused past its lease, or cut off), so the item did not kill its node. Before its lease
   * is taken over, its silent end will not be a loss; after, it is a loss no more, and a
   * QUARANTINED item whose quarantine no longer holds without it is PENDING again.
   */
  static Optional<LateHolderHeard> lateWord(State item, LeaseCommand cmd, Instant now, int k) {
    if (LeaseRules.lapsedHolder(item, cmd, now)) {
      return item.budget().heardLate() == cmd.token()
          ? Optional.empty()
          : Optional.of(new LateHolderHeard(item.owner(), cmd.token(), false, now));
    }
    return item.budget()
        .returned(cmd.workerId(), cmd.token())
        .map(
            after ->
                new LateHolderHeard(
                    WorkItem.truncate(cmd.workerId()),
                    cmd.token(),
                    item.status() == Status.QUARANTINED && !after.quarantines(k),
                    now));
  }

  /** The last error of an item whose quarantine a returning holder lifted. */
  static String liftReason(String workerId, long token) {
    return "quarantine lifted: "
        + workerId
        + " (token "
        + token
        + ") came back, so it was not lost";
  }
}
