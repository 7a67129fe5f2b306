package io.fencekeeper.run;

import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Path;

/** Staging on the embedded H2 file: batched inserts, step by step. */
class RunStagingOnH2Test extends RunStagingContract {
  @Override
  TestDatabases.Target database(Path dataDir) {
    return TestDatabases.h2File(dataDir);
  }
}
