package io.fencekeeper.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bench runs end to end and reports what it measured; how fast is never asserted here. */
class BenchCommandSmokeTest {

  @TempDir Path dir;

  /** Runs the bench on H2, small, with {@code args} added; answers its JSON report. */
  private JsonNode bench(String... args) throws Exception {
    Path json = dir.resolve("bench.json");
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(
        List.of(
            "--workers=4",
            "--warmup=10",
            "--databases=h2",
            "--scheduler-threads=2",
            "--work-dir=" + dir,
            "--json=" + json));
    assertEquals(0, BenchMain.commandLine().execute(all.toArray(String[]::new)));
    return new ObjectMapper().readTree(json.toFile());
  }

  @Test
  void benchOnH2ReportsEveryItemDoneWithItsFullAuditTrail() throws Exception {
    JsonNode section = bench("--items=30").get("throughput").get(0);
    JsonNode fencekeeper = section.get("fencekeeper");
    // the warm-up's 10 items are a run of their own: neither counted nor timed here
    assertEquals(30, fencekeeper.get("done").asInt());
    assertEquals("SUCCEEDED", fencekeeper.get("state").asText());
    // the claim, then the effect and the completion in one event: two journal rows per item
    assertEquals(2.0, fencekeeper.get("journalEventsPerItem").asDouble(), 0.0);
    assertEquals(30, section.get("dbScheduler").get(0).get("tasks").asInt());
    // the floor bench fails the command if any of its items is not claimed and completed
    assertEquals(30, section.get("pekkoFloor").get("items").asInt());
    // H2 runs inside this JVM: its CPU is the JVM's, not a server's to be found in /proc
    assertTrue(fencekeeper.get("resources").get("databaseCpuSeconds").isNull());
    assertTrue(section.get("cpuPerItem").get("jvm").get("fencekeeperMicros").asDouble() > 0);
    assertTrue(section.get("cpuPerItem").get("database").get("ratio").isNull());
  }

  @Test
  void throttlingRunsEachThrottlingAgainstASimProcessWithOneEffectPerItem() throws Exception {
    JsonNode section =
        bench(
                "--throttling",
                "--items=30",
                "--throttle-share=0.05",
                "--throttle-per-second=40",
                // the run whose limit drops needs seconds of its own: left out here
                "--throttle-drop-to=0",
                "--throttling-latency-ms=0")
            .get("throttling");
    assertEquals(0, section.get("failures").size(), section.get("failures").toString());
    for (String run : List.of("unthrottled", "throttleShare", "throttlePerSecond")) {
      JsonNode measured = section.get(run);
      assertEquals("SUCCEEDED", measured.get("run").get("state").asText(), run);
      assertTrue(measured.get("calls").asLong() > 0, run);
      assertTrue(measured.get("simRequestsPerSecond").size() > 0, run + ": the sim's seconds");
    }
    assertEquals(0, section.get("unthrottled").get("throttled").asLong());
    assertTrue(section.has("throttleShareRatio") && section.has("throttlePerSecondRatio"));
  }

  @Test
  void theSimsRequestsAroundADropAreToldApartWithTheSecondsUntilTheyHalved() {
    java.util.Map<Long, Long> perSecond = new java.util.TreeMap<>();
    long[] requests = {100, 110, 104, 90, 70, 40, 20, 22};
    for (int i = 0; i < requests.length; i++) {
      perSecond.put(1000L + i, requests[i]);
    }

    String told = ThrottlingBench.describe(perSecond, 1003);

    assertTrue(
        told.contains("before the drop requests/s mean 104.7, least 100, most 110 over 3 s"), told);
    assertTrue(told.contains("after it mean 48.4, least 20, most 90 over 5 s"), told);
    assertTrue(told.contains("fell to half of 104 requests/s 2 s after the drop"), told);
    assertTrue(
        ThrottlingBench.describe(perSecond, -1).startsWith("requests/s mean 69.5, least 20"), told);
  }

  @Test
  void stagingTimesEachIntakePathFromPostToRunningOnPostgres() throws Exception {
    Path json = dir.resolve("staging.json");
    assertEquals(
        0,
        BenchMain.commandLine()
            .execute(
                "--staging=300",
                "--warmup=10",
                "--databases=postgres",
                "--embedded-non-durable",
                "--work-dir=" + dir,
                "--json=" + json));

    JsonNode staging = new ObjectMapper().readTree(json.toFile()).get("staging");
    List<String> paths = new ArrayList<>();
    for (JsonNode path : staging) {
      paths.add(path.get("path").asText());
      assertEquals(300, path.get("rows").asInt());
      assertTrue(path.get("runningSeconds").asDouble() > 0, path.toString());
      assertTrue(path.get("peakRssMiB").asLong() > 0, path.toString());
    }
    assertEquals(List.of("file", "upload", "sql"), paths);
  }

  @Test
  void theNoopProviderThroughThePluginPathRunsBesideTheInProcessOneAndTheRatioIsReported()
      throws Exception {
    JsonNode section =
        bench("--items=20", "--noop-provider=both", "--skip-db-scheduler", "--skip-pekko-floor")
            .get("throughput")
            .get(0);
    JsonNode perSide = section.get("noopItemsPerSecond");
    assertEquals(2, perSide.get("in-process").size(), perSide.toString());
    assertEquals(2, perSide.get("plugin").size(), perSide.toString());
    assertTrue(section.get("pluginToInProcessRatio").asDouble() > 0);
    assertTrue(Files.exists(dir.resolve("h2/noop-plugin/noop-plugin.jar")));
  }

  @Test
  void providerComparisonAppliesOneEffectPerItemOnBothSidesThroughASimProcess() throws Exception {
    JsonNode section =
        bench("--provider-comparison", "--items=40").get("providerComparison").get(0);
    // the sim ran as a process of its own, and its CPU was read from /proc
    assertTrue(section.get("sim").asText().contains("own process"), section.get("sim").asText());
    assertTrue(Files.readString(dir.resolve("sim-provider.log")).contains("listening on"));
    JsonNode fencekeeper = section.get("fencekeeper");
    assertEquals(40, fencekeeper.get("done").asInt());
    assertTrue(fencekeeper.get("resources").get("simCpuSeconds").asDouble() > 0);
    JsonNode checks = section.get("ledgerChecks");
    assertEquals(2, checks.size());
    int toApply = checks.get(0).get("toApply").asInt();
    // the sim's plan has nothing to do for one account in ten: both kinds occur among 40
    assertTrue(toApply > 0 && toApply < 40, "items with an action: " + toApply);
    for (JsonNode check : checks) {
      assertEquals(toApply, check.get("toApply").asInt(), check.toString());
      assertEquals(toApply, check.get("appliedOnce").asInt(), check.toString());
      assertEquals(0, check.get("missing").asInt());
      assertEquals(0, check.get("appliedMoreThanOnce").asInt());
      assertEquals(0, check.get("unexpected").asInt());
      assertTrue(check.get("ok").asBoolean());
    }
    // every item was planned; those with an action were applied, one call each
    assertEquals(40, fencekeeper.get("providerCalls").get("plan").asInt());
    assertEquals(toApply, fencekeeper.get("providerCalls").get("apply").asInt());
    JsonNode dbScheduler = section.get("dbScheduler").get(0);
    assertEquals(40 + toApply, dbScheduler.get("calls").asInt());
    assertEquals(0, dbScheduler.get("failures").asInt());
    assertEquals(0, section.get("failures").size());
    assertTrue(section.get("cpuPerCall").get("sim").get("fencekeeperMicros").asDouble() > 0);
  }
}
