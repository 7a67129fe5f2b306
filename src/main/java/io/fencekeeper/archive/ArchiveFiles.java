package io.fencekeeper.archive;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.UUID;

/**
 * The archive directory's file names and how a file gets there whole: written under a temporary
 * name, forced to disk, renamed in one step, and the directory forced too, so that after a crash a
 * name holds either nothing or the complete file (docs/archive.md).
 */
final class ArchiveFiles {

  static final String DATA = ".jsonl.gz";
  static final String MANIFEST = ".manifest.json";

  private ArchiveFiles() {}

  /**
   * The file name of a run's archive, without the suffix: {@code {job}__{businessDate}}. A run id
   * is {@code job/date} and a job is letters, digits and {@code ._:@+=-}, so the name has no
   * separator and no way out of the directory.
   */
  static String baseName(String runId) {
    int slash = runId.lastIndexOf('/');
    if (slash <= 0 || runId.indexOf('/') != slash) {
      throw new IllegalArgumentException("a run id is job/businessDate");
    }
    return runId.substring(0, slash) + "__" + runId.substring(slash + 1);
  }

  static String dataName(String runId) {
    return baseName(runId) + DATA;
  }

  static String manifestName(String runId) {
    return baseName(runId) + MANIFEST;
  }

  /** A fresh temporary file for {@code name}, readable by this user only (archives hold audit). */
  static Path temporary(Path dir, String name) throws IOException {
    Path tmp = dir.resolve("." + name + "." + UUID.randomUUID() + ".tmp");
    if (FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
      FileAttribute<?> ownerOnly =
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
      return Files.createFile(tmp, ownerOnly);
    }
    return Files.createFile(tmp);
  }

  /**
   * Deletes the temporary files a writer that died left (a kill during an archive's writing), once
   * they are older than {@code age} by the file system's clock: never a published archive. Answers
   * how many.
   */
  static int removeStaleTemporaries(Path dir, Duration age) throws IOException {
    long before = System.currentTimeMillis() - age.toMillis();
    int removed = 0;
    try (var files = Files.list(dir)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        String name = file.getFileName().toString();
        if (name.startsWith(".")
            && name.endsWith(".tmp")
            && Files.getLastModifiedTime(file).toMillis() < before
            && Files.deleteIfExists(file)) {
          removed++;
        }
      }
    }
    return removed;
  }

  /** Forces a file's bytes to disk. */
  static void force(Path file) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      channel.force(true);
    }
  }

  /**
   * Renames {@code tmp} (already forced) to {@code name} in one step, replacing what was there, and
   * forces the directory so the rename itself survives a crash.
   */
  static Path publish(Path tmp, Path dir, String name) throws IOException {
    Path target = dir.resolve(name);
    try {
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      throw new IOException("the archive directory cannot rename atomically: " + e.getMessage(), e);
    }
    forceDirectory(dir);
    return target;
  }

  /** Forces a directory's entries (a rename) to disk. */
  static void forceDirectory(Path dir) throws IOException {
    try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
      channel.force(true);
    }
  }
}
