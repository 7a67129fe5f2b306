package io.fencekeeper.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.node.FencekeeperNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fencekeeper.retention} as an operator writes it: the defaults, {@code off}, and every
 * value that cannot work refused with a message that names the key (a retention of 0 or less, a
 * duration that is not one, an archive directory that cannot be made or written).
 */
class RetentionSettingsTest {

  @TempDir Path dir;

  private RetentionSettings settings(Map<String, Object> retention) {
    Map<String, Object> overrides = new HashMap<>();
    overrides.put("fencekeeper.data-dir", dir.toString());
    retention.forEach((k, v) -> overrides.put("fencekeeper.retention." + k, v));
    return RetentionSettings.from(FencekeeperNode.config(overrides));
  }

  @Test
  void theDefaultsKeepNinetyDaysAndArchiveUnderTheDataDirectory() {
    RetentionSettings defaults = settings(Map.of());
    assertEquals(Optional.of(Duration.ofDays(90)), defaults.keepEndedRunsFor());
    assertEquals(dir.resolve("archive").toAbsolutePath().normalize(), defaults.archiveDir());
    assertEquals(500, defaults.batchSize());
    Instant now = Instant.parse("2027-03-01T12:00:00Z");
    assertEquals(Optional.of(now.minus(Duration.ofDays(90))), defaults.cutoff(now));
  }

  @Test
  void offKeepsEveryRun() {
    RetentionSettings off = settings(Map.of("keep-ended-runs-for", "OFF"));
    assertEquals(Optional.empty(), off.keepEndedRunsFor());
    assertEquals(Optional.empty(), off.cutoff(Instant.now()));
    assertEquals(
        Optional.of(Duration.ofHours(36)),
        settings(Map.of("keep-ended-runs-for", "36h")).keepEndedRunsFor());
  }

  @Test
  void aRetentionOfZeroOrLessOrNoDurationIsRefusedNamingTheKey() {
    for (String bad : new String[] {"0", "0d", "-5d", "-1s"}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> settings(Map.of("keep-ended-runs-for", bad)),
              bad);
      assertTrue(
          e.getMessage()
              .startsWith("fencekeeper.retention.keep-ended-runs-for must be longer than 0"),
          e.getMessage());
    }
    IllegalArgumentException words =
        assertThrows(
            IllegalArgumentException.class,
            () -> settings(Map.of("keep-ended-runs-for", "three months")));
    assertEquals(
        "fencekeeper.retention.keep-ended-runs-for must be a duration such as 90d or 12h, or off;"
            + " got 'three months'",
        words.getMessage());
    assertThrows(IllegalArgumentException.class, () -> settings(Map.of("batch-size", 0)));
    assertThrows(IllegalArgumentException.class, () -> settings(Map.of("check-interval", "0s")));
  }

  @Test
  void anArchiveDirectoryIsCreatedAndProvenWritable() {
    Path nested = dir.resolve("a/b/archive");
    RetentionSettings ok = settings(Map.of("archive-dir", nested.toString())).checkArchiveDir();
    assertTrue(Files.isDirectory(ok.archiveDir()));
    try (var left = Files.list(nested)) {
      assertEquals(0, left.count(), "the write probe leaves nothing behind");
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * Not writable, as root sees it too (permissions do not stop root): a path under a regular file
   * cannot be created, and a regular file is no directory.
   */
  @Test
  void anArchiveDirectoryThatCannotBeWrittenIsRefusedAtStart() throws Exception {
    Path file = Files.writeString(dir.resolve("not-a-directory"), "x");
    IllegalArgumentException under =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                settings(Map.of("archive-dir", file.resolve("archive").toString()))
                    .checkArchiveDir());
    assertTrue(
        under.getMessage().startsWith("fencekeeper.retention.archive-dir ")
            && under.getMessage().contains(" cannot be created: "),
        under.getMessage());
    IllegalArgumentException itself =
        assertThrows(
            IllegalArgumentException.class,
            () -> settings(Map.of("archive-dir", file.toString())).checkArchiveDir());
    assertTrue(
        itself.getMessage().contains("fencekeeper.retention.archive-dir"), itself.getMessage());
  }
}
