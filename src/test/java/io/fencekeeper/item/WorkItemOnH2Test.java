package io.fencekeeper.item;

import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Path;

/** The journal contract on the embedded default: an H2 file database. */
class WorkItemOnH2Test extends WorkItemJournalContract {
  @Override
  TestDatabases.Target database(Path dataDir) {
    return TestDatabases.h2File(dataDir);
  }
}
