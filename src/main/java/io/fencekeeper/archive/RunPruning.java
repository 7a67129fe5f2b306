package io.fencekeeper.archive;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fencekeeper.item.ItemAudit;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemTrails;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.EndedRuns;
import io.fencekeeper.run.RunArchive;
import io.fencekeeper.run.RunCoordinator;
import io.fencekeeper.run.RunItemStore;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.ScopePurge;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Prunes one ended run, in the order that makes a crash at any point harmless (docs/design.md,
 * "Retention and the archive"):
 *
 * <ol>
 *   <li>the coordinator allows it (journaled: the run can no longer be resumed), or refuses because
 *       it holds the run again;
 *   <li>unless an earlier pass already did, the archive is written from the journal and the run's
 *       record, forced to disk and renamed, then its manifest, and only then the run's record is
 *       marked archived, by the one pass that claimed the writing last;
 *   <li>deletes in batches, each one transaction that also counts its rows on the record: a pass
 *       that died goes on from the first item still staged;
 *   <li>the record is marked pruned (the tombstone), and the coordinator's claim ends.
 * </ol>
 *
 * Blocking: runs on the keeper's own thread, never on an actor's.
 */
final class RunPruning {

  private static final Logger log = LoggerFactory.getLogger(RunPruning.class);

  /** What pruning one run did: {@code skipped} says why it did nothing (null when it did). */
  record Outcome(String runId, long bytesArchived, long rowsDeleted, String skipped) {
    static Outcome skipped(String runId, String reason) {
      return new Outcome(runId, 0, 0, reason);
    }
  }

  /** A page of the scope, and the items whose journals one query reads. */
  static final int PAGE = ItemTrails.MAX_ITEMS;

  private final RetentionKeeper.Dependencies deps;
  private final ScopePurge purge;
  private final BooleanSupplier cancelled;

  RunPruning(RetentionKeeper.Dependencies deps, BooleanSupplier cancelled) {
    this.deps = deps;
    this.purge = ScopePurge.on(deps.store());
    this.cancelled = cancelled;
  }

  /** Archives and deletes the run, or finishes what an earlier pass began. */
  Outcome prune(String runId) throws IOException {
    Optional<EndedRuns.Filed> found = deps.ended().find(runId);
    if (found.isEmpty()) {
      return Outcome.skipped(runId, "no ended run " + runId);
    }
    EndedRuns.Filed filed = found.get();
    if (filed.archive() != null && filed.archive().pruned()) {
      endClaim(runId); // a pass died after its last delete: only the claim is left
      return Outcome.skipped(runId, "already pruned");
    }
    RunCoordinator.PruningReply allowed =
        CoordinatorCalls.ask(
            deps.system(),
            deps.coordinator(),
            replyTo -> new RunCoordinator.BeginPruning(runId, replyTo));
    if (allowed instanceof RunCoordinator.PruningRefused refused) {
      return Outcome.skipped(runId, refused.reason());
    }
    long bytes = 0;
    RunArchive archive = filed.archive();
    if (archive == null) {
      Optional<RunArchive> written = writeArchive(filed);
      if (written.isEmpty()) {
        return Outcome.skipped(runId, "another retention pass is writing its archive");
      }
      archive = written.get();
      bytes = archive.bytes();
      deps.listener().runArchived(bytes);
      log.info(
          "retention: archived run {} to {} ({} items, {} events, {} bytes, sha256 {})",
          runId,
          archive.file(),
          archive.items(),
          archive.events(),
          archive.bytes(),
          archive.sha256());
    } else {
      requireArchiveIntact(runId, archive);
    }
    long rows = deleteRows(filed);
    if (cancelled.getAsBoolean()) {
      return new Outcome(runId, bytes, rows, "interrupted: the next pass goes on");
    }
    purge.deleteStaging(filed.record());
    deps.ended().markPruned(runId, deps.clock().instant());
    endClaim(runId);
    log.info("retention: run {} pruned: {} rows deleted by this pass", runId, rows);
    return new Outcome(runId, bytes, rows, null);
  }

  /**
   * Writes the archive as the pass that claimed the writing last, and marks the run archived. Empty
   * when another pass claimed it meanwhile: then this one's file is not published, or (if it was)
   * equals the other's, both written before anything was deleted.
   */
  private Optional<RunArchive> writeArchive(EndedRuns.Filed filed) throws IOException {
    String runId = filed.record().runId();
    String writer = UUID.randomUUID().toString();
    if (!deps.ended().claimArchiveWriter(runId, writer)) {
      return Optional.empty(); // archived since it was read
    }
    RunView view = filed.view();
    ObjectNode runJson = deps.views().run(view);
    Path dir = deps.settings().archiveDir();
    try (ArchiveWriter out = ArchiveWriter.start(dir, runId, deps.views().mapper(), runJson)) {
      writeItems(view, out);
      if (!deps.ended().isArchiveWriter(runId, writer) || cancelled.getAsBoolean()) {
        return Optional.empty();
      }
      ArchiveManifest manifest =
          out.finish(view.state().name(), view.endedAt(), deps.clock().instant(), deps.node());
      RunArchive archive =
          new RunArchive(
              manifest.file(),
              manifest.sha256(),
              manifest.bytes(),
              manifest.items(),
              manifest.events(),
              manifest.node(),
              manifest.archivedAt(),
              null,
              0);
      return deps.ended().markArchived(runId, writer, archive)
          ? Optional.of(archive)
          : Optional.empty();
    }
  }

  /**
   * Every item of the scope in scope order, with its report line and its events. Each item is made
   * from its own events by the entity's event handler ({@link WorkItem#replay}): the same item the
   * entity would answer, without waking it on a journal about to be deleted. A page of the scope's
   * items is read from the journal in one query ({@link ItemTrails}), not a stream per item.
   */
  private void writeItems(RunView view, ArchiveWriter out) throws IOException {
    RunItemStore store = deps.store();
    LocalDate date = LocalDate.parse(view.businessDate());
    int fromSeq = 0;
    while (true) {
      List<RunItemStore.Row> page = store.page(view.scopeId(), fromSeq, PAGE);
      if (page.isEmpty()) {
        return;
      }
      List<ItemId> ids = new ArrayList<>(page.size());
      for (RunItemStore.Row row : page) {
        ids.add(ItemId.of(view.job(), date, row.accountId(), row.cursor()));
      }
      Map<ItemId, List<ItemAudit.Entry>> read = deps.trails().trails(ids);
      for (int i = 0; i < page.size(); i++) {
        ItemId id = ids.get(i);
        List<ItemAudit.Entry> trail = read.get(id);
        out.item(
            page.get(i).seq(),
            id.value(),
            deps.views()
                .reportLine(
                    view, id, WorkItem.replay(id, trail.stream().map(e -> e.event()).toList())));
        for (ItemAudit.Entry entry : trail) {
          out.event(id.value(), deps.views().auditEvent(entry));
        }
      }
      fromSeq = page.get(page.size() - 1).seq() + 1;
    }
  }

  /**
   * Before deleting on from an earlier pass: the archive it marked must still be whole here. If it
   * is not in this node's archive directory and another node wrote it, that node's directory has
   * it; if this node wrote it and it is gone or changed, nothing more is deleted.
   */
  private void requireArchiveIntact(String runId, RunArchive archive) throws IOException {
    Path file = deps.settings().archiveDir().resolve(archive.file());
    if (!Files.exists(file)) {
      if (!archive.node().equals(deps.node())) {
        log.info(
            "retention: run {}: its archive {} is on node {}, not here; deleting on",
            runId,
            archive.file(),
            archive.node());
        return;
      }
      throw new IOException(
          "the archive " + archive.file() + " of run " + runId + " is missing: its rows are kept");
    }
    String sha = ArchiveReader.sha256(file);
    if (!sha.equals(archive.sha256())) {
      throw new IOException(
          "the archive "
              + archive.file()
              + " of run "
              + runId
              + " does not match the SHA-256 recorded for it: its rows are kept");
    }
  }

  private long deleteRows(EndedRuns.Filed filed) {
    long rows = 0;
    while (!cancelled.getAsBoolean()) {
      ScopePurge.Batch batch = purge.deleteBatch(filed.record(), deps.settings().batchSize());
      rows += batch.rows();
      deps.listener().rowsDeleted(batch.rows());
      if (batch.items() == 0) {
        break;
      }
    }
    return rows;
  }

  private void endClaim(String runId) {
    CoordinatorCalls.<RunCoordinator.PruningReply>ask(
        deps.system(),
        deps.coordinator(),
        replyTo -> new RunCoordinator.EndPruning(runId, replyTo));
  }
}
