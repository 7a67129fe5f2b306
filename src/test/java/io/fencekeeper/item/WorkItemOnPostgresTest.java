package io.fencekeeper.item;

import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Path;

/** The journal contract on a real PostgreSQL server. */
class WorkItemOnPostgresTest extends WorkItemJournalContract {
  @Override
  TestDatabases.Target database(Path dataDir) {
    return TestDatabases.freshPostgres();
  }
}
