package io.fencekeeper;

import io.fencekeeper.testing.ProcessTest;
import org.junit.platform.suite.api.IncludeClassNamePatterns;
import org.junit.platform.suite.api.SelectPackages;
import org.junit.platform.suite.api.Suite;

/**
 * The combined faults (docs/cluster.md, "Combined faults"), one class after another in a fork of
 * their own, beside {@link ProcessTests} and {@link PatientProcessTests}: a third lane, so that the
 * suite's longest path stays a single-fault lane's. Each of these starts its own cluster; two of
 * them never overlap, but one may overlap a single-fault cluster of the other lanes, which the
 * suite's load already makes them survive (docs/testing.md).
 *
 * <p>It also holds {@code FleetFollowsWindowProcessTest} (issue 39: the test plays the autoscaler,
 * adding nodes to one and SIGTERMing them again), not a combined fault: of the three lanes this one
 * has the most room, and its cluster of one to four nodes fits beside the other lanes as a combined
 * fault's three nodes do. And {@code ExternalWorkersProcessTest} (issue 51: three external worker
 * processes of two nodes, one crashing, one paused, one losing claim answers), for the same reason.
 */
// the fast tier leaves out every class tagged process: then this suite has nothing to run
@Suite(failIfNoTests = false)
@SelectPackages("io.fencekeeper")
@IncludeClassNamePatterns(CombinedFaultProcessTests.CLASSES)
@ProcessTest
class CombinedFaultProcessTests {

  static final String CLASSES =
      ".*\\.(PartitionDuringOutage|SkewedPause|KeeperKill|RestartAtDeadline|FleetFollowsWindow"
          + "|ExternalWorkers)ProcessTest";
}
