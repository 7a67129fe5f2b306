package io.fencekeeper.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * A test class that starts child JVMs or processes (the CLI, a node that must refuse to start,
 * PostgreSQL's own processes) but no cluster: tagged {@code process}, so the fast tier ({@code mvn
 * -B test -Pfast}, README) leaves it out. A cluster of processes is a {@link ClusterProcessTest}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag("process")
public @interface ProcessTest {}
