package io.fencekeeper.item;

import io.fencekeeper.CborSerializable;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The attempts that count against {@code maxAttempts} and towards quarantine: those since the item
 * was created, or since an operator last let it start over (Retry, Reopen), except the leases their
 * holders gave back unused (a release: a claim whose answer the worker gave up on, or a hand-back
 * before the mutation was sent), which tried nothing. The item's snapshots hold it by its fields,
 * not its class name, so it may live in its own file ({@code StateSnapshotTest} reads a snapshot
 * written while it was nested in {@link WorkItem}).
 *
 * @param startedAfter the attempt number when this budget began, plus the leases given back unused
 *     since
 * @param lostHolders the holders of those attempts that vanished (their lease ended without an
 *     outcome from them: taken over after expiry, or closed while they were silent) and have not
 *     been heard from since, oldest first
 * @param consecutiveLosses how many leases of the run in {@code silentRun} ended with a lost holder
 *     (one not heard from)
 * @param silentRun the latest leases in a row that ended without an outcome from their holders,
 *     oldest first (a snapshot from before it was kept: rebuilt from the lost holders)
 * @param heardLate the token of the last lease whose holder spoke after it lapsed, else 0 (the
 *     holder of the lease of that token is not lost when it ends)
 */
public record AttemptBudget(
    int startedAfter,
    List<String> lostHolders,
    int consecutiveLosses,
    List<SilentEnd> silentRun,
    long heardLate)
    implements CborSerializable {

  /**
   * One lease of the current run of leases that ended without an outcome from their holders. {@code
   * heard}: its holder has sent a command since its lease lapsed, so it was alive (paused, cut
   * off), not a node the item killed. {@code endedAt}: when its lease ended (its expiry; null in
   * snapshots from before it was kept): a lease API holder heard anywhere after it was alive
   * (docs/design.md, "Lost holders count").
   */
  public record SilentEnd(String holder, long token, boolean heard, Instant endedAt)
      implements CborSerializable {

    public SilentEnd(String holder, long token, boolean heard) {
      this(holder, token, heard, null);
    }
  }

  public AttemptBudget {
    lostHolders = lostHolders == null ? List.of() : List.copyOf(lostHolders);
    if (silentRun == null) {
      List<SilentEnd> rebuilt = new ArrayList<>();
      for (String holder :
          lostHolders.subList(lostHolders.size() - consecutiveLosses, lostHolders.size())) {
        rebuilt.add(new SilentEnd(holder, -1, false));
      }
      silentRun = rebuilt;
    }
    silentRun = List.copyOf(silentRun);
    consecutiveLosses = (int) silentRun.stream().filter(end -> !end.heard()).count();
  }

  static AttemptBudget startingAfter(int attempt) {
    return new AttemptBudget(attempt, List.of(), 0, List.of(), 0);
  }

  /** Attempts started in this budget when the item has started {@code attempt} in all. */
  int used(int attempt) {
    return attempt - startedAfter;
  }

  /**
   * The lease of {@code token}, which ran until {@code endedAt}, ended without an outcome from
   * {@code owner}.
   */
  AttemptBudget silentEnd(String owner, long token, Instant endedAt) {
    boolean heard = heardLate == token;
    List<String> lost = new ArrayList<>(lostHolders);
    if (!heard) {
      lost.add(owner);
    }
    List<SilentEnd> run = new ArrayList<>(silentRun);
    run.add(new SilentEnd(owner, token, heard, endedAt));
    return new AttemptBudget(startedAfter, lost, 0, run, 0);
  }

  /**
   * The holder gave its lease back unused (a release): it was there, and its attempt tried nothing,
   * so it is not one used up. On a loaded node claims answered after the worker's claim timeout are
   * given back one after another; counted, they failed items no provider call had failed.
   */
  AttemptBudget givenBack() {
    AttemptBudget reported = holderReported();
    return new AttemptBudget(
        reported.startedAfter + 1,
        reported.lostHolders,
        reported.consecutiveLosses,
        reported.silentRun,
        reported.heardLate);
  }

  /**
   * A lease its worker never learnt of was given back (a claim abandoned unanswered): no attempt
   * used up, and, since its holder said nothing of what happened, the run of silent ends stays as
   * it was, so a lost claim answer cannot erase a poison item's losses.
   */
  AttemptBudget givenBackUnheard() {
    return new AttemptBudget(
        startedAfter + 1, lostHolders, consecutiveLosses, silentRun, heardLate);
  }

  /** The holder said what happened (an effect, ambiguity, a failure, a release): it was there. */
  AttemptBudget holderReported() {
    return silentRun.isEmpty()
        ? this
        : new AttemptBudget(startedAfter, lostHolders, 0, List.of(), heardLate);
  }

  /** The holder of the current lease, {@code token}, spoke after its lease lapsed. */
  AttemptBudget heardLate(long token) {
    return new AttemptBudget(startedAfter, lostHolders, 0, silentRun, token);
  }

  /**
   * The budget once {@code worker}, lost with the lease of {@code token}, has spoken again: it was
   * not killed, so it is no longer a lost holder; its lease still ended in silence and stays in the
   * run. Empty when it is not a lost holder of the run (heard already, or before a holder that
   * reported).
   */
  Optional<AttemptBudget> returned(String worker, long token) {
    for (int i = silentRun.size() - 1; i >= 0; i--) {
      SilentEnd end = silentRun.get(i);
      if (!end.heard() && end.token() == token && end.holder().equals(worker)) {
        List<SilentEnd> run = new ArrayList<>(silentRun);
        run.set(i, new SilentEnd(worker, token, true, end.endedAt()));
        List<String> lost = new ArrayList<>(lostHolders);
        lost.remove(lost.lastIndexOf(worker));
        return Optional.of(new AttemptBudget(startedAfter, lost, 0, run, heardLate));
      }
    }
    return Optional.empty();
  }

  /**
   * "Lost holders count" (docs/design.md): {@code k} holders in a row lost and not heard from since
   * (a poison item that kills its node: K deaths), or {@code k + 1} leases in a row ended in
   * silence, whoever spoke afterwards (a poison item that stalls its node before it kills it: its
   * holders may speak before they die, so they cannot all be forgiven; K + 1 deaths). Pause then
   * kill ends two leases in silence, one of them with a holder that wakes: neither.
   */
  boolean quarantines(int k) {
    return k > 0 && (consecutiveLosses >= k || silentRun.size() >= k + 1);
  }

  /** The leases of the run whose holders are lost (not heard from since), oldest first. */
  List<SilentEnd> lostEnds() {
    return silentRun.stream().filter(end -> !end.heard()).toList();
  }

  /** The holders lost in the run (not heard from since), oldest first. */
  List<String> consecutivelyLost() {
    return silentRun.stream().filter(end -> !end.heard()).map(SilentEnd::holder).toList();
  }

  /** The holders of every lease in the run, oldest first. */
  List<String> silentHolders() {
    return silentRun.stream().map(SilentEnd::holder).toList();
  }
}
