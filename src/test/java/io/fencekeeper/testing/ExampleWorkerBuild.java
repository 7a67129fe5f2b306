package io.fencekeeper.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * The example worker of {@code examples/external-worker}, compiled by the JDK's compiler against
 * this build (the worker client's classes and the libraries the test classpath has) into {@code
 * target/example-external-worker}: the suite proves the example works without the client's jar
 * installed anywhere, as CI runs only the repository's own build.
 */
public final class ExampleWorkerBuild {

  private ExampleWorkerBuild() {}

  public static final Path SOURCES = Path.of("examples/external-worker/src/main/java");
  public static final String MAIN = "io.fencekeeper.examples.worker.CleanupWorker";

  private static Path compiled;

  /** The directory of the example's classes, compiled once per JVM. */
  public static synchronized Path classes() {
    if (compiled != null) {
      return compiled;
    }
    Path out = Path.of("target/example-external-worker").toAbsolutePath();
    List<String> arguments = new ArrayList<>();
    try {
      Files.createDirectories(out);
      try (Stream<Path> files = Files.walk(SOURCES)) {
        arguments.addAll(
            List.of(
                "-d",
                out.toString(),
                "-classpath",
                System.getProperty("java.class.path"),
                "--release",
                "17",
                "-Xlint:none"));
        files.filter(f -> f.toString().endsWith(".java")).forEach(f -> arguments.add(f.toString()));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    int exit = javac.run(null, null, null, arguments.toArray(String[]::new));
    if (exit != 0) {
      throw new IllegalStateException("the example worker did not compile: javac exit " + exit);
    }
    compiled = out;
    return out;
  }
}
