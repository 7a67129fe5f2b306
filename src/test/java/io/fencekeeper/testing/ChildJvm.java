package io.fencekeeper.testing;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/**
 * The command line that starts a child JVM of this build (a node, the sim, the CLI): C1 only, the
 * serial collector and a small heap, as a short-lived process on two shared cores wants, and a
 * class-data-sharing archive made once per build, so each of the suite's hundred-odd child JVMs
 * maps the classes a node loads instead of parsing and verifying them again (measured on the quick
 * start's {@code run}: 7.1 s and 5.4 s of CPU without, 4.9-5.9 s and 3.8 s with; docs/testing.md).
 *
 * <p>CDS cannot use classes from a directory, so the build's classes and test classes are copied
 * into one jar first; the archive is dumped at the exit of a short {@code run} of the embedded
 * default. Both sit in {@code target/child-jvm/}, made under a file lock by whichever fork of the
 * suite asks first, and made again when a class of the build is newer than the jar. Should the JVM
 * refuse the archive (another JDK), it starts as it would without one.
 */
public final class ChildJvm {

  private static final Path DIR = Path.of("target", "child-jvm").toAbsolutePath();
  private static final Path JAR = DIR.resolve("classes.jar");
  private static final Path ARCHIVE = DIR.resolve("classes.jsa");
  private static final List<String> FLAGS =
      List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

  private static List<String> command;

  private ChildJvm() {}

  /** {@code java} with the flags and class path of a child JVM, up to its main class. */
  public static synchronized List<String> command() {
    if (command == null) {
      command = prepare();
    }
    return command;
  }

  private static List<String> prepare() {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classpath = System.getProperty("surefire.test.class.path");
    if (classpath == null || classpath.isBlank()) {
      classpath = System.getProperty("java.class.path");
    }
    List<String> directories = new ArrayList<>();
    List<String> rest = new ArrayList<>();
    for (String entry : classpath.split(File.pathSeparator)) {
      (Files.isDirectory(Path.of(entry)) ? directories : rest).add(entry);
    }
    List<String> plain = new ArrayList<>(List.of(java));
    plain.addAll(FLAGS);
    plain.addAll(List.of("-cp", classpath));
    if (directories.isEmpty()) {
      return List.copyOf(plain);
    }
    rest.add(0, JAR.toString());
    String shared = String.join(File.pathSeparator, rest);
    try {
      Files.createDirectories(DIR);
      try (FileChannel channel =
              FileChannel.open(
                  DIR.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
          FileLock lock = channel.lock()) {
        if (!Files.exists(ARCHIVE) || newerThanJar(directories)) {
          Files.deleteIfExists(ARCHIVE);
          writeJar(directories);
          train(java, shared);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not prepare " + DIR, e);
    }
    if (!Files.exists(ARCHIVE)) {
      return List.copyOf(plain); // the training run could not dump one: start without
    }
    List<String> withArchive = new ArrayList<>(List.of(java));
    withArchive.addAll(FLAGS);
    withArchive.addAll(
        List.of("-XX:SharedArchiveFile=" + ARCHIVE, "-Xlog:cds=off,cds+dynamic=off"));
    withArchive.addAll(List.of("-cp", shared));
    return List.copyOf(withArchive);
  }

  private static boolean newerThanJar(List<String> directories) throws IOException {
    if (!Files.exists(JAR)) {
      return true;
    }
    long jar = Files.getLastModifiedTime(JAR).toMillis();
    for (String directory : directories) {
      try (Stream<Path> files = Files.walk(Path.of(directory))) {
        if (files.anyMatch(f -> modified(f) > jar)) {
          return true;
        }
      }
    }
    return false;
  }

  private static long modified(Path file) {
    try {
      return Files.getLastModifiedTime(file).toMillis();
    } catch (IOException e) {
      return Long.MAX_VALUE;
    }
  }

  /** The directories' files in one jar, the first of a name winning as on the class path. */
  private static void writeJar(List<String> directories) throws IOException {
    Path partial = DIR.resolve("classes.jar.partial");
    Set<String> written = new HashSet<>();
    try (OutputStream out = Files.newOutputStream(partial);
        JarOutputStream jar = new JarOutputStream(out)) {
      for (String directory : directories) {
        Path root = Path.of(directory);
        List<Path> entries;
        try (Stream<Path> walk = Files.walk(root)) {
          entries = walk.filter(path -> !path.equals(root)).sorted().toList();
        }
        for (Path entry : entries) {
          String name = root.relativize(entry).toString().replace(File.separatorChar, '/');
          // directories are entries too: a resource scan (Flyway's migrations) asks for them
          boolean folder = Files.isDirectory(entry);
          if (written.add(folder ? name + "/" : name)) {
            jar.putNextEntry(new JarEntry(folder ? name + "/" : name));
            if (!folder) {
              Files.copy(entry, jar);
            }
            jar.closeEntry();
          }
        }
      }
    }
    Files.move(partial, JAR, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
  }

  /** A short run of the embedded default that dumps the classes it loaded as it exits. */
  private static void train(String java, String classpath) throws IOException {
    Path work = Files.createTempDirectory(DIR, "training");
    StringBuilder accounts = new StringBuilder("accountId,cursor\n");
    for (int i = 1; i <= 200; i++) {
      accounts.append("acct-").append(i).append(",c-1\n");
    }
    Files.writeString(work.resolve("accounts.csv"), accounts);
    List<String> training = new ArrayList<>(List.of(java));
    training.addAll(FLAGS);
    training.addAll(List.of("-XX:ArchiveClassesAtExit=" + ARCHIVE, "-cp", classpath));
    training.addAll(
        List.of(
            "io.fencekeeper.cli.Main",
            "run",
            "--job",
            "training",
            "--date",
            "2026-11-29",
            "--accounts",
            work.resolve("accounts.csv").toString()));
    ProcessBuilder builder =
        new ProcessBuilder(training)
            .directory(work.toFile())
            .redirectErrorStream(true)
            .redirectOutput(work.resolve("training.log").toFile());
    builder.environment().put("FENCEKEEPER_DATA_DIR", work.resolve("data").toString());
    Process process = builder.start();
    try {
      if (!process.waitFor(180, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        Files.deleteIfExists(ARCHIVE);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
