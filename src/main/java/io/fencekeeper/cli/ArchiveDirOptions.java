package io.fencekeeper.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.http.ApiJson;
import io.fencekeeper.archive.ArchiveManifest;
import io.fencekeeper.archive.ArchiveReader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * Where the archives are, as a node finds them ({@code FENCEKEEPER_RETENTION_ARCHIVE_DIR}, else
 * {@code archive} in {@code FENCEKEEPER_DATA_DIR}, else {@code ./data/archive}), and {@code
 * --json}. A picocli mixin of the {@code archive} commands that read files.
 */
final class ArchiveDirOptions {

  @Option(
      names = "--archive-dir",
      description =
          "the archive directory (default: $FENCEKEEPER_RETENTION_ARCHIVE_DIR, else"
              + " $FENCEKEEPER_DATA_DIR/archive, else ./data/archive)")
  Path archiveDir;

  @Option(names = "--json", description = "print the archive's JSON as it is")
  boolean json;

  final ObjectMapper mapper = ApiJson.mapper();

  Path dir() {
    if (archiveDir != null) {
      return archiveDir;
    }
    String explicit = System.getenv("FENCEKEEPER_RETENTION_ARCHIVE_DIR");
    if (explicit != null && !explicit.isBlank()) {
      return Path.of(explicit);
    }
    String data = System.getenv("FENCEKEEPER_DATA_DIR");
    return Path.of(data != null && !data.isBlank() ? data : "./data").resolve("archive");
  }

  ArchiveReader reader() {
    return new ArchiveReader(dir(), mapper);
  }

  /**
   * The run's manifest, its archive proven whole; empty after telling {@code err} why not (no such
   * archive, or one that does not match its manifest).
   */
  Optional<ArchiveManifest> verified(String runId, PrintStream err) throws IOException {
    ArchiveReader reader = reader();
    Optional<ArchiveManifest> manifest;
    try {
      manifest = reader.manifest(runId);
    } catch (IllegalArgumentException e) {
      err.println("not a run id: " + e.getMessage());
      return Optional.empty();
    }
    if (manifest.isEmpty()) {
      err.println("no archive of run " + runId + " in " + dir());
      return Optional.empty();
    }
    try {
      reader.verify(manifest.get());
    } catch (ArchiveReader.DamagedArchive e) {
      err.println(e.getMessage());
      return Optional.empty();
    }
    return manifest;
  }
}
