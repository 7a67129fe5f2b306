package io.fencekeeper.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fencekeeper.api.http.ApiJson;
import io.fencekeeper.item.ItemAudit;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemTrails;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.run.RunArchive;
import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunView;
import io.fencekeeper.testing.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * One retention pass, driven directly on a real node (PostgreSQL, the coordinator, workers): the
 * dry run decides what the pass then does, in the same order, and changes nothing; a run an earlier
 * pass left half-way is finished first, whatever the cutoff; a pass cancelled mid-way leaves each
 * run whole or archived, and the next one finishes it; a pass cleans only the temporary files a
 * dead writer left. What an archive holds is RetentionKeeperTest's; how a pass goes on from an
 * archive it cannot see is RunPruningTest's.
 */
class RetentionPassTest {

  static final Instant NIGHT = Instant.parse("2026-11-30T01:00:00Z");

  /**
   * The dry run lists the runs that ended before the cutoff, oldest end first (not by name), and
   * touches nothing: no row, no file, no claim (a claim would make the runs unresumable). The real
   * pass then archives exactly those, in that order; a run that ended after the cutoff is kept
   * whole.
   */
  @Test
  void theDryRunDecidesWhatThePassArchivesOldestFirstAndChangesNothing() throws Exception {
    try (RetentionTestNode node = quietNode()) {
      // ends in the reverse of name order, so oldest-first is not alphabetical by accident
      String zulu = endedRun(node, "zulu");
      String mike = endedRun(node, "mike");
      String alpha = endedRun(node, "alpha");
      String kilo = endedRun(node, "kilo");
      Map<String, Filed> before = awaitLetGo(node, List.of(zulu, mike, alpha, kilo));
      // half-way between two ends (an hour apart): which side an end at the cutoff's own
      // microsecond falls on is aCutoffInsideTheMicrosecondARunEndedInKeepsIt's question
      Instant cutoff = endedAt(node, alpha).plus(Duration.ofMinutes(30));
      Map<String, FileTime> filesBefore = files(node.archiveDir);

      RetentionPass pass = new RetentionPass(deps(node, RetentionListener.NONE), () -> false);
      List<PruneDecision> plan = plan(pass, cutoff);

      assertEquals(List.of(zulu, mike, alpha), runIds(plan), "oldest end first: " + plan);
      plan.forEach(d -> assertEquals(PruneDecision.Action.ARCHIVE, d.action(), d.toString()));
      plan.forEach(d -> assertTrue(d.endedAt().isBefore(cutoff), d.toString()));
      for (Filed run : before.values()) {
        assertEquals(run.rows(), node.rowsOf(run.runId(), run.scopeId()), "a dry run deletes none");
        assertNull(archiveOf(node, run.runId()), run.runId() + " is not marked archived");
      }
      assertEquals(filesBefore, files(node.archiveDir), "a dry run writes no file");
      assertEquals(Set.of(), claims(node), "a dry run claims no run");

      RetentionPass.Summary summary = pass.run(cutoff, "test");

      assertEquals(3, summary.archived(), summary.toString());
      assertEquals(0, summary.finished(), summary.toString());
      assertEquals(0, summary.skipped(), summary.toString());
      assertEquals(
          before.get(zulu).rows() + before.get(mike).rows() + before.get(alpha).rows(),
          summary.rowsDeleted(),
          "every row of the three, once");
      List<String> byArchivedAt =
          Stream.of(zulu, mike, alpha)
              .sorted(Comparator.comparing(runId -> archiveOf(node, runId).archivedAt()))
              .toList();
      assertEquals(runIds(plan), byArchivedAt, "archived in the order the dry run said");
      long bytes = 0;
      for (String runId : byArchivedAt) {
        RunArchive archive = archiveOf(node, runId);
        assertTrue(archive.pruned(), runId + " pruned");
        assertEquals(0, node.rowsOf(runId, before.get(runId).scopeId()), runId + " rows left");
        assertEquals(
            archive.sha256(), ArchiveReader.sha256(node.archiveDir.resolve(archive.file())));
        bytes += archive.bytes();
      }
      assertEquals(bytes, summary.bytesArchived());
      assertEquals(
          Set.of(
              ArchiveFiles.dataName(zulu),
              ArchiveFiles.dataName(mike),
              ArchiveFiles.dataName(alpha)),
          files(node.archiveDir).keySet().stream()
              .filter(name -> name.endsWith(ArchiveFiles.DATA))
              .collect(Collectors.toSet()),
          "no archive of the run that ended after the cutoff");
      assertEquals(before.get(kilo).rows(), node.rowsOf(kilo, before.get(kilo).scopeId()));
      assertNull(archiveOf(node, kilo), "ended after the cutoff: kept");
      assertEquals(Set.of(), claims(node), "every claim the pass took, it ended");
      assertEquals(List.of(), plan(pass, cutoff), "nothing is left to do at the same cutoff");
    }
  }

  /**
   * Ends are filed to the microsecond, so a cutoff inside the microsecond a run ended in keeps it:
   * retention errs on keeping. The cutoff's last 999 ns would round it up to the next microsecond
   * if it were compared as given, and the run would be pruned though it may have ended after it.
   */
  @Test
  void aCutoffInsideTheMicrosecondARunEndedInKeepsIt() throws Exception {
    try (RetentionTestNode node = quietNode()) {
      String early = endedRun(node, "early");
      String late = endedRun(node, "late");
      awaitLetGo(node, List.of(early, late));
      Instant cutoff =
          endedAt(node, late).truncatedTo(ChronoUnit.MICROS).plus(Duration.ofNanos(999));
      RetentionPass pass = new RetentionPass(deps(node, RetentionListener.NONE), () -> false);

      assertEquals(List.of(early), runIds(plan(pass, cutoff)), "only the run that ended before");
      assertEquals(1, pass.run(cutoff, "test").archived());
      assertNull(archiveOf(node, late), "the run that ended within the cutoff's microsecond: kept");
    }
  }

  /**
   * A run an earlier pass claimed and died on before writing its archive is finished before any new
   * run is taken, whatever the cutoff (it ended after the cutoff here, so a cutoff alone would keep
   * it); with retention off it is the only thing a pass does.
   */
  @Test
  void aRunAnEarlierPassLeftHalfWayIsFinishedFirstWhateverTheCutoff() throws Exception {
    try (RetentionTestNode node = quietNode()) {
      String old = endedRun(node, "old");
      String claimed = endedRun(node, "claimed");
      Map<String, Filed> before = awaitLetGo(node, List.of(old, claimed));
      Instant cutoff = endedAt(node, old).plus(Duration.ofMinutes(30));
      // what a pass that died right after its first step leaves: the claim, no archive
      RunCoordinator.PruningReply claim =
          CoordinatorCalls.ask(
              node.node.system(),
              node.node.coordinator(),
              replyTo -> new RunCoordinator.BeginPruning(claimed, replyTo));
      assertTrue(claim instanceof RunCoordinator.PruningAllowed, claim.toString());

      RetentionPass pass = new RetentionPass(deps(node, RetentionListener.NONE), () -> false);
      List<PruneDecision> plan = plan(pass, cutoff);
      assertEquals(List.of(claimed, old), runIds(plan), plan.toString());
      assertEquals(
          List.of(PruneDecision.Action.FINISH, PruneDecision.Action.ARCHIVE), actions(plan));
      assertEquals(
          List.of(claimed), runIds(plan(pass, null)), "retention off: only what was begun");

      RetentionPass.Summary summary = pass.run(cutoff, "test");

      assertEquals(1, summary.finished(), summary.toString());
      assertEquals(1, summary.archived(), summary.toString());
      assertEquals(0, summary.skipped(), summary.toString());
      RunArchive finished = archiveOf(node, claimed);
      RunArchive archived = archiveOf(node, old);
      assertNotNull(finished, "the half-way run got its archive");
      assertTrue(finished.pruned() && archived.pruned(), finished + " / " + archived);
      assertTrue(
          finished.prunedAt().isBefore(archived.archivedAt()),
          "finished before the new run was begun: " + finished + " / " + archived);
      assertEquals(
          finished.sha256(), ArchiveReader.sha256(node.archiveDir.resolve(finished.file())));
      assertEquals(0, node.rowsOf(claimed, before.get(claimed).scopeId()));
      assertEquals(0, node.rowsOf(old, before.get(old).scopeId()));
      assertEquals(Set.of(), claims(node), "the earlier pass's claim ended with it");
    }
  }

  /**
   * A pass cancelled (its keeper stopped) just after the first run's archive is written stops
   * there: that run is archived whole and still claimed, not a row of it deleted; the others are
   * untouched. The next pass, even with retention off, finishes it without writing it again and
   * takes nothing new.
   */
  @Test
  void aCancelledPassLeavesEachRunWholeOrArchivedAndTheNextOneFinishesIt() throws Exception {
    try (RetentionTestNode node = quietNode()) {
      String first = endedRun(node, "first");
      String second = endedRun(node, "second");
      String third = endedRun(node, "third");
      Map<String, Filed> before = awaitLetGo(node, List.of(first, second, third));
      Instant cutoff = node.clock.instant();
      AtomicBoolean cancelled = new AtomicBoolean();

      RetentionPass.Summary stopped =
          new RetentionPass(deps(node, new CancelOnFirstArchive(cancelled)), cancelled::get)
              .run(cutoff, "test");

      assertTrue(cancelled.get(), "an archive was written");
      assertEquals(0, stopped.archived() + stopped.finished(), "no run completed: " + stopped);
      assertEquals(0, stopped.rowsDeleted(), stopped.toString());
      RunArchive archive = archiveOf(node, first);
      assertNotNull(archive, "the run it stopped in is marked archived");
      assertFalse(archive.pruned(), archive.toString());
      Path file = node.archiveDir.resolve(archive.file());
      assertEquals(archive.sha256(), ArchiveReader.sha256(file), "its archive is whole");
      assertEquals(before.get(first).rows(), node.rowsOf(first, before.get(first).scopeId()));
      assertEquals(Set.of(first), claims(node), "claimed: the next pass finishes it");
      for (String untouched : List.of(second, third)) {
        assertNull(archiveOf(node, untouched), untouched);
        assertEquals(
            before.get(untouched).rows(), node.rowsOf(untouched, before.get(untouched).scopeId()));
        assertFalse(Files.exists(node.archiveDir.resolve(ArchiveFiles.dataName(untouched))));
      }

      RetentionPass next = new RetentionPass(deps(node, RetentionListener.NONE), () -> false);
      List<PruneDecision> plan = plan(next, null);
      assertEquals(List.of(first), runIds(plan), plan.toString());
      assertEquals(List.of(PruneDecision.Action.FINISH), actions(plan));
      RetentionPass.Summary finished = next.run(null, "retention off");

      assertEquals(1, finished.finished(), finished.toString());
      assertEquals(0, finished.bytesArchived(), "the archive is not written again");
      assertEquals(before.get(first).rows(), finished.rowsDeleted(), "every row, once");
      assertTrue(archiveOf(node, first).pruned());
      assertEquals(archive.sha256(), ArchiveReader.sha256(file), "the same archive");
      assertEquals(0, node.rowsOf(first, before.get(first).scopeId()));
      for (String untouched : List.of(second, third)) {
        assertNull(archiveOf(node, untouched), "retention off takes nothing new: " + untouched);
        assertEquals(
            before.get(untouched).rows(), node.rowsOf(untouched, before.get(untouched).scopeId()));
      }
      assertEquals(Set.of(), claims(node));
    }
  }

  /**
   * A pass removes the temporary archive files a writer that died left (older than an hour), and
   * nothing else: not a fresh one a live writer may still be filling, not a published archive
   * however old. The dry run removes none.
   */
  @Test
  void aPassCleansOnlyTheTemporaryFilesADeadWriterLeft() throws Exception {
    try (RetentionTestNode node = quietNode()) {
      Path dir = node.archiveDir;
      Path stale = ArchiveFiles.temporary(dir, ArchiveFiles.dataName("nightly/2026-10-01"));
      Files.setLastModifiedTime(stale, ago(Duration.ofHours(2)));
      Path fresh = ArchiveFiles.temporary(dir, ArchiveFiles.dataName("nightly/2026-10-02"));
      ObjectNode run = node.json.createObjectNode();
      run.put("runId", "nightly/2026-09-01").put("state", "SUCCEEDED");
      run.put("endedAt", "2026-09-02T05:00:00Z");
      ArchiveManifest published =
          ArchiveFixtures.write(dir, "nightly/2026-09-01", run, Map.of(), Map.of());
      Path data = dir.resolve(published.file());
      Path manifest = dir.resolve(ArchiveFiles.manifestName("nightly/2026-09-01"));
      Files.setLastModifiedTime(data, ago(Duration.ofDays(60)));
      Files.setLastModifiedTime(manifest, ago(Duration.ofDays(60)));
      Map<String, FileTime> filesBefore = files(dir);

      RetentionPass pass = new RetentionPass(deps(node, RetentionListener.NONE), () -> false);
      assertEquals(List.of(), plan(pass, null), "nothing to finish");
      assertEquals(filesBefore, files(dir), "the dry run removes nothing");

      RetentionPass.Summary summary = pass.run(null, "retention off");

      assertEquals(new RetentionPass.Summary(0, 0, 0, 0, 0), summary);
      assertFalse(Files.exists(stale), "a dead writer's temporary file is removed");
      assertTrue(Files.exists(fresh), "a live writer's is kept");
      assertTrue(Files.exists(data) && Files.exists(manifest), "a published archive is kept");
      new ArchiveReader(dir, node.json).verify(published);
      assertEquals(filesBefore.size() - 1, files(dir).size(), files(dir).toString());
    }
  }

  /**
   * A node whose own retention keeper never runs a pass during a test (its first check is an hour
   * away; retention off): every pass here is the test's, and no claim is finished behind its back.
   */
  private static RetentionTestNode quietNode() throws Exception {
    return new RetentionTestNode(
        NIGHT,
        Map.of("keep-ended-runs-for", "off", "check-interval", "1h"),
        new NightProvider(),
        2);
  }

  /** What the pass needs of a node, as the keeper's singleton gets it. */
  private static RetentionKeeper.Dependencies deps(
      RetentionTestNode node, RetentionListener listener) {
    return new RetentionKeeper.Dependencies(
        node.node.system(),
        node.node.coordinator(),
        node.node.endedRuns(),
        node.node.runItems(),
        new ItemTrails(node.node.system(), node.node.runItems().dataSource()),
        new PlainViews(ApiJson.mapper()),
        node.node.retention(),
        node.clock,
        node.node.system().address().toString(),
        listener);
  }

  /**
   * The run, its scope and its rows, as filed before a pass: what "whole" means for it afterwards.
   */
  record Filed(String runId, String scopeId, long rows) {}

  /**
   * The API's shapes live in the API package; a pass only needs some shape to write, and what an
   * archive holds of the API is RetentionKeeperTest's to check.
   */
  record PlainViews(ObjectMapper mapper) implements ArchiveViews {
    @Override
    public ObjectNode run(RunView run) {
      ObjectNode node = mapper.createObjectNode();
      node.put("runId", run.runId()).put("state", run.state().name());
      node.put("endedAt", String.valueOf(run.endedAt()));
      return node;
    }

    @Override
    public Map<String, Object> reportLine(RunView run, ItemId itemId, ItemView item) {
      Map<String, Object> line = new LinkedHashMap<>();
      line.put("itemId", itemId.value());
      line.put("status", String.valueOf(item.status()));
      return line;
    }

    @Override
    public Map<String, Object> auditEvent(ItemAudit.Entry entry) {
      Map<String, Object> event = new LinkedHashMap<>();
      event.put("sequenceNr", entry.sequenceNr());
      event.put("type", entry.type());
      return event;
    }
  }

  /** The keeper stopping right after a pass wrote its first archive, before any delete. */
  record CancelOnFirstArchive(AtomicBoolean cancelled) implements RetentionListener {
    @Override
    public void runArchived(long bytes) {
      cancelled.set(true);
    }

    @Override
    public void rowsDeleted(long rows) {}
  }

  /**
   * The night of {@code job} over two accounts, run to its end; then an hour passes, so each run
   * ends at an hour of its own and the order of ends is the order of calls.
   */
  private static String endedRun(RetentionTestNode node, String job) {
    String runId = node.createRun(job, "2026-11-29", RetentionTestNode.accounts(job, 2));
    assertEquals("SUCCEEDED", node.awaitEnded(runId).path("state").asText(), runId);
    node.clock.jump(Duration.ofHours(1));
    return runId;
  }

  /**
   * Waits until the runs are filed and the coordinator has let them go (until then a pass skips a
   * run as "still filing it"); returns each with its rows.
   */
  private static Map<String, Filed> awaitLetGo(RetentionTestNode node, List<String> runIds)
      throws Exception {
    Map<String, String> scopes = new TreeMap<>();
    for (String runId : runIds) {
      scopes.put(runId, RetentionKeeperTest.awaitFiled(node, runId));
    }
    Await.until(
        Duration.ofSeconds(30),
        runIds + " let go by the coordinator",
        () -> held(node).stream().noneMatch(runIds::contains));
    Map<String, Filed> filed = new TreeMap<>();
    for (var run : scopes.entrySet()) {
      long rows = node.rowsOf(run.getKey(), run.getValue());
      assertTrue(rows > 0, run.getKey() + " has rows to prune");
      filed.put(run.getKey(), new Filed(run.getKey(), run.getValue(), rows));
    }
    return filed;
  }

  private static List<PruneDecision> plan(RetentionPass pass, Instant cutoff) {
    List<PruneDecision> decisions = new ArrayList<>();
    pass.plan(cutoff, decisions::add);
    return decisions;
  }

  private static List<String> runIds(List<PruneDecision> decisions) {
    return decisions.stream().map(PruneDecision::runId).toList();
  }

  private static List<PruneDecision.Action> actions(List<PruneDecision> decisions) {
    return decisions.stream().map(PruneDecision::action).toList();
  }

  private static Instant endedAt(RetentionTestNode node, String runId) {
    return node.node.endedRuns().find(runId).orElseThrow().record().endedAt();
  }

  private static RunArchive archiveOf(RetentionTestNode node, String runId) {
    return node.node.endedRuns().find(runId).orElseThrow().archive();
  }

  /** The runs a pass began and has not ended: the coordinator's claims. */
  private static Set<String> claims(RetentionTestNode node) {
    RunCoordinator.PruningClaims claims =
        CoordinatorCalls.ask(
            node.node.system(), node.node.coordinator(), RunCoordinator.GetPruning::new);
    return new TreeSet<>(claims.runIds());
  }

  private static Set<String> held(RetentionTestNode node) {
    RunCoordinator.RunList runs =
        CoordinatorCalls.ask(
            node.node.system(), node.node.coordinator(), RunCoordinator.ListRuns::new);
    return runs.runs().stream().map(RunView::runId).collect(Collectors.toSet());
  }

  /** Every file in the archive directory (hidden temporaries too), with when it last changed. */
  private static Map<String, FileTime> files(Path dir) throws Exception {
    Map<String, FileTime> files = new TreeMap<>();
    try (Stream<Path> list = Files.list(dir)) {
      for (Path file : (Iterable<Path>) list::iterator) {
        files.put(file.getFileName().toString(), Files.getLastModifiedTime(file));
      }
    }
    return files;
  }

  private static FileTime ago(Duration age) {
    return FileTime.from(Instant.now().minus(age));
  }
}
