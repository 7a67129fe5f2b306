package io.fencekeeper;

import io.fencekeeper.testing.ProcessTest;
import org.junit.platform.suite.api.ExcludeClassNamePatterns;
import org.junit.platform.suite.api.IncludeClassNamePatterns;
import org.junit.platform.suite.api.SelectPackages;
import org.junit.platform.suite.api.Suite;

/**
 * Every test class named {@code *ProcessTest} that {@link PatientProcessTests} does not run: the
 * clusters of child JVMs whose faults the failure detector finds at the test cluster's timings
 * (kill -9, SIGSTOP, a partition, a rolling restart, and the combined faults). Surefire runs this
 * suite as one class in one fork (the pom excludes the classes themselves), so no two of them ever
 * overlap; beside it run the patient lane and the in-JVM tests. A new {@code *ProcessTest} lands
 * here unless another lane names it. Its name sorts first, so it starts at once (docs/testing.md).
 */
// the fast tier leaves out every class tagged process: then this suite has nothing to run
@Suite(failIfNoTests = false)
@SelectPackages("io.fencekeeper")
@IncludeClassNamePatterns(".*ProcessTest")
@ExcludeClassNamePatterns(PatientProcessTests.CLASSES)
@ProcessTest
class ProcessTests {}
