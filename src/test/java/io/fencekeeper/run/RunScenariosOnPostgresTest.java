package io.fencekeeper.run;

import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Path;

/** The run scenarios on a real PostgreSQL journal. */
class RunScenariosOnPostgresTest extends RunScenarioContract {
  @Override
  TestDatabases.Target database(Path dataDir) {
    return TestDatabases.freshPostgres();
  }
}
