package io.fencekeeper.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * A test class that drives a real Chromium: tagged {@code browser}, so the fast tier ({@code mvn -B
 * test -Pfast}, README) leaves it out.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag("browser")
public @interface BrowserTest {}
