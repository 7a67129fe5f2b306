package io.fencekeeper.provider.budget;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.provider.ProviderError;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The budget's promise over random lives, as WorkItemInvariantsTest does for leases: three nodes
 * with busy workers, the real {@link PermitPool} and {@link LeaseRenewals} on each node, the real
 * {@link BudgetBook} as the keeper, every message late by a random delay (in order per link), 429s
 * (noise, and a few seconds in which the provider limits its callers), a node that dies holding
 * permits, a keeper that dies and starts again from nothing, an operator who changes the budget. At
 * every call the provider counts what it sees: never more calls in flight than the budget, never
 * more calls in any second than its rate; after every grant and every keeper tick, what the nodes
 * may use at once (dead ones included) is within the budget; and the work goes on. {@code
 * -Dbudget.seed=N} replays one life.
 */
class BudgetInvariantsTest {

  static final ProviderBudget BUDGET = new ProviderBudget(8, 40);
  static final ProviderBudget LOWER = new ProviderBudget(5, 25);
  static final Duration LEASE = Duration.ofSeconds(6);
  static final Duration CALL_TIMEOUT = Duration.ofSeconds(1);
  static final Duration SIMULATED = Duration.ofSeconds(120);
  static final long SECOND = 1_000_000_000L;

  @Test
  void theProviderNeverSeesMoreThanTheBudgetWhateverHappens() {
    for (long seed = Long.getLong("budget.seed", 1);
        seed <= Long.getLong("budget.seed", 25);
        seed++) {
      new World(seed).live();
    }
  }

  static final class World {
    final long seed;
    final Random random;
    final ManualTimer timer = new ManualTimer();
    final Map<String, Node> nodes = new TreeMap<>();
    BudgetBook keeper;
    ProviderBudget journaled = BUDGET;
    boolean keeperUp = true;
    int keeperIncarnation;
    long epochs;
    // what the provider sees
    int inFlight;
    int peak;
    final ArrayDeque<Long> arrivals = new ArrayDeque<>();
    int busiestSecond;
    long calls;
    long callsAfterFaults;
    long faultsOverAt = Long.MAX_VALUE;
    // what the nodes may use at once, had every one of them the work for it
    int mostAllowed;
    int mostRateAllowed;

    World(long seed) {
      this.seed = seed;
      this.random = new Random(seed);
      keeper = newKeeper(BUDGET);
      for (String name : List.of("n1", "n2", "n3")) {
        nodes.put(name, new Node(name));
      }
    }

    BudgetBook newKeeper(ProviderBudget budget) {
      return new BudgetBook(
          "payments",
          ++epochs,
          budget,
          "config",
          LEASE,
          Duration.ofSeconds(2),
          timer.nanos(),
          now());
    }

    void live() {
      for (Node node : nodes.values()) {
        node.start();
      }
      every(BudgetKeeper.TICK, this::keeperTick);
      long killAt = (15 + random.nextInt(30)) * SECOND;
      long restartAt = (40 + random.nextInt(30)) * SECOND;
      long operatorAt = (20 + random.nextInt(50)) * SECOND;
      at(killAt, () -> nodes.get("n" + (1 + random.nextInt(3))).die());
      at(restartAt, this::keeperDies);
      at(operatorAt, () -> operator(LOWER));
      at(operatorAt + 10 * SECOND, () -> operator(BUDGET));
      faultsOverAt = Math.max(restartAt + 4 * SECOND, operatorAt + 10 * SECOND) + LEASE.toNanos();
      timer.advance(SIMULATED);
      String story =
          "seed "
              + seed
              + ": "
              + calls
              + " calls, peak "
              + peak
              + " in flight, busiest second "
              + busiestSecond;
      assertTrue(peak <= BUDGET.maxInFlight(), story);
      assertTrue(mostAllowed <= BUDGET.maxInFlight(), story + ", allowed at once " + mostAllowed);
      assertTrue(mostRateAllowed <= BUDGET.maxRate(), story + ", rate allowed " + mostRateAllowed);
      assertTrue(busiestSecond <= BUDGET.maxRate(), story);
      // the work went on after the last fault (not stuck waiting for permits nobody holds)
      long quietSeconds = (SIMULATED.toNanos() - faultsOverAt) / SECOND;
      System.out.printf(
          "%s, %d calls in the %d s after the last fault%n", story, callsAfterFaults, quietSeconds);
      assertTrue(
          quietSeconds <= 0 || callsAfterFaults >= quietSeconds * 10,
          story + ", " + callsAfterFaults + " calls in the last " + quietSeconds + " s");
    }

    // --- the keeper ---------------------------------------------------------------------------

    /** Dead nodes count too: a paused node may wake up and use what it still holds. */
    void allowed() {
      mostAllowed =
          Math.max(mostAllowed, nodes.values().stream().mapToInt(n -> n.pool.mayUse()).sum());
      mostRateAllowed =
          Math.max(
              mostRateAllowed, nodes.values().stream().mapToInt(n -> n.pool.mayUseRate()).sum());
    }

    void keeperTick() {
      allowed();
      if (keeperUp) {
        Set<String> members = new HashSet<>();
        nodes.values().stream().filter(n -> !n.removed).forEach(n -> members.add(n.name));
        send(keeper.tick(timer.nanos(), now(), members));
        BudgetView view = keeper.view(timer.nanos());
        assertTrue(
            view.granted() <= view.maxInFlight(),
            "seed " + seed + ": granted " + view.granted() + " of " + view);
      }
    }

    Instant now() {
      return Instant.EPOCH.plusNanos(timer.nanos());
    }

    void keeperDies() {
      keeperUp = false;
      keeperIncarnation++;
      ProviderBudget budget = journaled; // what an operator set survives the move
      // a singleton moves after the removal margin: seconds without a keeper
      after(Duration.ofMillis(500 + random.nextInt(3000)), () -> startKeeper(budget));
    }

    void startKeeper(ProviderBudget budget) {
      keeper = newKeeper(budget);
      keeperUp = true;
    }

    /** An operator's change is journaled by a keeper that is up; else the PUT fails. */
    void operator(ProviderBudget budget) {
      if (keeperUp) {
        journaled = budget;
        send(keeper.set(budget, "operator", timer.nanos(), now()));
      }
    }

    void toKeeper(Node from, LeaseRenewals.Renewal renewal) {
      int incarnation = keeperIncarnation;
      from.toKeeperAt = Math.max(timer.nanos() + delay(), from.toKeeperAt);
      at(
          from.toKeeperAt,
          () -> {
            if (incarnation != keeperIncarnation || !keeperUp) {
              return; // sent to a keeper that is gone
            }
            PermitPool.Report r = renewal.report();
            send(
                keeper.renew(
                    from.name,
                    new BudgetBook.Report(
                        from.name,
                        renewal.seq(),
                        r.epoch(),
                        r.version(),
                        r.holding(),
                        r.rateHolding(),
                        r.inFlight(),
                        r.demand(),
                        r.calls(),
                        r.throttled(),
                        r.retryAfterMillis()),
                    timer.nanos(),
                    now()));
          });
    }

    void send(List<BudgetBook.Outgoing> outgoing) {
      for (BudgetBook.Outgoing out : outgoing) {
        Node to = nodes.get(out.holderId());
        to.fromKeeperAt = Math.max(timer.nanos() + delay(), to.fromKeeperAt);
        at(to.fromKeeperAt, () -> to.granted(out.grant()));
      }
    }

    /** Mostly a few milliseconds; now and then a pause of up to half a second. */
    long delay() {
      return (random.nextInt(20) == 0 ? random.nextInt(500) : random.nextInt(20)) * 1_000_000L;
    }

    // --- the provider ---------------------------------------------------------------------------

    void callStarts() {
      inFlight++;
      peak = Math.max(peak, inFlight);
      calls++;
      if (timer.nanos() >= faultsOverAt) {
        callsAfterFaults++;
      }
    }

    /** A call reaches the provider some time between its start and its end. */
    void callArrives() {
      long now = timer.nanos();
      arrivals.addLast(now);
      while (now - arrivals.peekFirst() >= SECOND) {
        arrivals.pollFirst();
      }
      busiestSecond = Math.max(busiestSecond, arrivals.size());
    }

    // --- time -----------------------------------------------------------------------------------

    void at(long nanos, Runnable task) {
      timer.schedule(Duration.ofNanos(Math.max(0, nanos - timer.nanos())), task);
    }

    void after(Duration delay, Runnable task) {
      timer.schedule(delay, task);
    }

    void every(Duration period, Runnable task) {
      after(
          period,
          () -> {
            task.run();
            every(period, task);
          });
    }

    final class Node {
      final String name;
      final PermitPool pool;
      final LeaseRenewals renewals;
      boolean alive = true;
      boolean removed;
      long toKeeperAt;
      long fromKeeperAt;
      boolean soonPending;

      Node(String name) {
        this.name = name;
        this.pool = new PermitPool("payments", BUDGET, CALL_TIMEOUT, timer::nanos, timer);
        this.renewals =
            new LeaseRenewals(
                pool, LEASE.dividedBy(4).toNanos(), PermitLeaser.MIN_SPACING.toNanos());
        pool.onReportWanted(() -> after(Duration.ZERO, this::renewSoon));
      }

      void start() {
        every(LEASE.dividedBy(4), () -> renewals.periodic(timer.nanos()).ifPresent(this::send));
        int workers = 2 + random.nextInt(6);
        // one node joins later, when the others hold the whole budget
        Duration joins =
            name.equals("n3") ? Duration.ofSeconds(5 + random.nextInt(10)) : Duration.ZERO;
        for (int i = 0; i < workers; i++) {
          after(joins.plusMillis(random.nextInt(100)), this::work);
        }
      }

      void renewSoon() {
        if (!alive || soonPending) {
          return;
        }
        long wait = renewals.spacingLeft(timer.nanos());
        if (wait > 0) {
          soonPending = true;
          after(
              Duration.ofNanos(wait),
              () -> {
                soonPending = false;
                renewSoon();
              });
        } else {
          renewals.soon(timer.nanos()).ifPresent(this::send);
        }
      }

      void send(LeaseRenewals.Renewal renewal) {
        if (alive) {
          toKeeper(this, renewal);
        }
      }

      void granted(BudgetKeeper.Grant grant) {
        if (alive && renewals.granted(grant)) {
          renewSoon();
        }
        allowed();
      }

      /**
       * A worker: a permit, a call of 5-300 ms (one in fifty throttled, noise; one in three from
       * the 5th to the 12th second, a provider that limits its callers: the budget is cut), a
       * pause, again.
       */
      void work() {
        if (!alive) {
          return;
        }
        pool.acquire(Duration.ofSeconds(2))
            .thenAccept(
                permit -> {
                  if (permit.isEmpty()) {
                    after(Duration.ZERO, this::work);
                    return;
                  }
                  if (!alive) {
                    permit.get().release(null); // a dead node makes no calls
                    return;
                  }
                  callStarts();
                  long second = timer.nanos() / SECOND;
                  boolean throttled = random.nextInt(second >= 5 && second < 12 ? 3 : 50) == 0;
                  long duration = 5 + random.nextInt(296);
                  after(Duration.ofMillis(random.nextLong(duration + 1)), World.this::callArrives);
                  after(
                      Duration.ofMillis(duration),
                      () -> {
                        inFlight--;
                        permit
                            .get()
                            .release(
                                throttled
                                    ? new ProviderError.Throttled(Duration.ofMillis(200), "429")
                                    : null);
                        // bursty work: now and then a worker idles, so grants move around
                        Duration pause =
                            random.nextInt(25) == 0
                                ? Duration.ofMillis(500 + random.nextInt(3000))
                                : Duration.ofMillis(random.nextInt(30));
                        after(pause, this::work);
                      });
                });
      }

      /**
       * Its calls in flight still end; it makes no more, and is removed two seconds later, having
       * stopped its pool (as a downed node does before the resolver lets the others move on).
       */
      void die() {
        alive = false;
        after(
            Duration.ofSeconds(2),
            () -> {
              pool.close();
              removed = true;
            });
      }
    }
  }

  @Test
  void aLifeIsReproducibleFromItsSeed() {
    World first = new World(7);
    first.live();
    World again = new World(7);
    again.live();
    assertEquals(first.calls, again.calls);
    assertEquals(first.busiestSecond, again.busiestSecond);
  }
}
