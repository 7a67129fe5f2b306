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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;

/**
 * Invariants 1-5 of design.md §3.1 over random command sequences from three workers with random
 * clock moves. The workers follow the worker protocol honestly (they apply only when their claim
 * allows it and their own lease check passes, and report what they did), but they are slow: their
 * leases expire, they keep sending with old tokens, they go silent. A model provider counts the
 * effects per idempotency key.
 */
class WorkItemInvariantsProperties {

  static ActorTestKit testKit;
  static final AtomicInteger ITEMS = new AtomicInteger();
  static final Duration LEASE = Duration.ofSeconds(10);

  @BeforeContainer
  static void start() {
    testKit =
        ActorTestKit.create(
            "invariants",
            EventSourcedBehaviorTestKit.config()
                .withFallback(ConfigFactory.parseString(WorkItemTest.SERIALIZATION)));
  }

  @AfterContainer
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
    FINISH
  }

  record Step(Kind kind, int worker, int seconds, boolean flag) {}

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

    /** Invariant 4 as the worker protocol: never apply over a record, reconcile first. */
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

  @Provide
  Arbitrary<List<Step>> lives() {
    Arbitrary<Kind> kinds =
        Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(8, Arbitraries.just(Kind.CLAIM)),
            net.jqwik.api.Tuple.of(3, Arbitraries.just(Kind.RENEW)),
            net.jqwik.api.Tuple.of(3, Arbitraries.just(Kind.LOOKUP)),
            net.jqwik.api.Tuple.of(6, Arbitraries.just(Kind.APPLY)),
            net.jqwik.api.Tuple.of(5, Arbitraries.just(Kind.RECORD)),
            net.jqwik.api.Tuple.of(2, Arbitraries.just(Kind.AMBIGUOUS)),
            net.jqwik.api.Tuple.of(5, Arbitraries.just(Kind.COMPLETE)),
            net.jqwik.api.Tuple.of(3, Arbitraries.just(Kind.FAIL)),
            net.jqwik.api.Tuple.of(2, Arbitraries.just(Kind.RELEASE)),
            net.jqwik.api.Tuple.of(1, Arbitraries.just(Kind.CLOSE)),
            net.jqwik.api.Tuple.of(2, Arbitraries.just(Kind.REOPEN)),
            net.jqwik.api.Tuple.of(1, Arbitraries.just(Kind.RETRY)),
            net.jqwik.api.Tuple.of(6, Arbitraries.just(Kind.TICK)),
            net.jqwik.api.Tuple.of(5, Arbitraries.just(Kind.FINISH)));
    Arbitrary<Step> step =
        Combinators.combine(
                kinds,
                Arbitraries.frequencyOf(
                    net.jqwik.api.Tuple.of(6, Arbitraries.just(0)),
                    net.jqwik.api.Tuple.of(3, Arbitraries.just(1)),
                    net.jqwik.api.Tuple.of(1, Arbitraries.just(2))),
                Arbitraries.integers().between(1, 15),
                Arbitraries.of(true, false))
            .as(Step::new);
    return step.list().ofMinSize(1).ofMaxSize(60);
  }

  @Property(tries = 400)
  void invariantsHoldOverAnyLife(@ForAll("lives") List<Step> steps) {
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
            WorkItem.create(itemId, clock, WorkItem.Settings.defaults()),
            EventSourcedBehaviorTestKit.disabledSerializationSettings());
    Worker[] workers = {new Worker(), new Worker(), new Worker()};
    Map<String, Integer> providerEffects = new HashMap<>();
    String key = itemId.idempotencyKey();
    List<WorkItem.Event> journal = new ArrayList<>();

    for (Step step : steps) {
      Worker w = workers[step.worker()];
      State before = kit.getState();
      Function<Function<ActorRef<Reply>, WorkItem.Command>, Reply> send =
          command -> {
            CommandResultWithReply<WorkItem.Command, WorkItem.Event, State, Reply> result =
                kit.runCommand(command);
            journal.addAll(result.events());
            if (result.reply() instanceof LeaseLost) {
              // invariant 2: a stale token changes nothing
              assertEquals(before, result.state(), "stale command changed the state: " + step);
            }
            return result.reply();
          };

      switch (step.kind()) {
        case CLAIM -> {
          Reply reply = send.apply(r -> new WorkItem.Claim("w-" + step.worker(), LEASE, 4, r));
          if (reply instanceof Claimed c) {
            w.claimed(c);
            int effects = providerEffects.getOrDefault(key, 0);
            // invariant 4: the entity never tells a claimer "no effect" when one may exist
            if (c.effect() == EffectStatus.NONE) {
              assertEquals(0, effects, "claim said NONE but the provider has the effect");
            }
          }
        }
        case RENEW -> {
          if (w.holdsAClaim()) {
            Reply reply =
                send.apply(r -> new WorkItem.Renew(w.token, Duration.ofSeconds(step.seconds()), r));
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
            providerEffects.merge(key, 1, Integer::sum);
            w.applied = true;
          }
        }
        case RECORD -> {
          if (w.holdsAClaim() && (w.applied || w.foundByLookup)) {
            OutcomeKind kind = w.applied ? OutcomeKind.APPLIED : OutcomeKind.FOUND_BY_LOOKUP;
            send.apply(
                r -> new WorkItem.RecordEffect(w.token, new EffectOutcome(kind, key, ""), r));
          }
        }
        case AMBIGUOUS -> {
          if (w.holdsAClaim()) {
            Reply reply = send.apply(r -> new WorkItem.MarkAmbiguous(w.token, "timeout", r));
            if (reply instanceof WorkItem.Accepted) {
              w.reportedAmbiguous = true;
            }
          }
        }
        case COMPLETE -> {
          if (w.holdsAClaim()) {
            send.apply(r -> new WorkItem.Complete(w.token, r));
          }
        }
        case FAIL -> {
          if (w.holdsAClaim() && w.mayGiveUpWithoutRecord()) {
            w.gaveUp = true;
            send.apply(
                r ->
                    new WorkItem.Fail(
                        w.token,
                        "provider error",
                        step.flag(),
                        Duration.ofSeconds(step.seconds() % 3),
                        r));
          }
        }
        case RELEASE -> {
          if (w.holdsAClaim() && w.mayGiveUpWithoutRecord()) {
            w.gaveUp = true;
            send.apply(r -> new WorkItem.Release(w.token, r));
          }
        }
        case CLOSE -> send.apply(r -> new WorkItem.Close("deadline", r));
        case REOPEN -> send.apply(WorkItem.Reopen::new);
        case RETRY -> send.apply(WorkItem.Retry::new);
        case TICK -> clock.advance(Duration.ofSeconds(step.seconds()));
        case FINISH -> {
          if (w.holdsAClaim() && !w.gaveUp) {
            if (w.claimEffect == EffectStatus.AMBIGUOUS && !w.lookedUp) {
              w.lookedUp = true;
              w.foundByLookup = providerEffects.getOrDefault(key, 0) > 0;
            }
            if (w.mayApply(clock.instant())) {
              providerEffects.merge(key, 1, Integer::sum);
              w.applied = true;
            }
            if (w.applied || w.foundByLookup) {
              OutcomeKind kind = w.applied ? OutcomeKind.APPLIED : OutcomeKind.FOUND_BY_LOOKUP;
              send.apply(
                  r -> new WorkItem.RecordEffect(w.token, new EffectOutcome(kind, key, ""), r));
            }
            send.apply(r -> new WorkItem.Complete(w.token, r));
          }
        }
      }

      State after = kit.getState();
      // invariant 1: the token never goes back, and every claim or close raises it
      assertTrue(after.token() >= before.token(), "token went back: " + step);
      // invariant 3: at most one effect record; DONE has exactly one
      long records = journal.stream().filter(e -> e instanceof WorkItem.EffectRecorded).count();
      assertTrue(records <= 1, "more than one effect record");
      if (after.status() == Status.DONE) {
        assertEquals(1, records, "DONE without its effect record");
      }
      // invariant 4 as the customer sees it: never a second cleanup at the provider
      assertTrue(providerEffects.getOrDefault(key, 0) <= 1, "second effect at the provider");
    }

    long last = 0;
    for (WorkItem.Event event : journal) {
      long raised =
          switch (event.getClass().getSimpleName()) {
            case "LeaseGranted" -> ((WorkItem.LeaseGranted) event).token();
            case "ItemClosed" -> ((WorkItem.ItemClosed) event).newToken();
            default -> -1;
          };
      if (raised >= 0) {
        assertTrue(raised > last, "token did not strictly increase in the journal");
        last = raised;
      }
    }
    Statistics.label("final status").collect(kit.getState().status());
    Statistics.label("provider effects").collect(providerEffects.getOrDefault(key, 0));
    // invariant 5: replaying the journal rebuilds exactly the state the entity had
    State live = kit.getState();
    assertEquals(live, kit.restart().state());
  }
}
