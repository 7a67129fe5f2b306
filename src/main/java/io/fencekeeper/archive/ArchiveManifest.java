package io.fencekeeper.archive;

import java.time.Instant;

/**
 * What an archive file holds, written beside it once the file is complete (docs/archive.md): its
 * SHA-256 and size as written, and its counts, so a reader can tell a whole archive from a damaged
 * one without trusting the file itself.
 *
 * @param file the archive's file name, in the same directory
 * @param lines every line of the file: the run, one per item, one per event, the end
 * @param node the node that wrote it
 */
public record ArchiveManifest(
    int format,
    String runId,
    String state,
    Instant endedAt,
    String file,
    String sha256,
    long bytes,
    long lines,
    long items,
    long events,
    Instant archivedAt,
    String node) {

  /** The version of docs/archive.md the file follows. */
  public static final int FORMAT = 1;
}
