package io.fencekeeper.api.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.api.ApiTestNode;
import io.fencekeeper.api.HttpApi;
import io.fencekeeper.api.http.ApiSettings;
import io.fencekeeper.node.FencekeeperNode;
import io.fencekeeper.testing.ManualClock;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.testing.TestNodes;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.http.javadsl.model.Uri;
import org.junit.jupiter.api.Test;

/**
 * Pekko Management on its own port: members, readiness with the journal and API checks, liveness.
 */
class ManagementTest {

  @Test
  void readyAliveAndMembersAnswerAndMutationsAreRefused() throws Exception {
    Path dir = Files.createTempDirectory("fk-mgmt");
    Map<String, Object> overrides = TestNodes.overrides(TestDatabases.h2File(dir), dir);
    overrides.put("pekko.management.http.port", 0);
    // the lines conf/fencekeeper.conf needs (see the issue report)
    overrides.put("pekko.management.health-checks.readiness-path", "health/ready");
    overrides.put("pekko.management.health-checks.liveness-path", "health/alive");
    overrides.put(
        "pekko.management.health-checks.readiness-checks.fencekeeper-journal",
        "io.fencekeeper.api.ops.JournalReadinessCheck");
    try (FencekeeperNode node =
        FencekeeperNode.builder(FencekeeperNode.config(overrides))
            .clock(ManualClock.at("2026-11-29T23:00:00Z"))
            .workers(0)
            .start()
            .awaitUp(Duration.ofSeconds(60))) {
      Uri uri =
          ManagementStarter.start(node.system(), false)
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      HttpClient http = HttpClient.newHttpClient();
      String base = uri.toString().replaceAll("/$", "");
      // Up and the journal answering, but the API not yet bound (serve binds it last): not ready by
      // conf/fencekeeper.conf's fencekeeper-api check, so a balancer, or a client that waited for
      // readiness, is never sent to a closed port (a process test was, under load)
      var classic = node.system().classicSystem();
      ApiTestNode.await(
          () -> new JournalReadinessCheck(classic).get().toCompletableFuture().join(),
          Boolean::booleanValue,
          Duration.ofSeconds(30),
          "the journal check");
      assertFalse(new ApiReadinessCheck(classic).get().toCompletableFuture().join());
      assertEquals(500, get(http, base + "/health/ready").statusCode());
      HttpApi.start(node, ApiSettings.from(node.settings()).withPort(0))
          .toCompletableFuture()
          .get(30, TimeUnit.SECONDS);
      HttpResponse<String> ready =
          ApiTestNode.await(
              () -> get(http, base + "/health/ready"),
              r -> r.statusCode() == 200,
              Duration.ofSeconds(30),
              "readiness");
      assertEquals(200, ready.statusCode());
      assertEquals(200, get(http, base + "/health/alive").statusCode());
      HttpResponse<String> members = get(http, base + "/cluster/members");
      assertEquals(200, members.statusCode());
      assertTrue(members.body().contains("\"Up\""), members.body());
      HttpResponse<String> leave =
          http.send(
              HttpRequest.newBuilder(
                      URI.create(base + "/cluster/members/" + node.system().address()))
                  .DELETE()
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertTrue(leave.statusCode() >= 400, "management must be read-only: " + leave.statusCode());
    }
  }

  private static HttpResponse<String> get(HttpClient http, String url) {
    try {
      return http.send(
          HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
