package io.fencekeeper.archive;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.GZIPOutputStream;

/**
 * Writes one run's archive (docs/archive.md): gzip JSON Lines, the run first, then each item with
 * its events, then an end line with the counts; its SHA-256 is taken over the compressed bytes as
 * they go to disk. Nothing is visible under the archive's name until {@link #finish} has forced the
 * whole file to disk and renamed it; the manifest follows the same way. A writer closed before it
 * finished leaves nothing behind.
 */
final class ArchiveWriter implements AutoCloseable {

  private final Path dir;
  private final String runId;
  private final ObjectMapper mapper;
  private final Path tmp;
  private final MessageDigest sha;
  private final GZIPOutputStream out;
  private long lines;
  private long items;
  private long events;
  private boolean finished;

  private ArchiveWriter(Path dir, String runId, ObjectMapper mapper) throws IOException {
    this.dir = dir;
    this.runId = runId;
    this.mapper = mapper;
    this.tmp = ArchiveFiles.temporary(dir, ArchiveFiles.dataName(runId));
    try {
      this.sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
    OutputStream file = new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 16);
    this.out = new GZIPOutputStream(new DigestOutputStream(file, sha), 1 << 16);
  }

  /** Starts the archive of {@code runId} in {@code dir} with the run as the API shows it. */
  static ArchiveWriter start(Path dir, String runId, ObjectMapper mapper, ObjectNode run)
      throws IOException {
    ArchiveWriter writer = new ArchiveWriter(dir, runId, mapper);
    try {
      Map<String, Object> line = new LinkedHashMap<>();
      line.put("kind", "run");
      line.put("format", ArchiveManifest.FORMAT);
      line.put("run", run);
      writer.line(line);
      return writer;
    } catch (IOException | RuntimeException e) {
      writer.close();
      throw e;
    }
  }

  /** An item of the run's scope ({@code seq}: its place in it) with its report line. */
  void item(long seq, String itemId, Map<String, Object> report) throws IOException {
    Map<String, Object> line = new LinkedHashMap<>();
    line.put("kind", "item");
    line.put("seq", seq);
    line.put("itemId", itemId);
    line.put("report", report);
    line(line);
    items++;
  }

  /** One journaled event of the item written last, as the audit shows it. */
  void event(String itemId, Map<String, Object> event) throws IOException {
    Map<String, Object> line = new LinkedHashMap<>();
    line.put("kind", "event");
    line.put("itemId", itemId);
    line.put("event", event);
    line(line);
    events++;
  }

  private void line(Map<String, Object> line) throws IOException {
    out.write(mapper.writeValueAsBytes(line));
    out.write('\n');
    lines++;
  }

  /**
   * Ends the file with the counts, forces it to disk and gives it its name, then writes the
   * manifest the same way: when this returns, both are complete on disk.
   */
  ArchiveManifest finish(String state, Instant endedAt, Instant archivedAt, String node)
      throws IOException {
    Map<String, Object> end = new LinkedHashMap<>();
    end.put("kind", "end");
    end.put("items", items);
    end.put("events", events);
    line(end);
    out.close();
    ArchiveFiles.force(tmp);
    long bytes = Files.size(tmp);
    String data = ArchiveFiles.dataName(runId);
    ArchiveFiles.publish(tmp, dir, data);
    finished = true;
    ArchiveManifest manifest =
        new ArchiveManifest(
            ArchiveManifest.FORMAT,
            runId,
            state,
            endedAt,
            data,
            HexFormat.of().formatHex(sha.digest()),
            bytes,
            lines,
            items,
            events,
            archivedAt,
            node);
    writeManifest(dir, manifest, mapper);
    return manifest;
  }

  static void writeManifest(Path dir, ArchiveManifest manifest, ObjectMapper mapper)
      throws IOException {
    String name = ArchiveFiles.manifestName(manifest.runId());
    Path tmp = ArchiveFiles.temporary(dir, name);
    try {
      Files.write(tmp, mapper.writerWithDefaultPrettyPrinter().writeValueAsBytes(manifest));
      ArchiveFiles.force(tmp);
      ArchiveFiles.publish(tmp, dir, name);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  /** An archive not finished (a failure, another pass won) leaves no file behind. */
  @Override
  public void close() throws IOException {
    if (!finished) {
      try {
        out.close();
      } finally {
        Files.deleteIfExists(tmp);
      }
    }
  }
}
