package io.fencekeeper.node;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The partition inequality, as the profiles in conf/ set it and as an operator could break it:
 * failure detection + resolver decision (+ the resolver's lease with lease-majority) + removal
 * margin must fit inside the item lease.
 */
class PartitionTimingsTest {

  private static final String SEEDS = "pekko://fencekeeper@127.0.0.1:25521";

  @Test
  void theClusterProfileFitsItsLease() {
    PartitionTimings timings = timings("conf/cluster.conf", Map.of()).orElseThrow();
    assertEquals("keep-majority", timings.strategy());
    // detection 1 + 5, decision 10, removal margin 10 (stable-after): 26 s < 30 s
    assertEquals(Duration.ofSeconds(26), timings.takeover());
    assertEquals(Duration.ofSeconds(30), timings.itemLease());
    assertEquals(List.of(), timings.violations());
  }

  @Test
  void theTestTimingsFitTheTestLease() {
    Map<String, Object> test = new HashMap<>();
    test.put("fencekeeper.lease", "5s");
    test.put("pekko.cluster.failure-detector.heartbeat-interval", "300ms");
    test.put("pekko.cluster.failure-detector.acceptable-heartbeat-pause", "1200ms");
    test.put("pekko.cluster.split-brain-resolver.stable-after", "1500ms");
    PartitionTimings timings = timings("conf/cluster.conf", test).orElseThrow();
    assertEquals(Duration.ofMillis(4500), timings.takeover());
    assertEquals(List.of(), timings.violations());
  }

  @Test
  void aLeaseShorterThanTheTakeoverIsRefusedNamingEverySetting() {
    Config config = config("conf/cluster.conf", Map.of("fencekeeper.lease", "20s"));
    IllegalArgumentException refused =
        assertThrows(IllegalArgumentException.class, () -> PartitionTimings.check(config));
    String message = refused.getMessage();
    for (String part :
        List.of(
            "fencekeeper.lease (20 s, FENCEKEEPER_LEASE) must be longer than",
            "(26 s = ",
            "heartbeat-interval + acceptable-heartbeat-pause 6 s",
            "split-brain-resolver.stable-after 10 s",
            "removal margin 10 s (pekko.cluster.down-removal-margin",
            "docs/cluster.md")) {
      assertTrue(message.contains(part), part + " in: " + message);
    }
  }

  @Test
  void anExplicitRemovalMarginCountsInsteadOfStableAfter() {
    Map<String, Object> overrides = Map.of("pekko.cluster.down-removal-margin", "15s");
    PartitionTimings timings = timings("conf/cluster.conf", overrides).orElseThrow();
    assertEquals(Duration.ofSeconds(15), timings.removalMargin());
    assertEquals(Duration.ofSeconds(31), timings.takeover());
    assertEquals(1, timings.violations().size(), timings.violations().toString());
  }

  @Test
  void aSingleNodeWithoutSeedsStartsWhateverItsLease() {
    // the quick start: the bundled profile, no seeds, no bootstrap; a cluster of one cannot split
    Config config = NodeConfig.load(Optional.empty(), Map.of("fencekeeper.lease", "1s"));
    assertEquals(Optional.empty(), PartitionTimings.of(config));
    assertDoesNotThrow(() -> PartitionTimings.check(config));
  }

  @Test
  void theOperatorMayAcceptUnsafeTimingsOnlyByName() {
    Map<String, Object> overrides = new HashMap<>();
    overrides.put("fencekeeper.lease", "5s");
    overrides.put("fencekeeper.unsafe-partition-timings", true);
    Config config = config("conf/cluster.conf", overrides);
    assertEquals(1, PartitionTimings.of(config).orElseThrow().violations().size());
    assertDoesNotThrow(() -> PartitionTimings.check(config));
  }

  @Test
  void leaseMajorityAddsTheResolversLeaseToTheDecision() {
    Map<String, Object> overrides = new HashMap<>();
    overrides.put("fencekeeper.seed-nodes", "");
    overrides.put("fencekeeper.cluster-bootstrap", true);
    overrides.put("pekko.cluster.split-brain-resolver.active-strategy", "lease-majority");
    overrides.put(
        "pekko.cluster.split-brain-resolver.lease-majority.lease-implementation",
        "pekko.coordination.lease");
    // Pekko's defaults for a lease: operations 5 s, heartbeat-timeout 120 s; minority head start 2
    PartitionTimings timings = timings("conf/cluster.conf", overrides).orElseThrow();
    assertEquals(Duration.ofSeconds(7), timings.leaseAcquisition());
    assertEquals(Duration.ofSeconds(6 + 10 + 7), timings.decision());
    assertEquals(Duration.ofSeconds(6 + 10 + 7 + 10), timings.takeover());
    assertTrue(
        timings.violations().get(0).contains("lease-operation-timeout 7 s"),
        timings.violations().toString());

    overrides.put("pekko.coordination.lease.heartbeat-timeout", "20s");
    overrides.put("fencekeeper.lease", "40s");
    List<String> violations = timings("conf/cluster.conf", overrides).orElseThrow().violations();
    assertEquals(1, violations.size(), violations.toString());
    assertTrue(violations.get(0).contains("the resolver's lease"), violations.get(0));
    assertTrue(violations.get(0).contains("20 s) must outlive the decision (23 s)"));
  }

  @Test
  void bootstrapAndSeedNodesExcludeEachOther() {
    Config config = config("conf/cluster.conf", Map.of("fencekeeper.cluster-bootstrap", true));
    IllegalArgumentException refused =
        assertThrows(IllegalArgumentException.class, () -> NodeSettings.from(config));
    assertTrue(refused.getMessage().contains("FENCEKEEPER_SEED_NODES must be empty"));
  }

  private static Optional<PartitionTimings> timings(String file, Map<String, Object> overrides) {
    return PartitionTimings.of(config(file, overrides));
  }

  static Config config(String file, Map<String, Object> overrides) {
    Map<String, Object> all = new HashMap<>();
    all.put("FENCEKEEPER_DB_URL", "jdbc:postgresql://127.0.0.1:1/unused");
    all.put("fencekeeper.seed-nodes", SEEDS);
    all.putAll(overrides);
    return NodeConfig.load(Optional.of(Path.of(file)), all);
  }
}
