package io.fencekeeper.provider.sim;

import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code sim-provider}: the simulated payment provider as its own process (docs/design.md, "The
 * provider boundary").
 */
@Command(
    name = "sim-provider",
    mixinStandardHelpOptions = true,
    description =
        "Runs the simulated payment provider: the Fencekeeper provider protocol with a ledger"
            + " of effects per key (GET /ledger) and fault knobs (also settable with"
            + " PUT /admin/faults).")
public final class SimProviderCommand implements Callable<Integer> {

  @Option(names = "--host", description = "address to listen on (default: ${DEFAULT-VALUE})")
  String host = "127.0.0.1";

  @Option(
      names = "--port",
      description = "port to listen on, 0 = any free (default: ${DEFAULT-VALUE})")
  int port = 8090;

  @Option(
      names = "--threads",
      description =
          "most threads of the sim's dispatcher, which has about one per core; requests are not"
              + " given a thread each (default: ${DEFAULT-VALUE})")
  int threads = 16;

  @Option(
      names = "--seed",
      description = "seed for every random fault decision; the same seed replays the same faults")
  Long seed;

  @Option(names = "--latency-ms", description = "added to every request (default: 0)")
  long latencyMs;

  @Option(names = "--jitter-ms", description = "random extra latency in [0, jitter] (default: 0)")
  long jitterMs;

  @Option(
      names = "--timeout-after-accept",
      paramLabel = "<probability>",
      description = "probability that a cleanup is applied and then never answered")
  double timeoutAfterAccept;

  @Option(
      names = "--hold-after-accept-ms",
      description =
          "for such a cleanup: 0 drops the connection at once, more holds it open that long first")
  long holdAfterAcceptMs;

  @Option(
      names = "--throttle-per-second",
      paramLabel = "<rate>",
      description = "token-bucket rate limit; excess requests get 429 (default: 0 = unlimited)")
  double throttlePerSecond;

  @Option(
      names = "--error-rate",
      paramLabel = "<probability>",
      description = "probability of a 5xx; on a cleanup, half come after applying it")
  double errorRate;

  @Option(names = "--non-idempotent", description = "do not deduplicate: a repeat applies again")
  boolean nonIdempotent;

  @Option(names = "--ignore-fencing", description = "accept stale Fencing-Token values")
  boolean ignoreFencing;

  @Option(
      names = "--protocol",
      paramLabel = "<version>",
      description =
          "the protocol version to answer as: 1.1, or 1.0 (no Fencekeeper-Protocol header, no"
              + " deadline, no currency, a repeated key compared by its whole body); also"
              + " PUT /admin/protocol (default: ${DEFAULT-VALUE})")
  String protocol = SimProtocol.V1_1.version();

  public SimFaults faults() {
    return new SimFaults(
        latencyMs,
        jitterMs,
        timeoutAfterAccept,
        holdAfterAcceptMs,
        throttlePerSecond,
        errorRate,
        nonIdempotent,
        ignoreFencing);
  }

  @Override
  public Integer call() throws InterruptedException {
    SimProtocol speaking;
    try {
      speaking = SimProtocol.parse(protocol);
    } catch (IllegalArgumentException e) {
      System.err.println("sim-provider not started: --" + e.getMessage());
      return 64;
    }
    long actualSeed = seed != null ? seed : System.nanoTime();
    SimProviderServer server = SimProviderServer.start(host, port, faults(), actualSeed, threads);
    server.setProtocol(speaking);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.close();
                  stopped.countDown();
                },
                "sim-provider-shutdown"));
    System.out.println(
        "sim-provider listening on "
            + server.baseUrl()
            + " protocol="
            + speaking.version()
            + " seed="
            + actualSeed
            + " faults="
            + server.faults());
    stopped.await();
    return 0;
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new SimProviderCommand()).execute(args));
  }
}
