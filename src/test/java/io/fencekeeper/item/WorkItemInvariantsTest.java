package io.fencekeeper.item;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.fencekeeper.item.WorkItem.Claimed;
import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.LeaseLost;
import io.fencekeeper.item.WorkItem.OutcomeKind;
import io.fencekeeper.item.WorkItem.Reply;
import io.fencekeeper.item.WorkItem.State;
import io.fencekeeper.item.WorkItem.Status;
import io.fencekeeper.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The invariants of docs/design.md, "The work item", over random command sequences from three
 * workers with random clock moves. The workers follow the worker protocol honestly (they apply only
 * when their claim allows it and their own lease check passes, and report what they did), but they
 * are slow: their leases expire, they keep sending with old tokens, they go silent, and their nodes
 * die (after which they never speak for that claim again). A model provider counts the effects per
 * idempotency key.
 *
 * <p>A plain seeded generator rather than jqwik: jqwik 1.10 prints a notice that it is not to be
 * used by AI agents, and this code is written with one, so we respect the author's wish.
 */
class WorkItemInvariantsTest {

  static ActorTestKit testKit;
  static final AtomicInteger ITEMS = new AtomicInteger();
  static final Duration LEASE = Duration.ofSeconds(10);
  static final int MAX_ATTEMPTS = 4;
  static final int QUARANTINE_AFTER = ItemSettings.defaults().quarantineAfterLosses();

  /** Lost holders that came back, and quarantines that lifted, over all lives run. */
  final AtomicInteger returns = new AtomicInteger();

  final AtomicInteger lifts = new AtomicInteger();

  @BeforeAll
  static void start() {
    testKit =
        ActorTestKit.create(
            "invariants",
            EventSourcedBehaviorTestKit.config()
                .withFallback(ConfigFactory.parseString(WorkItemTest.SERIALIZATION)));
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /** One thing that happens in the life of an item. */
  enum Kind {
    CLAIM,
    RENEW,
    LOOKUP,
    APPLY,
    RECORD,
    AMBIGUOUS,
    COMPLETE,
    FAIL,
    RELEASE,
    CLOSE,
    REOPEN,
    RETRY,
    TICK,
    /** lookup if needed, apply if allowed, record, complete: a worker that is not interrupted */
    FINISH,
    /**
     * the worker's node dies (a poison item kills it): it never sends for its claim again, and the
     * same worker name comes back later as a new incarnation with no claim
     */
    CRASH
  }

  record Step(Kind kind, int worker, int seconds, boolean flag) {}

  /**
   * The rules "a lease that ends without an outcome is ambiguous" and "holders lost count", kept
   * from what the test saw, not from the entity's own state: which leases ended silently (taken
   * over, closed or quarantined while their holder had said nothing), whether an effect was
   * recorded since, which holders in a row were lost and not heard from since (a lost holder that
   * sends any command comes back: it was not killed) and how many attempts were started since the
   * last Retry or Reopen, less the leases given back unused.
   */
  static final class LeaseModel {
    boolean leaseOpen;
    boolean reportedThisLease;
    boolean endedSilently;
    boolean markedAmbiguous;
    boolean recorded;

    /** The current lease's holder, as worker#token. */
    String holder;

    /** Whether the current lease's holder has spoken since its lease lapsed. */
    boolean heardLate;

    /**
     * The leases in a row that ended without an outcome from their holders, oldest first: the
     * holder as worker#token, and whether it has spoken since its lease lapsed.
     */
    final Map<String, Boolean> silentRun = new java.util.LinkedHashMap<>();

    int attemptsSinceStart;
    boolean quarantined;

    /** Whether the next claim must answer AMBIGUOUS (unless an effect is recorded). */
    boolean claimed() {
      return endedSilently || markedAmbiguous || (leaseOpen && !reportedThisLease);
    }

    /**
     * The rule: K holders lost in a row (not heard from), or K + 1 silent ends in a row, whoever
     * spoke; {@code endingNow} adds the current lease's silent end (a claim past its expiry).
     */
    boolean quarantinesAtClaim() {
      Map<String, Boolean> run = new java.util.LinkedHashMap<>(silentRun);
      if (leaseOpen && !reportedThisLease) {
        run.put(holder, heardLate);
      }
      return quarantines(run);
    }

    static boolean quarantines(Map<String, Boolean> run) {
      long lost = run.values().stream().filter(heard -> !heard).count();
      return lost >= QUARANTINE_AFTER || run.size() >= QUARANTINE_AFTER + 1;
    }

    private void leaseEnds() {
      if (leaseOpen && !reportedThisLease) {
        endedSilently = true;
        silentRun.put(holder, heardLate);
      }
      leaseOpen = false;
      heardLate = false;
    }

    void granted(State before, String worker, long token) {
      assertTrue(!quarantined, "a quarantined item was claimed before a retry or a return");
      leaseEnds();
      leaseOpen = true;
      reportedThisLease = false;
      holder = worker + "#" + token;
      attemptsSinceStart++;
    }

    /**
     * What a stale command of {@code worker} with {@code token} says: "current" when it is the
     * current holder's first word after its lease lapsed, "lost" when it is a lost holder of the
     * run coming back, null when it says nothing new.
     */
    String lateWord(String worker, long token, State sent, Instant now) {
      String key = worker + "#" + token;
      if (sent.status() == Status.LEASED
          && sent.token() == token
          && worker.equals(sent.owner())
          && !LeaseRules.live(sent, now)) {
        return heardLate ? null : "current";
      }
      return Boolean.FALSE.equals(silentRun.get(key)) ? "lost" : null;
    }

    /** The late word is heard; answers whether it lifts the quarantine. */
    boolean heard(String word, String worker, long token) {
      if (word.equals("current")) {
        heardLate = true;
        return false;
      }
      silentRun.put(worker + "#" + token, true);
      if (quarantined && !quarantines(silentRun)) {
        quarantined = false;
        return true;
      }
      return false;
    }

    /** The claim ended the lease and quarantined the item, or failed it: no attempt started. */
    void refusedForLosses(boolean quarantine) {
      leaseEnds();
      quarantined |= quarantine;
    }

    void reported(Reply reply, boolean effect) {
      if (reply instanceof WorkItem.Accepted) {
        reportedThisLease = true;
        silentRun.clear();
        recorded |= effect;
      }
    }

    /** Fail and Release count only under a live lease: a lapsed one stays ambiguous. */
    void gaveUp(Reply reply, State before, Instant now) {
      if (reply instanceof WorkItem.Accepted) {
        assertTrue(LeaseRules.live(before, now), "Fail/Release accepted after the lease lapsed");
        reportedThisLease = true;
        silentRun.clear();
        leaseOpen = false;
      }
    }

    /** A lease given back unused (a live-lease Release) is no attempt used up. */
    void givenBack(Reply reply) {
      if (reply instanceof WorkItem.Accepted) {
        attemptsSinceStart--;
      }
    }

    void closed(State before) {
      if (before.status() == Status.LEASED) {
        leaseEnds();
      }
    }

    /** Reopen and Retry let the item start over: a new count of attempts and of losses. */
    void startedOver() {
      silentRun.clear();
      attemptsSinceStart = 0;
      quarantined = false;
    }
  }

  /** What one worker believes about its current attempt. */
  static final class Worker {
    long token = -1;
    EffectStatus claimEffect;
    Instant leaseExpiresAt;
    boolean lookedUp;
    boolean foundByLookup;
    boolean applied;
    boolean reportedAmbiguous;
    boolean gaveUp;

    void claimed(Claimed c) {
      token = c.token();
      claimEffect = c.effect();
      leaseExpiresAt = c.leaseExpiresAt();
      lookedUp = false;
      foundByLookup = false;
      applied = false;
      reportedAmbiguous = false;
      gaveUp = false;
    }

    boolean holdsAClaim() {
      return token >= 0;
    }

    /**
     * invariant "reconcile before apply" as the worker protocol: never apply over a record,
     * reconcile first.
     */
    boolean mayApply(Instant now) {
      if (!holdsAClaim() || gaveUp || applied || !now.isBefore(leaseExpiresAt)) {
        return false;
      }
      return claimEffect == EffectStatus.NONE
          || (claimEffect == EffectStatus.AMBIGUOUS && lookedUp && !foundByLookup);
    }

    /** An honest worker that has sent the mutation never claims it did not. */
    boolean mayGiveUpWithoutRecord() {
      return !applied || reportedAmbiguous;
    }
  }

  /** Kinds with their weights: claims, applies and finishes often; closes rarely. */
  static final Kind[] WEIGHTED = weighted();

  static Kind[] weighted() {
    Map<Kind, Integer> weights = new java.util.EnumMap<>(Kind.class);
    weights.put(Kind.CLAIM, 8);
    weights.put(Kind.RENEW, 3);
    weights.put(Kind.LOOKUP, 3);
    weights.put(Kind.APPLY, 6);
    weights.put(Kind.RECORD, 5);
    weights.put(Kind.AMBIGUOUS, 2);
    weights.put(Kind.COMPLETE, 5);
    weights.put(Kind.FAIL, 3);
    weights.put(Kind.RELEASE, 2);
    weights.put(Kind.CLOSE, 1);
    weights.put(Kind.REOPEN, 2);
    weights.put(Kind.RETRY, 2);
    weights.put(Kind.TICK, 6);
    weights.put(Kind.FINISH, 5);
    weights.put(Kind.CRASH, 3);
    List<Kind> table = new ArrayList<>();
    weights.forEach((kind, weight) -> table.addAll(java.util.Collections.nCopies(weight, kind)));
    return table.toArray(Kind[]::new);
  }

  /** A random life of 1-60 steps; worker 0 is the busiest, worker 2 the rarest. */
  static List<Step> randomLife(long seed) {
    Random random = new Random(seed);
    int length = 1 + random.nextInt(60);
    List<Step> steps = new ArrayList<>(length);
    for (int i = 0; i < length; i++) {
      int w = random.nextInt(10);
      steps.add(
          new Step(
              WEIGHTED[random.nextInt(WEIGHTED.length)],
              w < 6 ? 0 : w < 9 ? 1 : 2,
              1 + random.nextInt(15),
              random.nextBoolean()));
    }
    return steps;
  }

  /**
   * 400 random lives, reproducible by seed: a failure names the seed and the steps, and {@code
   * -Dfencekeeper.invariants.seed=N} replays exactly that one.
   */
  @Test
  void invariantsHoldOverAnyLife() {
    Long only = Long.getLong("fencekeeper.invariants.seed");
    long first = only != null ? only : 20261129L;
    int lives = only != null ? 1 : 400;
    Map<Status, Integer> finalStatuses = new java.util.EnumMap<>(Status.class);
    int withEffect = 0;
    int refusedWhileQuarantined = 0;
    int retriedAfterQuarantine = 0;
    for (long seed = first; seed < first + lives; seed++) {
      List<Step> steps = randomLife(seed);
      try {
        Outcome outcome = live(steps);
        finalStatuses.merge(outcome.status(), 1, Integer::sum);
        withEffect += outcome.providerEffects();
        refusedWhileQuarantined += outcome.refusedWhileQuarantined() ? 1 : 0;
        retriedAfterQuarantine += outcome.claimedAfterQuarantine() ? 1 : 0;
      } catch (AssertionError e) {
        List<Step> minimal = shrink(steps);
        throw new AssertionError(
            "seed " + seed + ", smallest failing life " + minimal + ": " + e.getMessage(), e);
      }
    }
    // the lives must reach the interesting places, or the invariants were checked on nothing
    if (only == null) {
      assertTrue(finalStatuses.getOrDefault(Status.DONE, 0) > 10, finalStatuses.toString());
      assertTrue(finalStatuses.getOrDefault(Status.CLOSED, 0) > 5, finalStatuses.toString());
      assertTrue(finalStatuses.getOrDefault(Status.FAILED, 0) > 5, finalStatuses.toString());
      assertTrue(finalStatuses.getOrDefault(Status.QUARANTINED, 0) > 5, finalStatuses.toString());
      assertTrue(withEffect > 20, "lives with a provider effect: " + withEffect);
      assertTrue(
          refusedWhileQuarantined > 5,
          "lives with a claim refused while quarantined: " + refusedWhileQuarantined);
      assertTrue(
          retriedAfterQuarantine > 0,
          "lives claimed again after a quarantine and a retry: " + retriedAfterQuarantine);
      assertTrue(returns.get() > 20, "lost holders that came back: " + returns);
      assertTrue(lifts.get() > 0, "quarantines lifted by a holder that came back: " + lifts);
    }
  }

  record Outcome(
      Status status,
      int providerEffects,
      boolean refusedWhileQuarantined,
      boolean claimedAfterQuarantine) {}

  /** Greedily drops steps while the life still fails, so a failure reads like a short story. */
  List<Step> shrink(List<Step> failing) {
    List<Step> current = new ArrayList<>(failing);
    boolean smaller = true;
    while (smaller) {
      smaller = false;
      for (int i = 0; i < current.size(); i++) {
        List<Step> candidate = new ArrayList<>(current);
        candidate.remove(i);
        try {
          live(candidate);
        } catch (AssertionError stillFails) {
          current = candidate;
          smaller = true;
          break;
        }
      }
    }
    return current;
  }

  Outcome live(List<Step> steps) {
    ManualClock clock = ManualClock.at("2026-11-30T01:00:00Z");
    ItemId itemId =
        ItemId.of(
            "payment-reconciliation",
            LocalDate.parse("2026-11-29"),
            "prop-" + ITEMS.incrementAndGet(),
            "c-1");
    EventSourcedBehaviorTestKit<WorkItem.Command, WorkItem.Event, State> kit =
        EventSourcedBehaviorTestKit.create(
            testKit.system(),
            WorkItem.create(itemId, clock, ItemSettings.defaults()),
            EventSourcedBehaviorTestKit.disabledSerializationSettings());
    Worker[] workers = {new Worker(), new Worker(), new Worker()};
    Map<String, Integer> providerEffects = new HashMap<>();
    // the provider honours Fencing-Token per key (docs/design.md, "The provider boundary"): the
    // last line of defence for a
    // worker fenced off by a close it has not heard of yet
    Map<String, Long> highestTokenSeen = new HashMap<>();
    String key = itemId.idempotencyKey();
    List<WorkItem.Event> journal = new ArrayList<>();
    LeaseModel model = new LeaseModel();
    boolean everQuarantined = false;
    boolean refusedWhileQuarantined = false;
    boolean claimedAfterQuarantine = false;

    for (Step step : steps) {
      Worker w = workers[step.worker()];
      State before = kit.getState();
      Function<Function<ActorRef<Reply>, WorkItem.Command>, Reply> send =
          command -> {
            State sent = kit.getState(); // FINISH sends twice: the state before this command
            CommandResultWithReply<WorkItem.Command, WorkItem.Event, State, Reply> result =
                kit.runCommand(command);
            journal.addAll(result.events());
            if (result.reply() instanceof LeaseLost) {
              // every LeaseLost answers a command of this step's worker with its own token
              String worker = "w-" + step.worker();
              List<WorkItem.LateHolderHeard> back =
                  result.events().stream()
                      .filter(WorkItem.LateHolderHeard.class::isInstance)
                      .map(WorkItem.LateHolderHeard.class::cast)
                      .toList();
              String word = model.lateWord(worker, w.token, sent, clock.instant());
              if (word == null) {
                // invariant "stale changes nothing": a stale token changes nothing
                assertEquals(List.of(), back, "nothing new from this worker: " + step);
                assertEquals(sent, result.state(), "stale command changed the state: " + step);
              } else {
                // ... but that a holder whose lease lapsed has spoken: it was not killed
                assertEquals(1, back.size(), "a holder heard late (" + word + "): " + step);
                boolean lifted = model.heard(word, worker, w.token);
                assertEquals(lifted, back.get(0).quarantineLifted(), "lifted: " + step);
                returns.incrementAndGet();
                lifts.addAndGet(lifted ? 1 : 0);
                State after = result.state();
                assertEquals(lifted ? Status.PENDING : sent.status(), after.status(), "" + step);
                assertEquals(sent.token(), after.token(), "a late word moves no token: " + step);
                assertEquals(sent.effect(), after.effect(), step.toString());
                assertEquals(sent.owner(), after.owner(), step.toString());
                assertEquals(sent.leaseExpiresAt(), after.leaseExpiresAt(), step.toString());
              }
            }
            return result.reply();
          };

      switch (step.kind()) {
        case CLAIM -> {
          Instant now = clock.instant();
          boolean grantable =
              before.status() == Status.PENDING
                      && (before.retryAt() == null || !now.isBefore(before.retryAt()))
                  || before.status() == Status.LEASED && !LeaseRules.live(before, now);
          boolean quarantines = model.quarantinesAtClaim();
          boolean wasQuarantined = model.quarantined;
          Reply reply =
              send.apply(r -> new WorkItem.Claim("w-" + step.worker(), LEASE, MAX_ATTEMPTS, 0, r));
          if (grantable) {
            // holders lost count: K lost in a row, or K + 1 silent ends in a row, quarantine the
            // item, and a claim past maxAttempts fails it, instead of starting another attempt
            Status expected =
                quarantines
                    ? Status.QUARANTINED
                    : model.attemptsSinceStart >= MAX_ATTEMPTS ? Status.FAILED : Status.LEASED;
            assertEquals(expected, kit.getState().status(), "after the claim " + step);
            if (expected != Status.LEASED) {
              assertEquals(
                  expected,
                  ((WorkItem.NotClaimable) reply).status(),
                  "the claim answers why: " + step);
              model.refusedForLosses(expected == Status.QUARANTINED);
              everQuarantined |= expected == Status.QUARANTINED;
            }
          }
          refusedWhileQuarantined |= wasQuarantined;
          if (reply instanceof Claimed c) {
            claimedAfterQuarantine |= everQuarantined;
            // a lease that ended without a recorded effect or a live-lease Fail/Release (and any
            // MarkAmbiguous) leaves the next claim AMBIGUOUS until an effect is recorded
            if (model.claimed() && !model.recorded) {
              assertEquals(
                  EffectStatus.AMBIGUOUS, c.effect(), "a silent end was not ambiguous: " + step);
            }
            w.claimed(c);
            model.granted(before, "w-" + step.worker(), c.token());
            int effects = providerEffects.getOrDefault(key, 0);
            // invariant "reconcile before apply": the entity never tells a claimer "no effect" when
            // one may exist
            if (c.effect() == EffectStatus.NONE) {
              assertEquals(0, effects, "claim said NONE but the provider has the effect");
            }
          }
        }
        case RENEW -> {
          if (w.holdsAClaim()) {
            Reply reply =
                send.apply(
                    r ->
                        new WorkItem.Renew(
                            "w-" + step.worker(), w.token, Duration.ofSeconds(step.seconds()), r));
            if (reply instanceof WorkItem.Accepted a) {
              w.leaseExpiresAt = a.item().leaseExpiresAt();
            }
          }
        }
        case LOOKUP -> {
          if (w.holdsAClaim() && w.claimEffect == EffectStatus.AMBIGUOUS) {
            w.lookedUp = true;
            w.foundByLookup = providerEffects.getOrDefault(key, 0) > 0;
          }
        }
        case APPLY -> {
          if (w.mayApply(clock.instant())) {
            if (w.token >= highestTokenSeen.getOrDefault(key, 0L)) {
              highestTokenSeen.put(key, w.token);
              if (w.token >= highestTokenSeen.getOrDefault(key, 0L)) {
                highestTokenSeen.put(key, w.token);
                providerEffects.merge(key, 1, Integer::sum);
                w.applied = true;
              } else {
                w.gaveUp = true;
              }
            } else {
              w.gaveUp = true; // stale_token: the worker has lost the item and stops
            }
          }
        }
        case RECORD -> {
          if (w.holdsAClaim() && (w.applied || w.foundByLookup)) {
            OutcomeKind kind = w.applied ? OutcomeKind.APPLIED : OutcomeKind.FOUND_BY_LOOKUP;
            model.reported(
                send.apply(
                    r ->
                        new WorkItem.RecordEffect(
                            "w-" + step.worker(), w.token, new EffectOutcome(kind, key, ""), r)),
                true);
          }
        }
        case AMBIGUOUS -> {
          if (w.holdsAClaim()) {
            Reply reply =
                send.apply(
                    r -> new WorkItem.MarkAmbiguous("w-" + step.worker(), w.token, "timeout", r));
            if (reply instanceof WorkItem.Accepted) {
              w.reportedAmbiguous = true;
              model.markedAmbiguous = true;
              model.reported(reply, false);
            }
          }
        }
        case COMPLETE -> {
          if (w.holdsAClaim()) {
            send.apply(r -> new WorkItem.Complete("w-" + step.worker(), w.token, r));
          }
        }
        case FAIL -> {
          if (w.holdsAClaim() && w.mayGiveUpWithoutRecord()) {
            w.gaveUp = true;
            Reply reply =
                send.apply(
                    r ->
                        new WorkItem.Fail(
                            "w-" + step.worker(),
                            w.token,
                            "provider error",
                            step.flag(),
                            Duration.ofSeconds(step.seconds() % 3),
                            r));
            model.gaveUp(reply, before, clock.instant());
          }
        }
        case RELEASE -> {
          if (w.holdsAClaim() && w.mayGiveUpWithoutRecord()) {
            w.gaveUp = true;
            Reply reply = send.apply(r -> new WorkItem.Release("w-" + step.worker(), w.token, r));
            model.gaveUp(reply, before, clock.instant());
            model.givenBack(reply);
          }
        }
        case CLOSE -> {
          send.apply(r -> new WorkItem.Close("deadline", r));
          model.closed(before);
        }
        case REOPEN -> {
          send.apply(WorkItem.Reopen::new);
          if (before.status() == Status.CLOSED || before.status() == Status.FAILED) {
            model.startedOver();
          }
        }
        case RETRY -> {
          if (send.apply(WorkItem.Retry::new) instanceof WorkItem.Accepted) {
            model.startedOver();
          }
        }
        case TICK -> clock.advance(Duration.ofSeconds(step.seconds()));
        case CRASH -> workers[step.worker()] = new Worker();
        case FINISH -> {
          if (w.holdsAClaim() && !w.gaveUp) {
            if (w.claimEffect == EffectStatus.AMBIGUOUS && !w.lookedUp) {
              w.lookedUp = true;
              w.foundByLookup = providerEffects.getOrDefault(key, 0) > 0;
            }
            if (w.mayApply(clock.instant())) {
              if (w.token >= highestTokenSeen.getOrDefault(key, 0L)) {
                highestTokenSeen.put(key, w.token);
                providerEffects.merge(key, 1, Integer::sum);
                w.applied = true;
              } else {
                w.gaveUp = true;
              }
            }
            if (w.applied || w.foundByLookup) {
              OutcomeKind kind = w.applied ? OutcomeKind.APPLIED : OutcomeKind.FOUND_BY_LOOKUP;
              model.reported(
                  send.apply(
                      r ->
                          new WorkItem.RecordEffect(
                              "w-" + step.worker(), w.token, new EffectOutcome(kind, key, ""), r)),
                  true);
            }
            send.apply(r -> new WorkItem.Complete("w-" + step.worker(), w.token, r));
          }
        }
      }

      State after = kit.getState();
      // invariant "tokens only grow": the token never goes back, and every claim or close raises it
      assertTrue(after.token() >= before.token(), "token went back: " + step);
      // invariant "one effect record": at most one effect record; DONE has exactly one
      long records = journal.stream().filter(e -> e instanceof WorkItem.EffectRecorded).count();
      assertTrue(records <= 1, "more than one effect record");
      if (after.status() == Status.DONE) {
        assertEquals(1, records, "DONE without its effect record");
      }
      // invariant "reconcile before apply" as the customer sees it: never a second cleanup at the
      // provider
      assertTrue(providerEffects.getOrDefault(key, 0) <= 1, "second effect at the provider");
    }

    long last = 0;
    for (WorkItem.Event event : journal) {
      long raised =
          switch (event.getClass().getSimpleName()) {
            case "LeaseGranted" -> ((WorkItem.LeaseGranted) event).token();
            case "ItemClosed" -> ((WorkItem.ItemClosed) event).newToken();
            case "ItemQuarantined" -> ((WorkItem.ItemQuarantined) event).newToken();
            case "AttemptsExhausted" -> ((WorkItem.AttemptsExhausted) event).newToken();
            default -> -1;
          };
      if (raised >= 0) {
        assertTrue(raised > last, "token did not strictly increase in the journal");
        last = raised;
      }
    }
    // invariant "replay is exact": replaying the journal rebuilds exactly the state the entity had
    State live = kit.getState();
    assertEquals(live, kit.restart().state());
    return new Outcome(
        live.status(),
        providerEffects.getOrDefault(key, 0),
        refusedWhileQuarantined,
        claimedAfterQuarantine);
  }
}
