package io.fencekeeper.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemTrails;
import io.fencekeeper.run.RunArchive;
import io.fencekeeper.run.RunCoordinator;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A pass that goes on from an earlier one (the run is claimed and marked archived, its rows not all
 * deleted) trusts the archive only as far as it can see it: whole here, it deletes on and does not
 * write it again; written by another node and not in this node's directory, it deletes on; written
 * here and gone, or changed, it stops and keeps every row.
 */
class RunPruningTest {

  static final Instant NIGHT = Instant.parse("2026-11-30T01:00:00Z");

  @Test
  void aPassGoingOnFromAnEarlierOneDeletesOnlyWhatAWholeArchiveHolds() throws Exception {
    NightProvider provider = new NightProvider();
    try (RetentionTestNode node =
        new RetentionTestNode(NIGHT, Map.of("keep-ended-runs-for", "off"), provider, 4)) {
      String here = ended(node, "here");
      String elsewhere = ended(node, "elsewhere");
      String changed = ended(node, "changed");
      String self = node.node.system().address().toString();
      RetentionKeeper.Dependencies deps =
          new RetentionKeeper.Dependencies(
              node.node.system(),
              node.node.coordinator(),
              node.node.endedRuns(),
              node.node.runItems(),
              new ItemTrails(node.node.system(), node.node.runItems().dataSource()),
              null, // no archive is written here: each run is marked archived already
              node.node.retention(),
              node.clock,
              self,
              RetentionListener.NONE);

      // this node wrote it, and it is gone: nothing is deleted
      String scope = RetentionKeeperTest.awaitFiled(node, here);
      long rows = node.rowsOf(here, scope);
      markArchived(node, deps, here, "here__2026-11-29.jsonl.gz", "00".repeat(32), self);
      IOException missing =
          assertThrows(IOException.class, () -> new RunPruning(deps, () -> false).prune(here));
      assertTrue(
          missing.getMessage().endsWith("is missing: its rows are kept"), missing.getMessage());
      assertEquals(rows, node.rowsOf(here, scope));
      assertNull(node.run(here).path("archive").path("prunedAt").textValue());

      // its bytes changed since: nothing is deleted either
      String changedScope = RetentionKeeperTest.awaitFiled(node, changed);
      Files.writeString(node.archiveDir.resolve("changed__2026-11-29.jsonl.gz"), "not the archive");
      markArchived(node, deps, changed, "changed__2026-11-29.jsonl.gz", "11".repeat(32), self);
      long changedRows = node.rowsOf(changed, changedScope);
      IOException damaged =
          assertThrows(IOException.class, () -> new RunPruning(deps, () -> false).prune(changed));
      assertTrue(damaged.getMessage().contains("does not match the SHA-256"), damaged.getMessage());
      assertEquals(changedRows, node.rowsOf(changed, changedScope));

      // another node wrote it to its own directory: the deletes go on, the archive is not rewritten
      String otherScope = RetentionKeeperTest.awaitFiled(node, elsewhere);
      markArchived(
          node, deps, elsewhere, "elsewhere__2026-11-29.jsonl.gz", "22".repeat(32), "pekko://n2:1");
      RunPruning.Outcome outcome = new RunPruning(deps, () -> false).prune(elsewhere);
      assertNull(outcome.skipped(), String.valueOf(outcome.skipped()));
      assertEquals(0, outcome.bytesArchived(), "not written again");
      assertEquals(0, node.rowsOf(elsewhere, otherScope));
      assertTrue(node.run(elsewhere).path("archive").hasNonNull("prunedAt"));
      assertTrue(Files.notExists(node.archiveDir.resolve("elsewhere__2026-11-29.jsonl.gz")));
    }
  }

  /** A run that ended PARTIAL (one account refused for good): one a resume could reopen. */
  private static String ended(RetentionTestNode node, String job) {
    String runId =
        node.createRun(job, "2026-11-29", java.util.List.of("acct-1", "acct-2", "fail-1"));
    assertEquals("PARTIAL", node.awaitEnded(runId).path("state").asText());
    return runId;
  }

  /** What an earlier pass leaves before its first delete: the claim and the archived mark. */
  private static void markArchived(
      RetentionTestNode node,
      RetentionKeeper.Dependencies deps,
      String runId,
      String file,
      String sha,
      String writtenBy) {
    RunCoordinator.PruningReply claim =
        CoordinatorCalls.ask(
            deps.system(),
            deps.coordinator(),
            replyTo -> new RunCoordinator.BeginPruning(runId, replyTo));
    assertTrue(claim instanceof RunCoordinator.PruningAllowed, claim.toString());
    assertTrue(node.node.endedRuns().claimArchiveWriter(runId, "earlier-pass"));
    assertTrue(
        node.node
            .endedRuns()
            .markArchived(
                runId,
                "earlier-pass",
                new RunArchive(file, sha, 100, 3, 6, writtenBy, NIGHT, null, 0)));
    RetentionTestNode.Answer resume =
        node.post(
            "/api/runs/" + RetentionTestNode.seg(runId) + "/resume",
            "{\"deadline\":\"" + node.clock.instant().plus(Duration.ofHours(3)) + "\"}");
    assertEquals(409, resume.status(), resume.body());
    assertEquals("run_archived", resume.tree().path("error").asText(), "claimed: no resume");
  }
}
