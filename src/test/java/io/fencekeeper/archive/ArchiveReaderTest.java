package io.fencekeeper.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An archive is read only once it is proven to be what its manifest says: a changed byte, a
 * truncated or missing file, or counts that do not add up are refused, naming the file.
 */
class ArchiveReaderTest {

  @TempDir Path dir;

  private ArchiveReader reader() {
    return new ArchiveReader(dir, ArchiveWriterTest.JSON);
  }

  @Test
  void manifestsAreListedByRunAndAWholeArchiveReadsLineByLine() throws Exception {
    ArchiveWriterTest.write(dir, "weekly/2026-11-29", 1);
    ArchiveWriterTest.write(dir, "nightly/2026-11-30", 2);
    ArchiveWriterTest.write(dir, "nightly/2026-11-29", 3);
    List<String> runs = new ArrayList<>();
    reader().list().forEach(m -> runs.add(m.runId()));
    assertEquals(List.of("nightly/2026-11-29", "nightly/2026-11-30", "weekly/2026-11-29"), runs);

    ArchiveManifest manifest = reader().manifest("nightly/2026-11-29").orElseThrow();
    reader().verify(manifest);
    List<String> kinds = new ArrayList<>();
    reader().lines(manifest, line -> kinds.add(line.path("kind").asText()));
    assertEquals(1 + 3 + 6 + 1, kinds.size());
    assertEquals("run", kinds.get(0));
    assertEquals("end", kinds.get(kinds.size() - 1));
    assertTrue(reader().manifest("nightly/2026-12-01").isEmpty());
  }

  @Test
  void aChangedByteIsRefused() throws Exception {
    ArchiveManifest manifest = ArchiveWriterTest.write(dir, "nightly/2026-11-29", 3);
    Path file = dir.resolve(manifest.file());
    byte[] bytes = Files.readAllBytes(file);
    bytes[bytes.length / 2] ^= 0x01;
    Files.write(file, bytes);
    ArchiveReader.DamagedArchive e =
        assertThrows(ArchiveReader.DamagedArchive.class, () -> reader().verify(manifest));
    assertTrue(e.getMessage().contains("does not match its manifest"), e.getMessage());
  }

  @Test
  void aTruncatedOrMissingFileIsRefused() throws Exception {
    ArchiveManifest manifest = ArchiveWriterTest.write(dir, "nightly/2026-11-29", 3);
    Path file = dir.resolve(manifest.file());
    byte[] bytes = Files.readAllBytes(file);
    Files.write(file, java.util.Arrays.copyOf(bytes, bytes.length - 10));
    assertThrows(ArchiveReader.DamagedArchive.class, () -> reader().verify(manifest));
    Files.delete(file);
    ArchiveReader.DamagedArchive missing =
        assertThrows(ArchiveReader.DamagedArchive.class, () -> reader().verify(manifest));
    assertTrue(missing.getMessage().endsWith("is missing"), missing.getMessage());
  }

  /** The bytes are the manifest's, but the manifest was written for other counts. */
  @Test
  void countsThatDoNotAddUpAreRefused() throws Exception {
    ArchiveManifest manifest = ArchiveWriterTest.write(dir, "nightly/2026-11-29", 3);
    ArchiveManifest wrong =
        new ArchiveManifest(
            manifest.format(),
            manifest.runId(),
            manifest.state(),
            manifest.endedAt(),
            manifest.file(),
            manifest.sha256(),
            manifest.bytes(),
            manifest.lines(),
            manifest.items() + 1,
            manifest.events(),
            manifest.archivedAt(),
            manifest.node());
    ArchiveReader.DamagedArchive e =
        assertThrows(ArchiveReader.DamagedArchive.class, () -> reader().verify(wrong));
    assertTrue(e.getMessage().contains("its manifest says"), e.getMessage());
  }
}
