package io.fencekeeper;

import io.fencekeeper.testing.ProcessTest;
import org.junit.platform.suite.api.IncludeClassNamePatterns;
import org.junit.platform.suite.api.SelectPackages;
import org.junit.platform.suite.api.Suite;

/**
 * Every test class named {@code *ProcessTest}: clusters of child JVMs and their faults, and the
 * other tests of whole processes. Surefire runs this suite as one class in one fork (the pom
 * excludes the classes themselves), so no two of them ever overlap, while the suite's other forks
 * run the in-JVM tests beside it; its name sorts first, so it starts at once and is the suite's
 * longest path (docs/testing.md).
 */
@Suite
@SelectPackages("io.fencekeeper")
@IncludeClassNamePatterns(".*ProcessTest")
@ProcessTest
class ProcessTests {}
