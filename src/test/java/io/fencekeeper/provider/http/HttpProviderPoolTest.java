package io.fencekeeper.provider.http;

import static io.fencekeeper.provider.ProviderTestSupport.cleanup;
import static io.fencekeeper.provider.ProviderTestSupport.failure;
import static io.fencekeeper.provider.ProviderTestSupport.item;
import static io.fencekeeper.provider.ProviderTestSupport.result;
import static io.fencekeeper.provider.ProviderTestSupport.writeOff;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.provider.sim.SimProviderServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ActorSystem;
import org.junit.jupiter.api.Test;

/**
 * What the Pekko HTTP client adds to the protocol's error mapping (HttpProviderErrorMappingTest):
 * bounded answers, a provider that never answers, refused connections, a bounded pool under many
 * concurrent calls, and where the caller's continuations run.
 */
class HttpProviderPoolTest {

  private static final Duration CONNECT = Duration.ofSeconds(2);

  @Test
  void aHugeAnswerIsCutOffWithAnErrorNotReadIntoMemory() throws Exception {
    byte[] chunk = new byte[64 * 1024];
    java.util.Arrays.fill(chunk, (byte) 'x');
    int chunks = 160; // 10 MiB, far beyond MAX_RESPONSE_BYTES
    try (RawServer huge =
            new RawServer(
                (head, out) -> {
                  String status = head.startsWith("POST") ? "201 Created" : "200 OK";
                  RawServer.head(
                      out,
                      status,
                      "Content-Type: application/json",
                      "Content-Length: " + (long) chunk.length * chunks);
                  for (int i = 0; i < chunks; i++) {
                    out.write(chunk);
                  }
                  out.flush();
                });
        HttpProvider provider =
            HttpProvider.create(huge.baseUrl(), CONNECT, Duration.ofSeconds(5))) {
      ItemId item = item("a-huge");

      ProviderError apply =
          failure(provider.apply(cleanup(item, writeOff(1), item.idempotencyKey(), 1)));
      ProviderError plan = failure(provider.plan(item));

      // accepted, but the answer cannot be read: only a lookup can tell
      assertInstanceOf(ProviderError.Ambiguous.class, apply);
      assertInstanceOf(ProviderError.Transient.class, plan);
      for (ProviderError error : List.of(apply, plan)) {
        assertTrue(
            error.message().contains("more than " + HttpProvider.MAX_RESPONSE_BYTES + " bytes"),
            error.message());
        assertTrue(error.message().length() < 400, "a sentence, not a dump: " + error.message());
        assertFalse(error.message().contains("\tat "), "no stack trace: " + error.message());
      }
    }
  }

  @Test
  void aHugeErrorPageIsClassifiedByItsStatusAlone() throws Exception {
    byte[] page =
        ("<html>" + "proxy error ".repeat(60_000) + "</html>").getBytes(StandardCharsets.UTF_8);
    try (RawServer proxy =
            new RawServer(
                (head, out) -> {
                  RawServer.head(
                      out,
                      head.startsWith("POST") ? "502 Bad Gateway" : "429 Too Many Requests",
                      "Content-Type: text/html",
                      "Retry-After: 3",
                      "Transfer-Encoding: chunked");
                  // chunked, so no Content-Length warns the client: the limit cuts the stream
                  for (int offset = 0; offset < page.length; offset += 8192) {
                    int length = Math.min(8192, page.length - offset);
                    out.write(
                        (Integer.toHexString(length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(page, offset, length);
                    out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                  }
                  out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                  out.flush();
                });
        HttpProvider provider =
            HttpProvider.create(proxy.baseUrl(), CONNECT, Duration.ofSeconds(5))) {
      ItemId item = item("a-proxy");

      ProviderError apply =
          failure(provider.apply(cleanup(item, writeOff(1), item.idempotencyKey(), 1)));
      ProviderError plan = failure(provider.plan(item));

      assertInstanceOf(ProviderError.Ambiguous.class, apply);
      assertTrue(apply.message().startsWith("502 http_502"), apply.message());
      assertTrue(
          apply.message().contains("more than " + HttpProvider.MAX_RESPONSE_BYTES + " bytes"),
          "the chunked body was cut off at the limit: " + apply.message());
      assertEquals(
          Duration.ofSeconds(3),
          assertInstanceOf(ProviderError.Throttled.class, plan).retryAfter());
    }
  }

  @Test
  void aProviderThatAcceptsAndNeverAnswersIsAmbiguousWithinTheRequestTimeout() throws Exception {
    Duration timeout = Duration.ofMillis(600);
    try (RawServer silent = new RawServer((head, out) -> {});
        HttpProvider provider = HttpProvider.create(silent.baseUrl(), CONNECT, timeout)) {
      ItemId item = item("a-silent");

      long start = System.nanoTime();
      ProviderError apply =
          failure(provider.apply(cleanup(item, writeOff(1), item.idempotencyKey(), 1)));
      Duration applyTook = Duration.ofNanos(System.nanoTime() - start);
      start = System.nanoTime();
      ProviderError plan = failure(provider.plan(item));
      Duration planTook = Duration.ofNanos(System.nanoTime() - start);

      assertInstanceOf(ProviderError.Ambiguous.class, apply);
      assertTrue(apply.message().contains("no answer within the request timeout"), apply.message());
      assertInstanceOf(ProviderError.Transient.class, plan);
      for (Duration took : List.of(applyTook, planTook)) {
        assertTrue(took.compareTo(timeout) >= 0, "gave up after " + took);
        assertTrue(took.compareTo(timeout.plusSeconds(4)) < 0, "gave up only after " + took);
      }
      assertEquals(2, silent.requests.get(), "both requests reached the provider, once each");
    }
  }

  @Test
  void aRefusedConnectionIsRetryableAndAppliesNothing() {
    SimProviderServer sim = SimProviderServer.start(0);
    URI gone = sim.baseUrl();
    sim.close();
    ItemId item = item("a-refused");
    try (HttpProvider provider = HttpProvider.create(gone, CONNECT, Duration.ofSeconds(2))) {

      ProviderError apply =
          failure(provider.apply(cleanup(item, writeOff(1), item.idempotencyKey(), 1)));
      ProviderError lookup = failure(provider.lookup(item, item.idempotencyKey()));

      assertInstanceOf(ProviderError.Transient.class, apply);
      assertTrue(apply.message().startsWith("could not connect"), apply.message());
      assertInstanceOf(ProviderError.Transient.class, lookup);
      assertEquals(Map.of(), sim.effects());
      assertEquals(0, sim.requests());
    }
  }

  @Test
  void manyConcurrentCallsShareTheBoundedPool() throws Exception {
    try (SimProviderServer sim = SimProviderServer.start(0, SimFaults.NONE.withLatency(20, 0), 9);
        HttpProvider provider =
            HttpProvider.create(sim.baseUrl(), CONNECT, Duration.ofSeconds(10), 4)) {
      List<CompletableFuture<Receipt>> applies = new ArrayList<>();
      for (int i = 0; i < 48; i++) {
        ItemId item = item("many-" + i);
        applies.add(
            provider
                .plan(item)
                .thenCompose(
                    plan -> provider.apply(cleanup(item, writeOff(1), item.idempotencyKey(), 1)))
                .toCompletableFuture());
      }
      for (CompletableFuture<Receipt> apply : applies) {
        assertEquals(Receipt.APPLIED, apply.get(30, TimeUnit.SECONDS).status());
      }

      assertTrue(sim.peakInFlight() <= 4, "at most 4 connections, saw " + sim.peakInFlight());
      assertEquals(4, sim.peakInFlight(), "and the pool used all of them");
      assertEquals(48, sim.effects().size());
      sim.effects().values().forEach(count -> assertEquals(1, count));
    }
  }

  @Test
  void callsBeyondThePoolsQueueAreRefusedBeforeAnythingIsSent() throws Exception {
    int queue = HttpProvider.queueSize(1);
    try (SimProviderServer sim = SimProviderServer.start(0, SimFaults.NONE.withLatency(40, 0), 9);
        HttpProvider provider =
            HttpProvider.create(sim.baseUrl(), CONNECT, Duration.ofSeconds(10), 1)) {
      List<CompletionStage<Plan>> plans = new ArrayList<>();
      for (int i = 0; i < queue + 20; i++) {
        plans.add(provider.plan(item("queued-" + i)));
      }
      int answered = 0;
      int refused = 0;
      for (CompletionStage<Plan> plan : plans) {
        try {
          plan.toCompletableFuture().get(60, TimeUnit.SECONDS);
          answered++;
        } catch (ExecutionException e) {
          ProviderError error = ProviderError.from(e);
          assertInstanceOf(ProviderError.Transient.class, error);
          assertTrue(error.message().contains("nothing was sent"), error.message());
          refused++;
        }
      }

      assertTrue(refused > 0, "the queue of " + queue + " overflowed");
      assertTrue(answered >= queue, answered + " answered");
      long arrived = sim.requestsPerSecond().values().stream().mapToLong(Long::longValue).sum();
      assertEquals(answered, arrived, "a refused call never reached the provider");
      assertEquals(1, sim.peakInFlight());
    }
  }

  @Test
  void queryValuesAndKeysArriveExactlyAsSent() {
    try (SimProviderServer sim = SimProviderServer.start(0);
        HttpProvider provider =
            HttpProvider.create(sim.baseUrl(), CONNECT, Duration.ofSeconds(5))) {
      // what an account id may hold that a query string must escape
      String account = "a+b=c@d:e.f_g-h";
      ItemId item = item(account);

      Plan plan = result(provider.plan(item));

      assertTrue(plan.description().endsWith(" on " + account + " at c-1"), plan.description());
      // a key of visible ASCII that a path segment must escape: applied, then found under it alone
      String key = "fk-a/b%c+d?e#f";
      result(provider.apply(cleanup(item, writeOff(1), key, 1)));
      assertTrue(result(provider.lookup(item, key)).isPresent());
      assertTrue(result(provider.lookup(item, key + "x")).isEmpty());
    }
  }

  @Test
  void continuationsRunOnTheActorSystemsDispatcherNotTheCommonPool() throws Exception {
    ActorSystem node = StandaloneSystem.start("pool-test-node", 2);
    try (SimProviderServer sim = SimProviderServer.start(0, SimFaults.NONE.withLatency(100, 0), 9);
        HttpProvider provider =
            HttpProvider.create(node, sim.baseUrl(), CONNECT, Duration.ofSeconds(5), 2)) {
      ItemId item = item("a-thread");

      String planThread =
          provider
              .plan(item)
              .thenApply(plan -> Thread.currentThread().getName())
              .toCompletableFuture()
              .get(15, TimeUnit.SECONDS);
      String applyThread =
          provider
              .apply(cleanup(item, writeOff(1), item.idempotencyKey(), 1))
              .thenApply(receipt -> Thread.currentThread().getName())
              .toCompletableFuture()
              .get(15, TimeUnit.SECONDS);

      for (String thread : List.of(planThread, applyThread)) {
        assertTrue(thread.startsWith("pool-test-node-pekko.actor.default-dispatcher"), thread);
      }
    } finally {
      StandaloneSystem.terminate(node);
    }
  }
}
