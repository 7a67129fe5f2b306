package io.fencekeeper.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.provider.sim.SimProviderServer;
import io.fencekeeper.testing.ChildJvm;
import io.fencekeeper.testing.ProcessTest;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a deployment gets without anyone thinking about it (issue 12, finding 10): no working secret
 * in the compose file, an image that does not run as root, a node that will not put the cluster
 * port on a network in plain TCP by accident, and a simulated provider whose fault knobs answer
 * only on its own machine.
 */
@ProcessTest
class DeploymentDefaultsTest {

  static final Path ROOT = Path.of("").toAbsolutePath();

  @TempDir Path dir;

  @Test
  void composeTakesItsSecretsFromADotEnvThatIsNeverCommitted() throws IOException {
    String compose = Files.readString(ROOT.resolve("docker-compose.yml"));
    assertTrue(compose.contains("FENCEKEEPER_API_TOKEN: ${FENCEKEEPER_API_TOKEN:?"), compose);
    assertTrue(compose.contains("FENCEKEEPER_DB_PASSWORD: ${FENCEKEEPER_DB_PASSWORD:?"));
    assertTrue(compose.contains("POSTGRES_PASSWORD: ${FENCEKEEPER_DB_PASSWORD:?"));
    assertFalse(compose.contains("change-me"), "no placeholder token that would work");
    assertTrue(Files.readAllLines(ROOT.resolve(".gitignore")).contains(".env"));
    for (String line : Files.readAllLines(ROOT.resolve(".env.example"))) {
      if (!line.startsWith("#") && line.contains("=")) {
        assertTrue(line.endsWith("="), "the example ships no value: " + line);
      }
    }
    // the private-network exception is stated where it is made, with where to read about it
    int insecure = compose.indexOf("FENCEKEEPER_CLUSTER_INSECURE: \"true\"");
    assertTrue(insecure > 0);
    assertTrue(
        compose.substring(Math.max(0, insecure - 400), insecure).contains("docs/cluster.md"));
  }

  @Test
  void theImageRunsAsAnUnprivilegedUser() throws IOException {
    List<String> users = new ArrayList<>();
    for (String line : Files.readAllLines(ROOT.resolve("Dockerfile"))) {
      if (line.startsWith("USER ")) {
        users.add(line.substring(5).trim());
      }
    }
    assertFalse(users.isEmpty(), "the Dockerfile sets a USER");
    String last = users.get(users.size() - 1);
    assertFalse(last.equals("root") || last.equals("0"), last);
  }

  /**
   * The image's nodes start from the AOT cache its build made: the training step writes the file
   * that JAVA_TOOL_OPTIONS names, on a JDK that knows the option (a JDK before 25 refuses to start
   * with {@code -XX:AOTCache}). .ci/run makes the cache with the same script on this machine.
   */
  @Test
  void theImageStartsItsNodesFromTheAotCacheItsBuildMade() throws IOException {
    List<String> lines = Files.readAllLines(ROOT.resolve("Dockerfile"));
    Matcher from =
        Pattern.compile("^FROM eclipse-temurin:(\\d+)-jre$")
            .matcher(
                lines.stream().filter(l -> l.startsWith("FROM ")).reduce((a, b) -> b).orElse(""));
    assertTrue(from.find(), "the image's JDK: " + lines);
    assertTrue(Integer.parseInt(from.group(1)) >= 25, "-XX:AOTCache needs JDK 25: " + from.group());
    Matcher training =
        Pattern.compile("^RUN scripts/aot-cache\\.sh (\\S+) /opt/fencekeeper/fencekeeper\\.jar$")
            .matcher(
                lines.stream().filter(l -> l.contains("aot-cache.sh")).reduce("", (a, b) -> b));
    assertTrue(training.find(), "the build trains the cache on the image's own jar");
    String options =
        lines.stream().filter(l -> l.startsWith("ENV JAVA_TOOL_OPTIONS=")).reduce("", (a, b) -> b);
    assertTrue(
        options.contains("-XX:AOTCache=" + training.group(1) + " ")
            || options.endsWith("-XX:AOTCache=" + training.group(1) + "\""),
        options);
    assertTrue(
        lines.indexOf(options) > lines.indexOf(training.group()),
        "the options take effect after the training, which must not read a cache it is writing");
    assertTrue(Files.isExecutable(ROOT.resolve("scripts/aot-cache.sh")));
  }

  @Test
  void serveRefusesToPutTheClusterPortOnANetworkInPlainTcp() throws Exception {
    List<String> command = new ArrayList<>(ChildJvm.command());
    command.addAll(List.of("io.fencekeeper.cli.Main", "serve"));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.redirectOutput(dir.resolve("serve.log").toFile());
    builder.environment().put("FENCEKEEPER_DATA_DIR", dir.resolve("data").toString());
    builder.environment().put("FENCEKEEPER_REMOTE_HOST", "192.0.2.77");
    builder.environment().remove("FENCEKEEPER_CLUSTER_INSECURE");
    Process serve = builder.start();
    assertTrue(serve.waitFor(60, TimeUnit.SECONDS), "serve exits instead of starting");
    String log = Files.readString(dir.resolve("serve.log"));
    assertEquals(78, serve.exitValue(), log);
    assertTrue(log.contains("FENCEKEEPER_CLUSTER_INSECURE"), log);
  }

  @Test
  void theSimulatedProvidersAdminAnswersOnlyOnItsOwnMachine() throws Exception {
    Optional<InetAddress> external = nonLoopbackAddress();
    assumeTrue(external.isPresent(), "this machine has no non-loopback IPv4 address");
    try (SimProviderServer sim = SimProviderServer.start("0.0.0.0", 0, SimFaults.NONE, 1L, 4)) {
      HttpClient http = HttpClient.newHttpClient();
      String remote = "http://" + external.get().getHostAddress() + ":" + sim.port();
      HttpResponse<String> refused =
          http.send(
              HttpRequest.newBuilder(URI.create(remote + "/admin/reset"))
                  .timeout(Duration.ofSeconds(10))
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(403, refused.statusCode(), refused.body());
      assertTrue(refused.body().contains("\"error\":\"forbidden\""), refused.body());
      HttpResponse<String> local =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + sim.port() + "/admin/reset"))
                  .timeout(Duration.ofSeconds(10))
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(204, local.statusCode());
    }
  }

  static Optional<InetAddress> nonLoopbackAddress() throws IOException {
    for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (nic.isUp() && !nic.isLoopback()) {
        for (InetAddress address : Collections.list(nic.getInetAddresses())) {
          if (address instanceof Inet4Address) {
            return Optional.of(address);
          }
        }
      }
    }
    return Optional.empty();
  }
}
