package io.fencekeeper.provider.sim;

import static io.fencekeeper.provider.sim.SimConnection.cleanup;
import static io.fencekeeper.provider.sim.SimConnection.cleanupHead;
import static io.fencekeeper.provider.sim.SimConnection.cleanupOf;
import static io.fencekeeper.provider.sim.SimConnection.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.http.StandaloneSystem;
import io.fencekeeper.provider.sim.SimConnection.Answer;
import io.fencekeeper.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.ActorSystem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The sim's transport, through a real sim and raw connections: a delayed answer waits on a timer
 * and holds no thread, each connection carries one request at a time, a hang-up ends the
 * connection, a request body is held to 64 KiB whether it comes whole or in parts, and closing
 * drops what is in flight and stops listening.
 */
class SimTransportTest {

  /** Long enough that no request held by it is answered while a test runs. */
  private static final SimFaults HELD = SimFaults.NONE.withLatency(60_000, 0);

  private static final Duration DEADLINE = Duration.ofSeconds(20);
  private static final int LIMIT = 64 * 1024;

  private final List<AutoCloseable> opened = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
  }

  /**
   * On a dispatcher of one thread, requests waiting out their latency are all in flight at once and
   * the sim still answers meanwhile: a delay that held a thread would let only one in.
   */
  @Test
  void requestsWaitingOutTheirLatencyHoldNoThread() throws Exception {
    SimProviderServer sim = track(SimProviderServer.start("127.0.0.1", 0, HELD, 1L, 1));
    for (int i = 0; i < 6; i++) {
      connect(sim)
          .send(get("/v1/plans?job=j&businessDate=2026-11-29&cursor=c-1&accountId=held-" + i));
    }

    Await.until(DEADLINE, "six plans in flight at once", () -> sim.requestsInFlight() == 6);

    Answer ledger = connect(sim).send(get("/ledger")).next().orElseThrow();
    assertEquals(200, ledger.status(), "the one thread is free while six requests wait");
  }

  @Test
  void aRequestPipelinedBehindADelayedOneIsHandledOnlyAfterItsAnswer() throws Exception {
    SimProviderServer sim = start(SimFaults.NONE.withLatency(300, 0));
    SimConnection connection = connect(sim);

    long sent = System.nanoTime();
    connection.send(
        get("/v1/plans?job=j&businessDate=2026-11-29&cursor=c-1&accountId=first")
            + get("/admin/stats"));
    Answer plan = connection.next().orElseThrow();
    Answer stats = connection.next().orElseThrow();
    Duration statsAfter = Duration.ofNanos(System.nanoTime() - sent);

    assertEquals(200, plan.status());
    assertTrue(plan.body().contains("first"), plan.body());
    assertEquals(200, stats.status());
    assertEquals(0, json(stats).get("inFlight").asInt(), "the plan was over before stats began");
    assertEquals(1, json(stats).get("peakInFlight").asInt());
    assertTrue(statsAfter.toMillis() >= 300, "stats answered " + statsAfter + " after sending");
  }

  @Test
  void aHangUpEndsItsConnectionAndWhatWasPipelinedBehindItIsNeverHandled() throws Exception {
    SimProviderServer sim = start(SimFaults.NONE.withTimeoutAfterAccept(1.0, 0));
    SimConnection connection = connect(sim);

    connection.send(
        cleanup("fk-hung-up", SimConnection.CLEANUP) + cleanup("fk-behind", SimConnection.CLEANUP));

    assertTrue(connection.endsWithoutAnAnswer(), "no answer to either request");
    Await.until(DEADLINE, "the connection is gone", () -> sim.openConnections() == 0);
    assertEquals(Map.of("fk-hung-up", 1), sim.effects(), "only the first was applied");
    assertEquals(1, sim.requests(), "the second never reached the sim's routes");
    sim.setFaults(SimFaults.NONE);
    Answer next = connect(sim).send(get("/v1/cleanups/fk-hung-up")).next().orElseThrow();
    assertEquals(200, next.status(), "the next connection is served as ever");
  }

  @Test
  void aConnectionServesOneRequestAfterAnotherUntilThePeerClosesIt() throws Exception {
    SimProviderServer sim = start(SimFaults.NONE);
    SimConnection connection = connect(sim);

    Answer applied =
        connection.send(cleanup("fk-kept", SimConnection.CLEANUP)).next().orElseThrow();
    Answer found = connection.send(get("/v1/cleanups/fk-kept")).next().orElseThrow();

    assertEquals(201, applied.status());
    assertEquals(200, found.status());
    assertEquals(1, sim.openConnections(), "both requests on the one connection");
    connection.close();
    Await.until(
        DEADLINE, "the sim lets go of the closed connection", () -> sim.openConnections() == 0);
  }

  @Test
  void aBodyOfExactlyTheLimitIsReadAndOneByteMoreIsRefusedUnread() throws Exception {
    SimProviderServer sim = start(SimFaults.NONE);
    SimConnection connection = connect(sim);

    Answer exact = connection.send(cleanup("fk-exact", cleanupOf(LIMIT))).next().orElseThrow();
    Answer over = connection.send(cleanup("fk-over", cleanupOf(LIMIT + 1))).next().orElseThrow();

    assertEquals(201, exact.status(), exact.body());
    assertEquals(413, over.status());
    assertTrue(over.body().contains("request body exceeds 65536 bytes"), over.body());
    assertEquals(Map.of("fk-exact", 1), sim.effects());
  }

  /**
   * A body whose last bytes are sent only once the sim has begun the request (it has counted it)
   * cannot have come with the headers: the sim waits for it, and holds it to the same limit.
   */
  @Test
  void aBodyStillArrivingIsWaitedForAndHeldToTheSameLimit() throws Exception {
    SimProviderServer sim = start(SimFaults.NONE);

    Answer exact = sendChunkedAfterTheHead(sim, "fk-streamed", cleanupOf(LIMIT));
    Answer over = sendChunkedAfterTheHead(sim, "fk-streamed-over", cleanupOf(LIMIT + 1));

    assertEquals(201, exact.status(), exact.body());
    assertEquals(413, over.status(), over.body());
    assertTrue(over.body().contains("65536"), "names the limit: " + over.body());
    assertEquals(Map.of("fk-streamed", 1), sim.effects());
  }

  @Test
  void closingDropsEveryRequestInFlightWithoutAnAnswerAndStopsListening() throws Exception {
    SimProviderServer sim = start(HELD);
    SimConnection idle = connect(sim);
    assertEquals(200, idle.send(get("/ledger")).next().orElseThrow().status());
    SimConnection plan =
        connect(sim)
            .send(get("/v1/plans?job=j&businessDate=2026-11-29&cursor=c-1&accountId=closing"));
    SimConnection cleanup = connect(sim).send(cleanup("fk-closing", SimConnection.CLEANUP));
    Await.until(DEADLINE, "both requests in flight", () -> sim.requestsInFlight() == 2);

    sim.close();

    assertTrue(plan.endsWithoutAnAnswer(), "the delayed plan gets no answer");
    assertTrue(cleanup.endsWithoutAnAnswer(), "the delayed cleanup gets no answer");
    assertTrue(idle.endsWithoutAnAnswer(), "an idle connection is closed too");
    assertEquals(Map.of(), sim.effects(), "the delayed cleanup was never applied");
    assertThrows(
        ConnectException.class,
        () -> new Socket(InetAddress.getLoopbackAddress(), sim.port()).close(),
        "nothing listens on the port any more");
  }

  @Test
  void aSimOnAnActorSystemItDoesNotOwnLeavesTheSystemRunningWhenItCloses() throws Exception {
    ActorSystem system = StandaloneSystem.start("sim-transport-test", 2);
    opened.add(() -> StandaloneSystem.terminate(system));

    SimProviderServer.start(system, "127.0.0.1", 0, SimFaults.NONE, 1L).close();
    SimProviderServer again =
        track(SimProviderServer.start(system, "127.0.0.1", 0, SimFaults.NONE, 1L));

    assertFalse(system.whenTerminated().isCompleted(), "the system outlives the first sim");
    assertEquals(200, connect(again).send(get("/ledger")).next().orElseThrow().status());
  }

  @Test
  void aPortInUseIsRefusedNamingTheAddress() throws Exception {
    SimProviderServer sim = start(SimFaults.NONE);

    UncheckedIOException refused =
        assertThrows(UncheckedIOException.class, () -> track(SimProviderServer.start(sim.port())));

    assertTrue(
        refused.getMessage().contains("cannot listen on 127.0.0.1:" + sim.port()),
        refused.getMessage());
    assertEquals(200, ledgerStatus(sim), "the sim on the port serves on");
  }

  /** The head first, the body in two chunks once the sim has counted the request. */
  private Answer sendChunkedAfterTheHead(SimProviderServer sim, String key, String body)
      throws IOException {
    SimConnection connection = connect(sim);
    long before = sim.requests();
    connection.send(cleanupHead(key, "Transfer-Encoding: chunked"));
    Await.until(DEADLINE, "the sim began " + key, () -> sim.requests() == before + 1);
    int half = body.length() / 2;
    connection.send(chunk(body.substring(0, half)));
    connection.send(chunk(body.substring(half)) + "0\r\n\r\n");
    return connection.next().orElseThrow();
  }

  private static String chunk(String ascii) {
    return Integer.toHexString(ascii.length()) + "\r\n" + ascii + "\r\n";
  }

  private int ledgerStatus(SimProviderServer sim) throws IOException {
    return connect(sim).send(get("/ledger")).next().orElseThrow().status();
  }

  private SimProviderServer start(SimFaults faults) {
    return track(SimProviderServer.start(0, faults, 1L));
  }

  private SimConnection connect(SimProviderServer sim) throws IOException {
    SimConnection connection = SimConnection.open(sim);
    opened.add(connection);
    return connection;
  }

  private <T extends AutoCloseable> T track(T closeable) {
    opened.add(closeable);
    return closeable;
  }

  private static JsonNode json(Answer answer) throws IOException {
    return HttpProtocol.json().readTree(answer.body());
  }
}
