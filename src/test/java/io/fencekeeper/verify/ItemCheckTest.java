package io.fencekeeper.verify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.budget.PermitPool;
import io.fencekeeper.provider.budget.ProviderBudget;
import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.provider.sim.SimProviderServer;
import io.fencekeeper.testing.ForwardingItemGateway;
import io.fencekeeper.worker.ItemAttempt.AttemptListener;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One item's check against the simulated provider over real HTTP: a throttled lookup waits its
 * Retry-After, a failing one is retried, an item that does not answer at first is asked again, and
 * one that cannot be checked fails with a reason instead of being counted.
 */
class ItemCheckTest {

  static final ItemId ITEM = ItemId.of("job", LocalDate.parse("2026-11-29"), "a-1", "c-1");

  final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  final BiConsumer<Duration, Runnable> later =
      (delay, task) -> timer.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
  final List<ProviderError> calls = new CopyOnWriteArrayList<>();
  final AttemptListener listener =
      new AttemptListener() {
        @Override
        public void providerCall(String operation, Duration latency, ProviderError error) {
          assertEquals("verify-lookup", operation);
          calls.add(error == null ? new ProviderError.Transient("ok") : error);
        }
      };
  SimProviderServer sim = SimProviderServer.start(0, SimFaults.NONE, 11);
  HttpProvider provider =
      HttpProvider.create(sim.baseUrl(), Duration.ofSeconds(2), Duration.ofSeconds(5));
  final SparePermits permits =
      new SparePermits(
          SparePermits.of(
              new PermitPool(
                  "sim",
                  ProviderBudget.NONE,
                  Duration.ofSeconds(5),
                  System::nanoTime,
                  (delay, task) ->
                      timer.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS)::isDone)),
          4,
          System::nanoTime,
          later);

  @AfterEach
  void tearDown() {
    provider.close();
    sim.close();
    timer.shutdownNow();
  }

  /** The journal side: the item's entity as it would answer, after {@code silent} timeouts. */
  static ForwardingItemGateway journal(int silent) {
    AtomicInteger asked = new AtomicInteger();
    ItemView done =
        new ItemView(
            ITEM.value(),
            WorkItem.Status.DONE,
            null,
            1,
            null,
            1,
            5,
            WorkItem.EffectStatus.RECORDED,
            new WorkItem.EffectOutcome(WorkItem.OutcomeKind.NOTHING_TO_DO, null, "nothing"),
            null,
            null,
            null,
            ITEM.idempotencyKey());
    return new ForwardingItemGateway(null) {
      @Override
      public CompletionStage<WorkItem.Reply> get(ItemId item) {
        if (asked.incrementAndGet() <= silent) {
          return CompletableFuture.failedFuture(new TimeoutException("the item's node is away"));
        }
        return CompletableFuture.completedFuture(new WorkItem.Accepted(done));
      }
    };
  }

  ItemCheck check(ForwardingItemGateway journal) {
    return new ItemCheck(journal, provider, "sim", permits, later, listener, Duration.ofMillis(10));
  }

  static Finding result(CompletionStage<Finding> stage) throws Exception {
    return stage.toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  @Test
  void aThrottledLookupWaitsItsRetryAfterAndIsCheckedOnce() throws Exception {
    sim.setFaults(SimFaults.NONE.withThrottlePerSecond(1));
    ItemCheck check = check(journal(0));
    provider.lookup(ITEM, "burn-the-token").toCompletableFuture().get(10, TimeUnit.SECONDS);

    Finding finding = result(check.check(3, ITEM));

    assertEquals(Outcome.AGREE, finding.outcome());
    assertTrue(
        calls.stream().anyMatch(e -> e instanceof ProviderError.Throttled),
        "a 429 was met: " + calls);
    assertEquals(1L, sim.lookups().get(ITEM.idempotencyKey()), "answered once, after the wait");
  }

  @Test
  void aFailingLookupIsRetried() throws Exception {
    sim.setFaults(SimFaults.NONE.withErrorRate(0.6));

    Finding finding = result(check(journal(0)).check(3, ITEM));

    assertEquals(Outcome.AGREE, finding.outcome());
    assertTrue(calls.size() >= 1);
  }

  @Test
  void anItemThatDidNotAnswerAtFirstIsAskedAgain() throws Exception {
    Finding finding = result(check(journal(3)).check(3, ITEM));

    assertEquals(Outcome.AGREE, finding.outcome());
  }

  @Test
  void anItemThatCannotBeLookedUpFailsTheCheckWithAReason() throws Exception {
    int closed;
    try (ServerSocket socket = new ServerSocket(0)) {
      closed = socket.getLocalPort(); // nothing listens there once the socket is closed
    }
    provider.close();
    provider =
        HttpProvider.create(
            URI.create("http://127.0.0.1:" + closed + "/"),
            Duration.ofMillis(500),
            Duration.ofSeconds(2));

    ExecutionException failed =
        assertThrows(ExecutionException.class, () -> result(check(journal(0)).check(3, ITEM)));

    ItemCheck.CouldNotCheck reason =
        assertInstanceOf(ItemCheck.CouldNotCheck.class, failed.getCause());
    assertTrue(reason.getMessage().contains(ITEM.value()), reason.getMessage());
    assertTrue(reason.getMessage().contains("failed " + ItemCheck.RETRIES + " times"));
    assertEquals(ItemCheck.RETRIES, calls.size(), "every try went through a permit");
    assertEquals(0, permits.inFlight(), "and gave it back");
  }
}
