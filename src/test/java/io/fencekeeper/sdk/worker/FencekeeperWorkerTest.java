package io.fencekeeper.sdk.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import io.fencekeeper.testing.Await;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The worker client's rules (docs/external-workers.md, "The Java worker client") against a node
 * played by a stub HTTP server with exact answers: what it sends, in which order, and what it never
 * sends.
 */
class FencekeeperWorkerTest {

  static final ObjectMapper JSON = new ObjectMapper();
  static final Duration WITHIN = Duration.ofSeconds(20);

  /** One request the stub received: its command (claim-next, renew, complete, ...), its body. */
  record Seen(String command, JsonNode body, long atNanos) {}

  /** An answer of the stub; {@code drop}: close the connection without one (a lost answer). */
  record Reply(int status, String json, boolean drop) {
    static Reply of(int status, String json) {
      return new Reply(status, json, false);
    }

    static Reply dropped() {
      return new Reply(0, null, true);
    }
  }

  final List<Seen> seen = new CopyOnWriteArrayList<>();
  final Map<String, Deque<Reply>> script = new ConcurrentHashMap<>();
  final HttpServer node;

  FencekeeperWorkerTest() throws IOException {
    node = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    node.createContext(
        "/",
        exchange -> {
          String path = exchange.getRequestURI().getRawPath();
          String command = path.substring(path.lastIndexOf('/') + 1);
          byte[] body = exchange.getRequestBody().readAllBytes();
          seen.add(new Seen(command, JSON.readTree(body), System.nanoTime()));
          Reply reply =
              Optional.ofNullable(script.get(command))
                  .map(Deque::poll)
                  .orElse(defaultReply(command));
          if (reply.drop()) {
            exchange.close(); // the request reached the node; its answer never comes back
            return;
          }
          byte[] out =
              reply.json() == null ? new byte[0] : reply.json().getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(reply.status(), out.length == 0 ? -1 : out.length);
          if (out.length > 0) {
            exchange.getResponseBody().write(out);
          }
          exchange.close();
        });
    node.start();
  }

  static Reply defaultReply(String command) {
    return command.equals("claim-next")
        ? Reply.of(409, "{\"error\":\"run_ended\",\"message\":\"ended\"}")
        : Reply.of(200, "{\"status\":\"DONE\"}");
  }

  @AfterEach
  void stop() {
    node.stop(0);
  }

  void answer(String command, Reply... replies) {
    script.computeIfAbsent(command, c -> new ArrayDeque<>()).addAll(List.of(replies));
  }

  static String claim(String firstStep, String effect, long leaseMillis) {
    return "{\"itemId\":\"job/2026-11-29/a-1/c-1\",\"idempotencyKey\":\"fk-1\",\"token\":7,"
        + "\"leaseExpiresAt\":\"2026-11-29T01:00:30Z\",\"leaseMillis\":"
        + leaseMillis
        + ",\"nodeTime\":\"2026-11-29T01:00:00Z\",\"attempt\":2,\"effect\":\""
        + effect
        + "\",\"firstStep\":\""
        + firstStep
        + "\",\"takeover\":true,\"runId\":\"job/2026-11-29\",\"accountId\":\"a-1\",\"cursor\":\"c-1\"}";
  }

  List<Seen> commands(String command) {
    return seen.stream().filter(s -> s.command().equals(command)).toList();
  }

  FencekeeperWorker.Builder worker(ItemHandler handler) {
    return FencekeeperWorker.builder(
            URI.create("http://127.0.0.1:" + node.getAddress().getPort()),
            "job/2026-11-29",
            handler)
        .token("t")
        .name("test")
        .lease(Duration.ofSeconds(30))
        .requestTimeout(Duration.ofSeconds(5));
  }

  /** A handler that applies every item once and records what it was given. */
  static class Recording implements ItemHandler {
    final AtomicInteger applied = new AtomicInteger();
    final AtomicInteger lookedUp = new AtomicInteger();
    volatile Optional<Outcome> found = Optional.empty();
    volatile long token;
    volatile String key;

    @Override
    public Outcome apply(Item item, Lease lease) throws Exception {
      applied.incrementAndGet();
      token = lease.fencingToken();
      key = item.idempotencyKey();
      return Outcome.applied("eff-" + item.accountId());
    }

    @Override
    public Optional<Outcome> lookup(Item item, Lease lease) {
      lookedUp.incrementAndGet();
      return found;
    }
  }

  @Test
  void aClaimWhoseAnswerWasLostIsSentAgainWithTheSameRequestIdAndCompletedInOneCall()
      throws Exception {
    answer("claim-next", Reply.dropped(), Reply.of(200, claim("APPLY", "NONE", 30_000)));
    Recording handler = new Recording();
    FencekeeperWorker worker = worker(handler).build().start();
    assertTrue(worker.awaitStopped(WITHIN), "stops when the run ends");

    List<Seen> claims = commands("claim-next");
    assertEquals(3, claims.size(), "lost, repeated, then the run's end: " + seen);
    assertEquals(
        claims.get(0).body().path("requestId"),
        claims.get(1).body().path("requestId"),
        "the repeat names the same claim");
    assertFalse(
        claims.get(1).body().path("requestId").equals(claims.get(2).body().path("requestId")),
        "a claim that got its answer is not repeated");
    assertEquals(1, handler.applied.get());
    assertEquals(7, handler.token, "the fencing token reaches the handler");
    assertEquals("fk-1", handler.key, "so does the idempotency key");
    List<Seen> completes = commands("complete");
    assertEquals(1, completes.size(), "recorded and completed in one call");
    assertEquals("APPLIED", completes.get(0).body().path("outcome").path("kind").asText());
    assertEquals(
        "eff-a-1", completes.get(0).body().path("outcome").path("providerReference").asText());
    assertEquals(7, completes.get(0).body().path("token").asLong());
    assertEquals(List.of(), commands("effect"), "never the two-step path");
    assertEquals(Optional.of("run_ended"), worker.stoppedBecause());
  }

  @Test
  void anAmbiguousItemIsLookedUpBeforeAnyApplyAndWhatWasFoundIsCompleted() throws Exception {
    answer("claim-next", Reply.of(200, claim("LOOKUP", "AMBIGUOUS", 30_000)));
    Recording handler = new Recording();
    handler.found = Optional.of(Outcome.found("eff-earlier"));
    FencekeeperWorker worker = worker(handler).build().start();
    assertTrue(worker.awaitStopped(WITHIN));
    assertEquals(1, handler.lookedUp.get());
    assertEquals(0, handler.applied.get(), "found: never applied again");
    JsonNode outcome = commands("complete").get(0).body().path("outcome");
    assertEquals("FOUND_BY_LOOKUP", outcome.path("kind").asText());
    assertEquals("eff-earlier", outcome.path("providerReference").asText());
  }

  @Test
  void anAmbiguousItemIsNotLookedUpBeforeItsLookupAfterAndTheAllowanceHavePassed()
      throws Exception {
    // lookupAfter 2 s after the node's time: by the worker's clock, no lookup before the answer's
    // arrival + 2 s + the 1 s allowance (a cleanup of the earlier holder may commit until then)
    answer(
        "claim-next",
        Reply.of(
            200,
            claim("LOOKUP", "AMBIGUOUS", 30_000)
                .replace("\"nodeTime\"", "\"lookupAfter\":\"2026-11-29T01:00:02Z\",\"nodeTime\"")));
    long[] lookedUpAt = new long[1];
    Recording handler =
        new Recording() {
          @Override
          public Optional<Outcome> lookup(Item item, Lease lease) {
            lookedUpAt[0] = System.nanoTime();
            return super.lookup(item, lease);
          }
        };
    long started = System.nanoTime();
    FencekeeperWorker worker = worker(handler).build().start();
    assertTrue(worker.awaitStopped(WITHIN));
    assertEquals(1, handler.lookedUp.get());
    assertTrue(
        lookedUpAt[0] - started >= Duration.ofSeconds(3).toNanos(),
        "looked up "
            + Duration.ofNanos(lookedUpAt[0] - started).toMillis()
            + " ms after the start, before lookupAfter + the allowance");
  }

  @Test
  void anAmbiguousItemNotFoundIsAppliedAfterItsLookup() throws Exception {
    answer("claim-next", Reply.of(200, claim("LOOKUP", "AMBIGUOUS", 30_000)));
    Recording handler = new Recording();
    FencekeeperWorker worker = worker(handler).build().start();
    assertTrue(worker.awaitStopped(WITHIN));
    assertEquals(1, handler.lookedUp.get());
    assertEquals(1, handler.applied.get());
    assertEquals(
        "APPLIED", commands("complete").get(0).body().path("outcome").path("kind").asText());
  }

  @Test
  void aRecordedEffectIsCompletedWithoutTheHandler() throws Exception {
    answer("claim-next", Reply.of(200, claim("COMPLETE", "RECORDED", 30_000)));
    Recording handler = new Recording();
    FencekeeperWorker worker = worker(handler).build().start();
    assertTrue(worker.awaitStopped(WITHIN));
    assertEquals(0, handler.applied.get() + handler.lookedUp.get());
    assertTrue(commands("complete").get(0).body().path("outcome").isMissingNode());
  }

  /**
   * The lease is renewed at a third of its length; a renewal refused loses it, and the client then
   * sends nothing for the item, whatever the handler returns.
   */
  @Test
  void aRenewalRefusedLosesTheLeaseAndNothingIsSentAfterIt() throws Exception {
    answer("claim-next", Reply.of(200, claim("APPLY", "NONE", 1_500)));
    answer(
        "renew",
        Reply.of(
            409,
            "{\"error\":\"lease_lost\",\"message\":\"taken over\",\"presentedToken\":7,\"currentToken\":8}"));
    AtomicInteger sawLost = new AtomicInteger();
    ItemHandler handler =
        new Recording() {
          @Override
          public Outcome apply(Item item, Lease lease) {
            Await.until(WITHIN, "the renewal refused", lease::isLost);
            sawLost.incrementAndGet();
            return Outcome.applied("too-late");
          }
        };
    long started = System.nanoTime();
    FencekeeperWorker worker = worker(handler).lease(Duration.ofMillis(1_500)).build().start();
    assertTrue(worker.awaitStopped(WITHIN));
    assertEquals(1, sawLost.get(), "the handler sees its lease lost");
    List<Seen> renewals = commands("renew");
    assertEquals(1, renewals.size(), "no renewal after the refusal: " + seen);
    assertTrue(
        renewals.get(0).atNanos() - started >= Duration.ofMillis(450).toNanos(),
        "renewed at a third of the lease, not at once");
    assertEquals(List.of(), commands("complete"), "nothing written after a lost lease");
    assertEquals(List.of(), commands("release"));
  }

  /**
   * A pause: the lease ran out by the worker's own clock with no renewal answered. Nothing is
   * recorded; the one word a lapsed lease takes, {@code ambiguous}, tells the node its holder
   * lived.
   */
  @Test
  void aLeaseThatRanOutByItsOwnClockIsNeverCompletedButSaysAmbiguous() throws Exception {
    answer("claim-next", Reply.of(200, claim("APPLY", "NONE", 900)));
    answer("renew", Reply.dropped(), Reply.dropped(), Reply.dropped(), Reply.dropped());
    ItemHandler handler =
        new Recording() {
          @Override
          public Outcome apply(Item item, Lease lease) {
            Await.until(WITHIN, "the lease run out", lease::isLost);
            return Outcome.applied("written-late");
          }
        };
    FencekeeperWorker worker = worker(handler).lease(Duration.ofMillis(900)).build().start();
    assertTrue(worker.awaitStopped(WITHIN));
    assertEquals(List.of(), commands("complete"), "no outcome recorded after the lease ran out");
    assertEquals(1, commands("ambiguous").size(), seen.toString());
  }

  @Test
  void anApplyThatThrowsIsMarkedAmbiguousAndGivenBack() throws Exception {
    answer("claim-next", Reply.of(200, claim("APPLY", "NONE", 30_000)));
    ItemHandler handler =
        new Recording() {
          @Override
          public Outcome apply(Item item, Lease lease) {
            throw new IllegalStateException("socket reset after send");
          }
        };
    FencekeeperWorker worker = worker(handler).build().start();
    assertTrue(worker.awaitStopped(WITHIN));
    List<String> order = seen.stream().map(Seen::command).toList();
    assertEquals(List.of("claim-next", "ambiguous", "release", "claim-next"), order);
  }

  @Test
  void itWaitsAsTheNodeAsksAndStopsWhenDrainedIfToldTo() throws Exception {
    answer(
        "claim-next",
        Reply.of(429, "{\"error\":\"nothing_ready\",\"message\":\"m\",\"retryAfterMillis\":400}"),
        Reply.of(503, "{\"error\":\"run_staging\",\"message\":\"m\",\"retryAfterMillis\":300}"),
        Reply.of(204, null));
    FencekeeperWorker worker = worker(new Recording()).stopWhenDrained(true).build().start();
    assertTrue(worker.awaitStopped(WITHIN));
    List<Seen> claims = commands("claim-next");
    assertEquals(3, claims.size(), seen.toString());
    assertTrue(
        claims.get(1).atNanos() - claims.get(0).atNanos() >= Duration.ofMillis(400).toNanos());
    assertTrue(
        claims.get(2).atNanos() - claims.get(1).atNanos() >= Duration.ofMillis(300).toNanos());
    assertFalse(
        claims.get(0).body().path("requestId").equals(claims.get(1).body().path("requestId")),
        "a clear answer is never repeated: the next claim is a new one");
    assertEquals(Optional.of("drained"), worker.stoppedBecause());
  }

  @Test
  void aWrongTokenStopsTheWorkerWithTheReason() throws Exception {
    answer("claim-next", Reply.of(401, "{\"error\":\"unauthorized\",\"message\":\"no\"}"));
    FencekeeperWorker worker = worker(new Recording()).build().start();
    assertTrue(worker.awaitStopped(WITHIN));
    assertTrue(
        worker.stoppedBecause().orElse("").contains("401"), worker.stoppedBecause().toString());
    assertEquals(1, seen.size());
  }

  /** SIGTERM: no new claim; the running handler finishes and its outcome is reported. */
  @Test
  void closeStopsClaimingAndLetsTheRunningHandlerFinish() throws Exception {
    answer("claim-next", Reply.of(200, claim("APPLY", "NONE", 30_000)));
    CountDownLatch inHandler = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    ItemHandler handler =
        new Recording() {
          @Override
          public Outcome apply(Item item, Lease lease) throws InterruptedException {
            inHandler.countDown();
            finish.await(WITHIN.toMillis(), TimeUnit.MILLISECONDS);
            return Outcome.applied("eff");
          }
        };
    FencekeeperWorker worker = worker(handler).build().start();
    assertTrue(inHandler.await(WITHIN.toMillis(), TimeUnit.MILLISECONDS));
    Thread closer = new Thread(() -> worker.close(WITHIN));
    closer.start();
    Await.until(WITHIN, "the close under way", () -> worker.stoppedBecause().isPresent());
    finish.countDown();
    closer.join(WITHIN.toMillis());
    assertEquals(1, commands("claim-next").size(), "no claim after the close: " + seen);
    assertEquals(1, commands("complete").size(), "the running handler's outcome is reported");
  }
}
