package io.fencekeeper.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fencekeeper.api.http.ApiJson;
import io.fencekeeper.archive.ArchiveManifest;
import io.fencekeeper.archive.ArchiveReader;
import io.fencekeeper.testing.Await;
import java.time.Duration;
import java.time.Instant;

/**
 * An ended run that retention is to prune, as the database held it before: its scope, its items'
 * events and every row retention deletes (events, tags, snapshots, {@code run_item}); and what a
 * process test reads of it on the way (docs/design.md, "Retention and the archive").
 */
record PrunedRun(String runId, String scope, int items, long events, long rows) {

  /** The run once the coordinator has filed it (a moment after it ends: only then is it due). */
  static PrunedRun before(ProcessCluster cluster, String runId, int items) throws Exception {
    String record =
        Await.until(
            Duration.ofSeconds(30),
            runId + " filed",
            () ->
                (String) cluster.queryOne("SELECT record FROM run_record WHERE run_id = ?", runId),
            found -> found != null);
    String scope = ApiJson.mapper().readTree(record).path("scopeId").asText();
    long events =
        count(cluster, "SELECT count(*) FROM event_journal WHERE persistence_id LIKE ?", runId);
    return new PrunedRun(runId, scope, items, events, rows(cluster, runId, scope));
  }

  /** Archived (the file whole and marked), its rows not all deleted yet. */
  boolean deleting(ProcessCluster cluster) {
    return at(cluster, "archived_at") != null && prunedAt(cluster) == null;
  }

  Instant prunedAt(ProcessCluster cluster) {
    return at(cluster, "pruned_at");
  }

  /** Its items still staged: the deletes go batch by batch, these rows last in each. */
  long staged(ProcessCluster cluster) {
    return ((Number) cluster.queryOne("SELECT count(*) FROM run_item WHERE scope_id = ?", scope))
        .longValue();
  }

  /**
   * Every row deleted exactly once (the tombstone's count equals the rows there were, none is
   * left), and the archive whole, with every item and event, and the same file as {@code atKill}.
   */
  void assertPrunedOnce(ProcessCluster cluster, ArchiveReader reader, ArchiveManifest atKill)
      throws Exception {
    assertEquals(0, rows(cluster, runId, scope), runId + ": rows left");
    assertEquals(
        rows,
        ((Number) cluster.queryOne("SELECT rows_deleted FROM run_record WHERE run_id = ?", runId))
            .longValue(),
        runId + ": every row deleted once, none twice");
    ArchiveManifest manifest = reader.manifest(runId).orElseThrow();
    reader.verify(manifest);
    assertEquals(atKill.sha256(), manifest.sha256(), "the archive is not written again");
    assertEquals(items, manifest.items(), "every item archived");
    assertEquals(events, manifest.events(), "every event archived");
  }

  private Instant at(ProcessCluster cluster, String column) {
    return (Instant)
        cluster.queryOne("SELECT " + column + " FROM run_record WHERE run_id = ?", runId);
  }

  private static long count(ProcessCluster cluster, String sql, String runId) {
    return ((Number) cluster.queryOne(sql, "WorkItem|" + runId + "/%")).longValue();
  }

  private static long rows(ProcessCluster cluster, String runId, String scope) {
    return count(cluster, "SELECT count(*) FROM event_journal WHERE persistence_id LIKE ?", runId)
        + count(cluster, "SELECT count(*) FROM snapshot WHERE persistence_id LIKE ?", runId)
        + count(
            cluster,
            "SELECT count(*) FROM event_tag t JOIN event_journal j ON j.ordering = t.event_id"
                + " WHERE j.persistence_id LIKE ?",
            runId)
        + ((Number) cluster.queryOne("SELECT count(*) FROM run_item WHERE scope_id = ?", scope))
            .longValue();
  }
}
