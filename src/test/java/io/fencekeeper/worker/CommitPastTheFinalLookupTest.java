package io.fencekeeper.worker;

import static io.fencekeeper.testing.ScriptedItems.CLAIM;
import static io.fencekeeper.testing.ScriptedItems.RECORD_EFFECT_AND_COMPLETE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.OutcomeKind;
import io.fencekeeper.provider.budget.Permits;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.testing.ScriptedItems;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Night 2 of the outside implementer's provider (docs/provider-protocol.md, "The deadline"): a
 * provider whose clock is behind by more than the allowance commits a cleanup after the client's
 * deadline. The client looked the key up after the deadline and the allowance, got 404, and then
 * the late commit landed; its next plan said "nothing to do", which the provider may say once the
 * effect is committed. Recorded as NOTHING_TO_DO, the effect was missing from the journal. Here the
 * same provider over real HTTP, its commit landing just after the lookup's 404: the worker looks
 * the key up once more before it records nothing to do, and records the effect as found.
 */
class CommitPastTheFinalLookupTest {

  static final ItemId ITEM =
      ItemId.of("payment-reconciliation", LocalDate.parse("2026-11-29"), "acct-7", "c-1");

  /**
   * What the unanswered cleanup waits; every other call must be answered within it. At 400 ms a
   * plan at load 25 (CI) took longer and was asked again.
   */
  static final Duration REQUEST_TIMEOUT = Duration.ofMillis(1500);

  final ActorTestKit testKit = ActorTestKit.create();
  final ScriptedItems items = new ScriptedItems();
  final LateProvider late = new LateProvider();

  @AfterEach
  void stop() {
    late.close();
    testKit.shutdownTestKit();
  }

  @Test
  void aCommitLandingAfterTheFinalLookupThatEmptiesThePlanIsRecordedNotLost() throws Exception {
    items.answerNow(CLAIM, item -> ScriptedItems.claimed(ITEM, 7, EffectStatus.NONE));
    try (HttpProvider provider =
        HttpProvider.create(late.baseUrl(), Duration.ofSeconds(2), REQUEST_TIMEOUT)) {
      ItemAttempt.Context context =
          new ItemAttempt.Context(
              items,
              provider,
              Clock.systemUTC(),
              testKit.system().scheduler(),
              testKit.system().executionContext(),
              new Backoff(Duration.ofMillis(1), Duration.ofMillis(2)),
              ItemAttempt.AttemptListener.NONE,
              Permits.UNLIMITED,
              new CleanupDeadlines(REQUEST_TIMEOUT, Duration.ofMillis(100)));

      AttemptResult result =
          new ItemAttempt(context, ITEM, "node-1/w1", Duration.ofSeconds(30), 3)
              .run()
              .toCompletableFuture()
              .get(20, TimeUnit.SECONDS);

      assertInstanceOf(AttemptResult.Done.class, result);
    }
    assertEquals(
        List.of("plan", "cleanup", "lookup", "plan", "lookup"),
        late.requests,
        "sent once, looked up again after the plan emptied");
    assertEquals(1, late.effects.get(), "one effect at the provider");
    ScriptedItems.Recorded recorded =
        (ScriptedItems.Recorded)
            items.commands().stream()
                .filter(c -> c.name().equals(RECORD_EFFECT_AND_COMPLETE))
                .findFirst()
                .orElseThrow()
                .detail();
    assertEquals(OutcomeKind.FOUND_BY_LOOKUP, recorded.outcome().kind(), "in the journal");
    assertEquals("late-1", recorded.outcome().providerReference());
  }

  /**
   * A provider of protocol 1.1 that breaks the deadline rule as night 2's did: a cleanup is never
   * answered (the client times out: ambiguous), and it commits only after the first lookup of its
   * key has been answered 404. Its plan has something to do until the effect is committed, nothing
   * after.
   */
  static final class LateProvider implements AutoCloseable {
    final List<String> requests = new CopyOnWriteArrayList<>();
    final AtomicInteger effects = new AtomicInteger();
    final CountDownLatch closing = new CountDownLatch(1);
    final ExecutorService threads = Executors.newCachedThreadPool();
    final HttpServer server;
    volatile boolean sent;

    LateProvider() {
      try {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
      server.setExecutor(threads);
      server.createContext("/", this::handle);
      server.start();
    }

    URI baseUrl() {
      return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/");
    }

    private void handle(HttpExchange exchange) throws IOException {
      String path = exchange.getRequestURI().getPath();
      exchange.getRequestBody().readAllBytes();
      if (path.equals(HttpProtocol.PLANS_PATH)) {
        requests.add("plan");
        answer(
            exchange,
            200,
            effects.get() > 0
                ? "{\"nothingToDo\":true,\"description\":\"already written off\"}"
                : "{\"nothingToDo\":false,\"action\":\"write-off-residual\",\"amountMinor\":12,"
                    + "\"currency\":\"EUR\"}");
      } else if (path.equals(HttpProtocol.CLEANUPS_PATH)) {
        requests.add("cleanup");
        sent = true;
        try {
          closing.await(10, TimeUnit.SECONDS); // never answered: the client's timeout ends it
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        exchange.close();
      } else {
        requests.add("lookup");
        if (effects.get() > 0) {
          answer(
              exchange,
              200,
              "{\"idempotencyKey\":\""
                  + ITEM.idempotencyKey()
                  + "\",\"effectId\":\"late-1\",\"status\":\"APPLIED\","
                  + "\"appliedAt\":\"2026-11-30T02:00:01.000Z\"}");
          return;
        }
        answer(exchange, 404, "{\"error\":\"not_found\",\"message\":\"no effect\"}");
        if (sent) {
          effects.incrementAndGet(); // the late commit lands just after the final lookup
        }
      }
    }

    private static void answer(HttpExchange exchange, int status, String body) throws IOException {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.getResponseHeaders().add(HttpProtocol.PROTOCOL, HttpProtocol.VERSION_1_1);
      exchange.sendResponseHeaders(status, bytes.length);
      exchange.getResponseBody().write(bytes);
      exchange.close();
    }

    @Override
    public void close() {
      closing.countDown();
      server.stop(0);
      threads.shutdownNow();
    }
  }
}
