package io.fencekeeper.localdb;

import io.zonky.test.db.postgres.embedded.DefaultPostgresBinaryResolver;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.tukaani.xz.XZInputStream;

/**
 * PostgreSQL's binaries (zonky's archive on the class path) unpacked once into a directory of the
 * project's own, where a partial unpacking is never taken for a whole one.
 *
 * <p>zonky's {@code EmbeddedPostgres} unpacks in place, into a cache shared by everything on the
 * machine ({@code <tmp>/embedded-pg/PG-<md5>}), and holds the archive and each file in memory while
 * it does. With {@code -Xmx64m} it ran out of heap; a process killed half-way left a directory
 * without {@code bin/} that every later start on the machine tripped over ({@code
 * FileAlreadyExistsException} on {@code lib/libpq.so}), the tests' included. Here the archive is
 * streamed (a few KiB of heap) into {@code PG-<md5>.unpacking} beside the final directory, under a
 * file lock (the operating system drops it when its holder dies, kill -9 included), and the
 * directory gets its final name by one atomic rename once everything is on disk. A leftover {@code
 * .unpacking} is deleted by the next holder of the lock. zonky is then pointed at this directory
 * ({@code setOverrideWorkingDirectory}), finds its own "unpacked" marker there and unpacks nothing.
 */
public final class PostgresBinaries {

  /** A system property naming the directory to unpack into, instead of {@link #defaultRoot()}. */
  public static final String ROOT_PROPERTY = "fencekeeper.postgres.binaries";

  /** The marker zonky looks for (newer than every other entry) before it trusts a directory. */
  private static final String ZONKY_MARKER = ".exists";

  private static final String UNPACKING = ".unpacking";

  private static final Map<Path, Path> UNPACKED = new HashMap<>();

  private PostgresBinaries() {}

  /** {@code <tmp>/fencekeeper-postgres-<user>}, or the directory {@link #ROOT_PROPERTY} names. */
  public static Path defaultRoot() {
    String configured = System.getProperty(ROOT_PROPERTY, "");
    if (!configured.isBlank()) {
      return Path.of(configured).toAbsolutePath();
    }
    String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9_.-]", "_");
    return Path.of(System.getProperty("java.io.tmpdir"), "fencekeeper-postgres-" + user)
        .toAbsolutePath();
  }

  /** zonky's builder, on binaries unpacked (once) under {@link #defaultRoot()}. */
  public static EmbeddedPostgres.Builder builder() {
    return builder(defaultRoot());
  }

  /** zonky's builder, on binaries unpacked (once) under {@code root}. */
  public static EmbeddedPostgres.Builder builder(Path root) {
    try {
      unpacked(root);
    } catch (IOException e) {
      throw new UncheckedIOException("unpacking PostgreSQL's binaries into " + root + " failed", e);
    }
    return EmbeddedPostgres.builder().setOverrideWorkingDirectory(root.toFile());
  }

  /**
   * The complete binaries directory under {@code root} ({@code PG-<md5 of the archive>}, the name
   * zonky computes), unpacking it first if no process ever completed it.
   */
  public static synchronized Path unpacked(Path root) throws IOException {
    Path known = UNPACKED.get(root);
    if (known != null && Files.isDirectory(known)) {
      return known;
    }
    Files.createDirectories(root);
    Path target = root.resolve("PG-" + archiveDigest());
    Path partial = target.resolveSibling(target.getFileName() + UNPACKING);
    try (FileChannel lockFile =
            FileChannel.open(
                target.resolveSibling(target.getFileName() + ".lock"),
                StandardOpenOption.CREATE,
                StandardOpenOption.WRITE);
        FileLock lock = lockFile.lock()) {
      if (!Files.isDirectory(target)) {
        deleteTree(partial); // what a process killed while it held the lock left behind
        unpack(partial);
        Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
      }
      ownedByThisUser(target);
      markReadyForZonky(target);
    }
    UNPACKED.put(root, target);
    return target;
  }

  /** The MD5 zonky names the directory by, streamed: the archive never sits in memory. */
  private static String archiveDigest() throws IOException {
    try (InputStream in = new DigestInputStream(archive(), md5())) {
      in.transferTo(OutputStream.nullOutputStream());
      return HexFormat.of().formatHex(((DigestInputStream) in).getMessageDigest().digest());
    }
  }

  private static void unpack(Path into) throws IOException {
    Files.createDirectories(into);
    try (TarArchiveInputStream tar =
        new TarArchiveInputStream(new XZInputStream(new BufferedInputStream(archive())))) {
      TarArchiveEntry entry;
      while ((entry = tar.getNextEntry()) != null) {
        Path path = into.resolve(entry.getName()).normalize();
        if (!path.startsWith(into)) {
          throw new IOException("archive entry outside its directory: " + entry.getName());
        }
        if (entry.isDirectory()) {
          Files.createDirectories(path);
          continue;
        }
        Files.createDirectories(path.getParent());
        if (entry.isSymbolicLink()) {
          Files.createSymbolicLink(path, Path.of(entry.getLinkName()));
        } else if (entry.isLink()) {
          Files.createLink(path, into.resolve(entry.getLinkName()).normalize());
        } else if (entry.isFile()) {
          Files.copy(tar, path);
          permit(path, entry.getMode());
        } else {
          throw new IOException("unsupported archive entry: " + entry.getName());
        }
      }
    }
    // on disk before the rename makes it the whole thing
    try (Stream<Path> files = Files.walk(into)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        if (Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
          try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.force(true);
          }
        }
      }
    }
    Files.createFile(into.resolve(ZONKY_MARKER));
  }

  /**
   * zonky trusts a directory whose {@code .exists} is at least as new as the directory and each of
   * its entries (and otherwise unpacks over it); the marker's time is set to the newest of them.
   */
  private static void markReadyForZonky(Path dir) throws IOException {
    Path marker = dir.resolve(ZONKY_MARKER);
    if (!Files.exists(marker)) {
      Files.createFile(marker);
    }
    long newest = Files.getLastModifiedTime(dir).toMillis();
    try (Stream<Path> entries = Files.list(dir)) {
      for (Path entry : (Iterable<Path>) entries::iterator) {
        newest =
            Math.max(
                newest, Files.getLastModifiedTime(entry, LinkOption.NOFOLLOW_LINKS).toMillis());
      }
    }
    Files.setLastModifiedTime(marker, FileTime.fromMillis(newest));
  }

  /**
   * The binaries run as this user: a directory someone else put there (zonky makes its working
   * directory writable by all) is refused rather than run.
   */
  private static void ownedByThisUser(Path dir) throws IOException {
    String owner = Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS).getName();
    String self = System.getProperty("user.name");
    if (!owner.equals(self) && !owner.endsWith("\\" + self)) { // Windows: DOMAIN, backslash, user
      throw new IOException(
          dir + " belongs to " + owner + ", not to " + self + ": remove it, or choose another"
              + " directory (-D" + ROOT_PROPERTY + ")");
    }
  }

  private static void permit(Path file, int mode) throws IOException {
    if (!file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
      if ((mode & 0100) != 0) {
        file.toFile().setExecutable(true, false);
      }
      return;
    }
    Set<PosixFilePermission> permissions = EnumSet.noneOf(PosixFilePermission.class);
    PosixFilePermission[] bits = PosixFilePermission.values(); // OWNER_READ .. OTHERS_EXECUTE
    for (int i = 0; i < bits.length; i++) {
      if ((mode & (0400 >> i)) != 0) {
        permissions.add(bits[i]);
      }
    }
    permissions.add(PosixFilePermission.OWNER_READ);
    permissions.add(PosixFilePermission.OWNER_WRITE);
    Files.setPosixFilePermissions(file, permissions);
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path path : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(path);
      }
    }
  }

  /** The archive zonky would pick for this machine (operating system, architecture, distro). */
  private static InputStream archive() throws IOException {
    return DefaultPostgresBinaryResolver.INSTANCE.getPgBinary(operatingSystem(), architecture());
  }

  private static String operatingSystem() {
    String name = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    if (name.startsWith("windows")) {
      return "Windows";
    }
    if (name.startsWith("mac")) {
      return "Darwin";
    }
    if (name.startsWith("linux")) {
      return "Linux";
    }
    throw new IllegalStateException("no embedded PostgreSQL for " + name);
  }

  private static String architecture() {
    String arch = System.getProperty("os.arch", "");
    return arch.equals("amd64") ? "x86_64" : arch;
  }

  private static MessageDigest md5() {
    try {
      return MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
