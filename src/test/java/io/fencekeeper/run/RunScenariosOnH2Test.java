package io.fencekeeper.run;

import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Path;

/** The run scenarios on the embedded default: an H2 file journal. */
class RunScenariosOnH2Test extends RunScenarioContract {
  @Override
  TestDatabases.Target database(Path dataDir) {
    return TestDatabases.h2File(dataDir);
  }
}
