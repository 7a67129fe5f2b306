package io.fencekeeper.cli;

import io.fencekeeper.archive.ArchiveManifest;
import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code archive list}: every archive in the directory, one line each, from the manifests. */
@Command(name = "list", description = "List the archived runs (from their manifests).")
public final class ArchiveListCommand implements Callable<Integer> {

  @Mixin ArchiveDirOptions archive;

  @Override
  public Integer call() throws Exception {
    PrintStream out = System.out;
    List<ArchiveManifest> manifests;
    try {
      manifests = archive.reader().list();
    } catch (IOException e) {
      System.err.println("cannot read " + archive.dir() + ": " + e.getMessage());
      return 1;
    }
    if (archive.json) {
      out.println(archive.mapper.writerWithDefaultPrettyPrinter().writeValueAsString(manifests));
      return 0;
    }
    if (manifests.isEmpty()) {
      out.println("no archives in " + archive.dir());
    }
    for (ArchiveManifest m : manifests) {
      out.printf(
          "%-40s %-9s ended %s  items %d  events %d  %d bytes  archived %s  %s%n",
          m.runId(),
          m.state(),
          m.endedAt(),
          m.items(),
          m.events(),
          m.bytes(),
          m.archivedAt(),
          m.file());
    }
    return 0;
  }
}
