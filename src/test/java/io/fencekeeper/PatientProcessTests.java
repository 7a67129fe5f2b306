package io.fencekeeper;

import io.fencekeeper.testing.ProcessTest;
import org.junit.platform.suite.api.IncludeClassNamePatterns;
import org.junit.platform.suite.api.SelectPackages;
import org.junit.platform.suite.api.Suite;

/**
 * The process tests that do not lean on the test cluster's failure-detection timings, one class
 * after another in a fork of their own, beside {@link ProcessTests}: clusters whose faults must
 * stay below a patient failure detector that they set themselves (a pause a node wakes from as a
 * member, a clock ahead, nodes that come and go by SIGTERM), a cluster that only forms, clusters
 * whose faults strike external workers, not nodes, and single processes. A second cluster beside
 * the first costs each some CPU, which none of these timings depend on (docs/testing.md).
 */
// the fast tier leaves out every class tagged process: then this suite has nothing to run
@Suite(failIfNoTests = false)
@SelectPackages("io.fencekeeper")
@IncludeClassNamePatterns(PatientProcessTests.CLASSES)
@ProcessTest
class PatientProcessTests {

  static final String CLASSES =
      ".*\\.(PauseThenKill|CountersMatchJournal|ClockSkew|ClusterBootstrap|MillionRowUpload"
          + "|RetentionCrash|RetentionConfig|LocalPostgres|RunCommandQuiet|PartitionTimings|WarmUp"
          + "|FleetFollowsWindow|ExternalWorkers|RestartAtDeadline)ProcessTest";
}
