package io.fencekeeper.provider.sim;

import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.http.StandaloneSystem;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Clock;
import java.util.Map;
import java.util.Random;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.ClassicActorSystemProvider;

/**
 * The simulated payment provider: the provider protocol (docs/provider-protocol.md) served by a
 * real HTTP server ({@link SimTransport}, {@link SimRoutes}), with a ledger that counts effects per
 * key ({@link SimLedger}) and the fault knobs of {@link SimFaults} ({@link SimFaultInjector}). Runs
 * in-process (the embedded default on the node's actor system, tests on a small system of their
 * own) or as its own process ({@link SimProviderCommand}).
 */
public final class SimProviderServer implements AutoCloseable {

  private final SimTransport transport;
  private final SimLedger ledger = new SimLedger();
  private final SimTraffic traffic = new SimTraffic(System::currentTimeMillis);
  private final SimFaultInjector injector;
  private final SimRoutes routes;

  private SimProviderServer(SimTransport transport, SimFaults faults, long seed) {
    this.transport = transport;
    // java.util.Random is thread-safe and seedable: a run with the same seed draws the same faults
    this.injector = new SimFaultInjector(faults, new Random(seed), System::nanoTime);
    this.routes = new SimRoutes(transport, ledger, traffic, injector, SimProtocol.V1_1);
    transport.answersAs11(() -> routes.protocol() == SimProtocol.V1_1);
  }

  /** Starts on {@code 127.0.0.1:port} (0 picks a free port) without faults. */
  public static SimProviderServer start(int port) {
    return start("127.0.0.1", port, SimFaults.NONE, 1L, 16);
  }

  public static SimProviderServer start(int port, SimFaults faults, long seed) {
    return start("127.0.0.1", port, faults, seed, 16);
  }

  /**
   * On an actor system of its own, which closing the server terminates; its dispatcher has about
   * one thread per core and at most {@code threads}.
   */
  public static SimProviderServer start(
      String host, int port, SimFaults faults, long seed, int threads) {
    ActorSystem own = StandaloneSystem.start("fencekeeper-sim-provider", threads);
    try {
      return serve(new SimTransport(own, own), host, port, faults, seed);
    } catch (RuntimeException e) {
      StandaloneSystem.terminate(own);
      throw e;
    }
  }

  /** On {@code system} (a node's embedded provider), which outlives the server. */
  public static SimProviderServer start(
      ClassicActorSystemProvider system, String host, int port, SimFaults faults, long seed) {
    return serve(new SimTransport(system.classicSystem(), null), host, port, faults, seed);
  }

  private static SimProviderServer serve(
      SimTransport transport, String host, int port, SimFaults faults, long seed) {
    SimProviderServer sim = new SimProviderServer(transport, faults, seed);
    transport.bind(host, port, sim.routes::handle);
    return sim;
  }

  /** The clock the sim judges a cleanup's deadline by (the system's unless told). */
  public void useClock(Clock clock) {
    routes.useClock(clock);
  }

  public int port() {
    return transport.address().getPort();
  }

  public URI baseUrl() {
    InetSocketAddress bound = transport.address();
    return URI.create(
        "http://" + bound.getAddress().getHostAddress() + ":" + bound.getPort() + "/");
  }

  public SimFaults faults() {
    return injector.faults();
  }

  public void setFaults(SimFaults faults) {
    injector.setFaults(faults);
  }

  /** The protocol version the sim answers as: 1.1 from the start. */
  public SimProtocol protocol() {
    return routes.protocol();
  }

  /**
   * Answers as {@code protocol} from now on ({@code PUT /admin/protocol}); what it stored under
   * each key stays, as at a provider upgraded (or rolled back) in place.
   */
  public void setProtocol(SimProtocol protocol) {
    routes.setProtocol(protocol);
  }

  /** Effects actually applied per idempotency key, as {@code GET /ledger} reports them. */
  public Map<String, Integer> effects() {
    return ledger.effects();
  }

  /** Cleanup requests received, whatever their answer. */
  public long requests() {
    return ledger.requests();
  }

  /** {@code /v1} requests in flight right now. */
  public int requestsInFlight() {
    return traffic.inFlight();
  }

  /** The most {@code /v1} requests this server has had in flight at once (since a reset). */
  public int peakInFlight() {
    return traffic.peakInFlight();
  }

  /** {@code /v1} requests that arrived in each wall-clock second (epoch seconds), oldest first. */
  public Map<Long, Long> requestsPerSecond() {
    return traffic.perSecond();
  }

  /** Whether a request with this key is being processed right now (for key_in_use). */
  public boolean inFlight(String idempotencyKey) {
    return ledger.inFlight(idempotencyKey);
  }

  public void reset() {
    routes.reset();
  }

  /** Loses the effect under this key ({@code DELETE /admin/effects/{key}}); false if none. */
  public boolean loseEffect(String idempotencyKey) {
    return ledger.lose(idempotencyKey);
  }

  /** Writes an effect Fencekeeper never asked for ({@code POST /admin/effects/{key}}). */
  public Receipt writeForeignEffect(String idempotencyKey) {
    return ledger.writeForeign(idempotencyKey);
  }

  /** Lookups answered per key since the start or the last reset ({@code GET /admin/lookups}). */
  public Map<String, Long> lookups() {
    return ledger.lookups();
  }

  /**
   * Stops listening, closes every connection (a request in flight gets no answer), and terminates
   * the server's own actor system if it has one.
   */
  @Override
  public void close() {
    transport.close();
  }

  /** Connections open right now (a test's view). */
  int openConnections() {
    return transport.openConnections();
  }
}
