package io.fencekeeper.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.provider.sim.SimProviderServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The simulated provider a provider bench calls: a {@code sim-provider} process the bench starts
 * (the default: its CPU is then its own, not the node's), one the user already runs ({@code
 * --sim-url}), or a server inside this JVM.
 *
 * @param cpu the sim's process, when the bench can measure it
 * @param description how the sim runs, for the summary
 */
record Sim(URI baseUrl, ProcessCpu cpu, String description, AutoCloseable stop)
    implements AutoCloseable {

  /**
   * The JDK's HttpServer, under the sim, closes a connection right after its response while 200
   * others are idle (its default). A node with 256 workers leaves that many idle connections behind
   * until the server's 30-second idle timeout; meanwhile every connection of the next side was
   * closed after one answer, and its next POST on it failed without an answer (the JDK's client
   * does not retry a POST): 1,147 of 20,000 db-scheduler tasks failed that way. The bench's sim
   * keeps its idle connections.
   */
  private static final String MAX_IDLE_CONNECTIONS = "sun.net.httpserver.maxIdleConnections";

  private static final String IDLE_CONNECTIONS_KEPT = "4096";

  private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+)");

  /**
   * Starts {@code java -cp <product jar> io.fencekeeper.cli.Main sim-provider --port 0} with {@code
   * latencyMs} per call and {@code threads} request threads, and waits for the address it prints.
   * Its output goes to {@code sim-provider.log} in {@code workDir}.
   */
  static Sim startProcess(Path workDir, long latencyMs, int threads) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-D" + MAX_IDLE_CONNECTIONS + "=" + IDLE_CONNECTIONS_KEPT);
    command.add("-cp");
    command.add(productClassPath());
    // by name: the bench sits beside the command line, it does not import it (LayeringTest)
    command.add("io.fencekeeper.cli.Main");
    command.addAll(
        List.of(
            "sim-provider",
            "--port",
            "0",
            "--threads",
            Integer.toString(threads),
            "--latency-ms",
            Long.toString(latencyMs),
            "--seed",
            "1"));
    Path log = workDir.resolve("sim-provider.log");
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    // an interrupted bench must not leave its sim running on a shared machine
    Thread reaper = new Thread(process::destroy, "sim-provider-reaper-" + process.pid());
    Runtime.getRuntime().addShutdownHook(reaper);
    CompletableFuture<URI> listening = new CompletableFuture<>();
    Thread drain =
        new Thread(() -> drain(process, log, listening), "sim-provider-output-" + process.pid());
    drain.setDaemon(true);
    drain.start();
    process.onExit().thenRun(() -> listening.completeExceptionally(exited(process, log)));
    URI url;
    try {
      url = listening.get(60, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException | InterruptedException e) {
      stop(process);
      throw new IllegalStateException(
          "sim-provider did not start (" + String.join(" ", command) + "); see " + log, e);
    }
    return new Sim(
        url,
        ProcessCpu.tree(process.pid(), "sim-provider process " + process.pid()),
        "sim-provider in its own process (pid " + process.pid() + ", " + threads + " threads)",
        () -> {
          stop(process);
          try {
            Runtime.getRuntime().removeShutdownHook(reaper);
          } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway, on a process already gone
          }
        });
  }

  /** A sim someone else runs: used as it is; its CPU is not measured here. */
  static Sim external(URI url) {
    return new Sim(
        url,
        ProcessCpu.notMeasured("not measured: the sim at --sim-url is not the bench's process"),
        "a sim-provider run by someone else (--sim-url)",
        () -> {});
  }

  /** The sim inside this JVM: its CPU is part of the JVM's. */
  static Sim inProcess(long latencyMs, int threads) {
    // read once, when the JDK's HttpServer is first used in this JVM
    if (System.getProperty(MAX_IDLE_CONNECTIONS) == null) {
      System.setProperty(MAX_IDLE_CONNECTIONS, IDLE_CONNECTIONS_KEPT);
    }
    SimProviderServer server =
        SimProviderServer.start(
            "127.0.0.1", 0, SimFaults.NONE.withLatency(latencyMs, 0), 1L, threads);
    return new Sim(
        server.baseUrl(),
        ProcessCpu.notMeasured("in this JVM: part of the JVM's CPU"),
        "sim-provider in this JVM (" + threads + " threads)",
        server::close);
  }

  /**
   * Sets the sim's latency to {@code latencyMs} (its other faults as they are) until the returned
   * handle is closed, which puts its faults back as they were: a warm-up at one latency before a
   * timed run at another, on the sim's own {@code /admin/faults}.
   */
  AutoCloseable latencyFor(long latencyMs) throws Exception {
    return faultsFor(Map.of("latencyMs", latencyMs));
  }

  /**
   * Sets the sim's knobs named in {@code knobs} ({@code /admin/faults} fields), its other faults as
   * they are, until the returned handle is closed, which puts them back as they were.
   */
  AutoCloseable faultsFor(Map<String, ? extends Number> knobs) throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    URI faults = baseUrl.resolve("/admin/faults");
    String before =
        http.send(HttpRequest.newBuilder(faults).build(), HttpResponse.BodyHandlers.ofString())
            .body();
    ObjectNode changed = (ObjectNode) HttpProtocol.json().readTree(before);
    knobs.forEach(
        (knob, value) -> {
          if (value instanceof Double || value instanceof Float) {
            changed.put(knob, value.doubleValue());
          } else {
            changed.put(knob, value.longValue());
          }
        });
    putFaults(http, faults, changed.toString());
    return () -> putFaults(http, faults, before);
  }

  /**
   * The {@code /v1} requests the sim received in each wall-clock second (its {@code GET
   * /admin/stats}, the last 600 seconds), by epoch second: throttled ones included.
   */
  Map<Long, Long> requestsPerSecond() throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    String body =
        http.send(
                HttpRequest.newBuilder(baseUrl.resolve("/admin/stats")).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    Map<Long, Long> perSecond = new TreeMap<>();
    HttpProtocol.json()
        .readTree(body)
        .path("requestsPerSecond")
        .fields()
        .forEachRemaining(e -> perSecond.put(Long.parseLong(e.getKey()), e.getValue().asLong()));
    return perSecond;
  }

  private static void putFaults(HttpClient http, URI faults, String body) throws Exception {
    HttpResponse<String> answer =
        http.send(
            HttpRequest.newBuilder(faults)
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (answer.statusCode() != 200) {
      throw new IllegalStateException(
          "the sim refused its faults (" + answer.statusCode() + "): " + answer.body());
    }
  }

  /** The address in the sim's start-up line ({@code sim-provider listening on http://...}). */
  static Optional<URI> listeningUrl(String line) {
    Matcher m = LISTENING.matcher(line);
    return m.find() ? Optional.of(URI.create(m.group(1))) : Optional.empty();
  }

  @Override
  public void close() throws Exception {
    stop.close();
  }

  /**
   * The product jar, where the sim lives; running from classes (tests), this JVM's class path. The
   * bench jar's manifest names the product jar, so the sim's classes are loaded from it.
   */
  private static String productClassPath() {
    try {
      Path source =
          Path.of(
              SimProviderServer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (Files.isRegularFile(source) && source.toString().endsWith(".jar")) {
        return source.toString();
      }
    } catch (URISyntaxException | RuntimeException e) {
      // fall through: this JVM's class path has it too
    }
    return System.getProperty("java.class.path");
  }

  private static void drain(Process process, Path log, CompletableFuture<URI> listening) {
    try (BufferedReader in =
            new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        PrintWriter out = new PrintWriter(Files.newBufferedWriter(log), true)) {
      String line;
      while ((line = in.readLine()) != null) {
        out.println(line);
        if (!listening.isDone()) {
          listeningUrl(line).ifPresent(listening::complete);
        }
      }
    } catch (IOException e) {
      listening.completeExceptionally(new UncheckedIOException(e));
    }
  }

  private static IllegalStateException exited(Process process, Path log) {
    return new IllegalStateException(
        "sim-provider exited with " + process.exitValue() + " before listening; see " + log);
  }

  private static void stop(Process process) {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
