package io.fencekeeper.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * A test class that starts child JVMs or processes (nodes, the sim, the CLI, PostgreSQL's own
 * processes): tagged {@code process}, so the fast tier ({@code mvn -B test -Pfast}, README) leaves
 * it out. One named {@code *ProcessTest} runs in one of the two process suites ({@code
 * io.fencekeeper.ProcessTests} or {@code PatientProcessTests}), one class after another in a fork
 * of its own: its timings are the lease's and the partition inequality's, sized for the forks
 * beside it, never for a second cluster at the test timings at once (docs/testing.md).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag("process")
public @interface ProcessTest {}
