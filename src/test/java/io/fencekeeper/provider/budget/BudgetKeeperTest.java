package io.fencekeeper.provider.budget;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.fencekeeper.provider.budget.BudgetKeeper.Grant;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.PersistenceTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The budget keeper as the nodes' pools and the runs' dispatchers talk to it (the arithmetic of a
 * provider's books is {@link BudgetBookTest}'s): an operator's budget outlives the keeper and
 * outranks the configured one, a budget for a provider nobody knows is refused naming the known
 * ones, a keeper that starts gives nodes no more than they hold until every member renewed and then
 * shares the budget out to each holder, a shrink reaches every holder at once, and a provider
 * without a budget needs no permits. The keeper's clock and members are the test's; its journal is
 * the persistence test kit's, every event serialized.
 */
class BudgetKeeperTest {

  static final Duration LEASE = Duration.ofSeconds(6);
  static final Duration WITHIN = Duration.ofSeconds(15);
  static final BudgetKeeper.Settings SETTINGS =
      new BudgetKeeper.Settings(
          Map.of("default", ProviderBudget.NONE, "payments", new ProviderBudget(4, 0)),
          LEASE,
          Duration.ofSeconds(2));

  static ActorTestKit testKit;
  ActorRef<BudgetKeeper.Command> keeper;

  @BeforeAll
  static void start() {
    testKit =
        ActorTestKit.create(
            "BudgetKeeperTest",
            EventSourcedBehaviorTestKit.config()
                .withFallback(ConfigFactory.parseString(SERIALIZATION)));
  }

  static final String SERIALIZATION =
      "pekko.actor.serialization-bindings { \"io.fencekeeper.CborSerializable\" = jackson-cbor }\n"
          + "pekko.actor.allow-java-serialization = off\n"
          + "pekko.loglevel = WARNING\n";

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @BeforeEach
  void freshKeeper() {
    PersistenceTestKit.create(testKit.system()).clearAll();
    keeper = testKit.spawn(keeper());
  }

  @AfterEach
  void stopKeeper() {
    testKit.stop(keeper);
  }

  /**
   * A keeper whose clock stands still (no lease runs out, no demand is forgotten) and whose up
   * members are the two nodes the tests renew for; it ticks as the real one does.
   */
  static Behavior<BudgetKeeper.Command> keeper() {
    Clock clock = Clock.fixed(Instant.parse("2026-11-30T02:00:00Z"), ZoneOffset.UTC);
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> {
                  timers.startSingleTimer("tick", new BudgetKeeper.Tick(), BudgetKeeper.TICK);
                  return new BudgetKeeper(
                      ctx, timers, SETTINGS, clock, () -> 0L, () -> Set.of("node-a", "node-b"));
                }));
  }

  void restartKeeper() {
    testKit.stop(keeper);
    keeper = testKit.spawn(keeper());
  }

  BudgetView budget(String provider) {
    TestProbe<BudgetKeeper.Budgets> probe = testKit.createTestProbe();
    keeper.tell(new BudgetKeeper.GetBudgets(probe.ref()));
    return probe.receiveMessage(WITHIN).providers().stream()
        .filter(view -> view.provider().equals(provider))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no budget of " + provider));
  }

  BudgetKeeper.SetReply set(String provider, ProviderBudget budget) {
    TestProbe<BudgetKeeper.SetReply> probe = testKit.createTestProbe();
    keeper.tell(new BudgetKeeper.SetBudget(provider, budget, probe.ref()));
    return probe.receiveMessage(WITHIN);
  }

  /** A pool that held nothing and wants {@code demand}, renewing with its {@code seq}. */
  void renew(String provider, String node, long seq, int demand, TestProbe<Grant> pool) {
    keeper.tell(
        new BudgetKeeper.Renew(provider, node, seq, 0, -1, 0, 0, 0, demand, 0, 0, 0, pool.ref()));
  }

  BudgetKeeper.Share report(String provider, String runId, int demand) {
    TestProbe<BudgetKeeper.Share> probe = testKit.createTestProbe();
    keeper.tell(new BudgetKeeper.ReportRun(provider, runId, demand, false, probe.ref()));
    return probe.receiveMessage(WITHIN);
  }

  @Test
  void anOperatorsBudgetOutlivesTheKeeperAndOutranksTheConfiguredOne() {
    BudgetView set =
        assertInstanceOf(BudgetKeeper.BudgetSet.class, set("payments", new ProviderBudget(8, 20)))
            .provider();
    assertEquals(8, set.maxInFlight());
    assertEquals("operator", set.source());

    restartKeeper();

    BudgetView recovered = budget("payments");
    assertEquals(8, recovered.maxInFlight(), "not the configured 4");
    assertEquals(20, recovered.maxRate());
    assertEquals("operator", recovered.source());
    assertEquals("config", budget("default").source());
  }

  @Test
  void aBudgetForAProviderNobodyConfiguredIsRefusedNamingTheKnownOnes() {
    BudgetKeeper.SetReply reply = set("nobody", new ProviderBudget(8, 0));

    assertEquals(new BudgetKeeper.UnknownProvider("nobody", List.of("default", "payments")), reply);
    restartKeeper();
    TestProbe<BudgetKeeper.Budgets> probe = testKit.createTestProbe();
    keeper.tell(new BudgetKeeper.GetBudgets(probe.ref()));
    assertEquals(
        Set.of("default", "payments"),
        Set.copyOf(
            probe.receiveMessage(WITHIN).providers().stream().map(BudgetView::provider).toList()),
        "nothing was journaled for it");
  }

  @Test
  void aStartingKeeperGivesNoMoreThanNodesHoldUntilEveryMemberRenewedThenSharesTheBudget() {
    TestProbe<Grant> poolA = testKit.createTestProbe();
    TestProbe<Grant> poolB = testKit.createTestProbe();

    renew("payments", "node-a", 1, 4, poolA);
    Grant firstA = poolA.receiveMessage(WITHIN);
    assertEquals(1, firstA.replyTo(), "the answer to its own renewal");
    assertEquals(0, firstA.permits(), "an earlier keeper's permits may still be out there");
    renew("payments", "node-b", 1, 4, poolB);
    assertEquals(0, poolB.receiveMessage(WITHIN).permits());

    // both members renewed: the next tick ends the recovery and pushes each its half
    Grant pushedA = poolA.receiveMessage(WITHIN);
    Grant pushedB = poolB.receiveMessage(WITHIN);
    assertEquals(-1, pushedA.replyTo(), "pushed, not an answer");
    assertEquals(2, pushedA.permits());
    assertEquals(2, pushedB.permits());
    assertFalse(budget("payments").recovering());

    set("payments", new ProviderBudget(2, 0));

    assertEquals(1, poolA.receiveMessage(WITHIN).permits(), "a shrink is pushed at once");
    assertEquals(1, poolB.receiveMessage(WITHIN).permits());
  }

  @Test
  void aProviderWithoutABudgetNeedsNoPermitsAndARunsShareComesFromTheBudget() {
    TestProbe<Grant> pool = testKit.createTestProbe();
    renew("default", "node-a", 7, 50, pool);
    Grant unlimited = pool.receiveMessage(WITHIN);
    assertFalse(unlimited.limited());
    assertEquals(7, unlimited.replyTo());
    assertFalse(report("default", "tonight/2026-11-29", 50).limited());

    assertEquals(4, report("payments", "tonight/2026-11-29", 4).share());
    assertEquals(2, report("payments", "weekly/2026-11-29", 4).share(), "two runs split it");
    keeper.tell(new BudgetKeeper.LeaveRun("payments", "weekly/2026-11-29"));
    BudgetKeeper.Share alone = report("payments", "tonight/2026-11-29", 4);
    assertTrue(alone.limited());
    assertEquals(4, alone.share(), "a run that left gives its share back at once");
  }
}
