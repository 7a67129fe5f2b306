package io.fencekeeper.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test class that runs a cluster of child JVMs (nodes, the sim) and faults them: tagged {@code
 * process} (not in the fast tier), and never beside another such class or a browser test in the
 * suite's other forks ({@link OneClusterAtATime}): its timings are the lease's and the partition
 * inequality's, sized for the suite's own in-JVM load beside it, not for two clusters at once.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag("process")
@ExtendWith(OneClusterAtATime.class)
public @interface ClusterProcessTest {}
