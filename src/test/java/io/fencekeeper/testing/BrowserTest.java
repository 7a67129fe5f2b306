package io.fencekeeper.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test class that drives a real Chromium: tagged {@code browser} (not in the fast tier), and
 * never beside a {@link ClusterProcessTest} in another fork ({@link OneClusterAtATime}): the
 * browser is the heaviest process the suite starts, and its waits are for pages that follow live
 * runs.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag("browser")
@ExtendWith(OneClusterAtATime.class)
public @interface BrowserTest {}
