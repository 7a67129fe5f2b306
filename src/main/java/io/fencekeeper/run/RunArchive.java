package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;
import java.time.Instant;

/**
 * Where an ended run went when retention archived it (docs/design.md, "Retention and the archive";
 * the file format is docs/archive.md). Kept in the run's {@code run_record} row, its tombstone, so
 * the run stays known after its items are gone.
 *
 * @param file the archive's file name in the archive directory of {@code node}
 * @param sha256 the SHA-256 of the archive file as written (hex), as its manifest says
 * @param node the node whose archive directory holds the file
 * @param prunedAt when the last of the run's rows was deleted; null while deletes go on
 * @param rowsDeleted journal, tag, snapshot and {@code run_item} rows deleted so far
 */
public record RunArchive(
    String file,
    String sha256,
    long bytes,
    long items,
    long events,
    String node,
    Instant archivedAt,
    Instant prunedAt,
    long rowsDeleted)
    implements CborSerializable {

  /** Every row of the run is deleted: only this tombstone and the archive are left. */
  public boolean pruned() {
    return prunedAt != null;
  }
}
