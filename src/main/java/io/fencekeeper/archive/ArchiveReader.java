package io.fencekeeper.archive;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

/**
 * Reads an archive directory (docs/archive.md): the manifests, and a run's archive line by line
 * once its bytes are proven to be the ones its manifest names. For {@code fencekeeper archive} and
 * for retention itself before it deletes on from an earlier pass.
 */
public final class ArchiveReader {

  /** An archive whose file is missing, or is not what its manifest says. */
  public static final class DamagedArchive extends IOException {
    public DamagedArchive(String message) {
      super(message);
    }
  }

  private final Path dir;
  private final ObjectMapper mapper;

  public ArchiveReader(Path dir, ObjectMapper mapper) {
    this.dir = dir;
    this.mapper = mapper;
  }

  /** Every manifest in the directory, by run id. */
  public List<ArchiveManifest> list() throws IOException {
    List<ArchiveManifest> manifests = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        String name = file.getFileName().toString();
        if (name.endsWith(ArchiveFiles.MANIFEST) && !name.startsWith(".")) {
          manifests.add(mapper.readValue(file.toFile(), ArchiveManifest.class));
        }
      }
    } catch (NoSuchFileException e) {
      throw new NoSuchFileException(dir.toString(), null, "no archive directory");
    }
    manifests.sort(Comparator.comparing(ArchiveManifest::runId));
    return manifests;
  }

  /** The manifest of a run's archive; empty when there is none here. */
  public Optional<ArchiveManifest> manifest(String runId) throws IOException {
    Path file = dir.resolve(ArchiveFiles.manifestName(runId));
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    return Optional.of(mapper.readValue(file.toFile(), ArchiveManifest.class));
  }

  /**
   * Proves the archive whole: its size and SHA-256 as the manifest says, and its line, item and
   * event counts as well (the end line included). Reads the file twice in all with {@link #lines}.
   */
  public void verify(ArchiveManifest manifest) throws IOException {
    Path file = file(manifest);
    long bytes = Files.size(file);
    String sha = sha256(file);
    if (bytes != manifest.bytes() || !sha.equals(manifest.sha256())) {
      throw new DamagedArchive(
          "archive "
              + manifest.file()
              + " does not match its manifest: "
              + bytes
              + " bytes with SHA-256 "
              + sha
              + ", the manifest says "
              + manifest.bytes()
              + " bytes with "
              + manifest.sha256());
    }
    long[] counts = new long[3]; // lines, items, events
    JsonNode[] end = new JsonNode[1];
    lines(
        manifest,
        line -> {
          counts[0]++;
          switch (line.path("kind").asText()) {
            case "item" -> counts[1]++;
            case "event" -> counts[2]++;
            case "end" -> end[0] = line;
            default -> {}
          }
        });
    if (counts[0] != manifest.lines()
        || counts[1] != manifest.items()
        || counts[2] != manifest.events()
        || end[0] == null
        || end[0].path("items").asLong() != counts[1]
        || end[0].path("events").asLong() != counts[2]) {
      throw new DamagedArchive(
          "archive "
              + manifest.file()
              + " has "
              + counts[0]
              + " lines, "
              + counts[1]
              + " items and "
              + counts[2]
              + " events; its manifest says "
              + manifest.lines()
              + ", "
              + manifest.items()
              + " and "
              + manifest.events());
    }
  }

  /** Each line of the archive, in order, as JSON (call {@link #verify} first). */
  public void lines(ArchiveManifest manifest, Consumer<JsonNode> line) throws IOException {
    try (InputStream in = new GZIPInputStream(Files.newInputStream(file(manifest)), 1 << 16);
        BufferedReader reader =
            new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      String text;
      while ((text = reader.readLine()) != null) {
        line.accept(mapper.readTree(text));
      }
    }
  }

  private Path file(ArchiveManifest manifest) throws DamagedArchive {
    Path file = dir.resolve(manifest.file()).normalize();
    if (!file.getParent().equals(dir.normalize()) || !Files.exists(file)) {
      throw new DamagedArchive("archive " + manifest.file() + " is missing");
    }
    return file;
  }

  /** The SHA-256 of a file's bytes, in hex. */
  public static String sha256(Path file) throws IOException {
    MessageDigest sha;
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
    try (InputStream in = new DigestInputStream(Files.newInputStream(file), sha)) {
      in.transferTo(java.io.OutputStream.nullOutputStream());
    }
    return HexFormat.of().formatHex(sha.digest());
  }
}
