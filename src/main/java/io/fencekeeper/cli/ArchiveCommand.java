package io.fencekeeper.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code archive list | show RUN | audit ITEM | prune}: the archives retention wrote
 * (docs/archive.md), read from the archive directory the way {@code status}, {@code report} and
 * {@code audit} read a node's API; {@code prune} asks a running node to prune now.
 */
@Command(
    name = "archive",
    description = "Read the archives of pruned runs, or prune ended runs now.",
    subcommands = {
      ArchiveListCommand.class,
      ArchiveShowCommand.class,
      ArchiveAuditCommand.class,
      ArchivePruneCommand.class
    })
public final class ArchiveCommand implements Runnable {

  @Override
  public void run() {
    CommandLine.usage(this, System.out);
  }
}
