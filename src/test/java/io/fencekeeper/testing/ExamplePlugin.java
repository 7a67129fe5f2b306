package io.fencekeeper.testing;

import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * The example plugin of {@code examples/postgres-provider}, built the way its own build would but
 * without Maven or the SDK in {@code ~/.m2}: its sources compiled by the JDK's compiler against
 * this build's classes (the API is a main source root) and the test class path's libraries, into
 * {@code target/example-postgres-provider/<pid>/}. {@link #pluginDirectory()} is what an operator
 * deploys: the example's jar and its PostgreSQL driver.
 */
public final class ExamplePlugin {

  /** The example's class, as an operator names it. */
  public static final String CLASS = "com.example.cleanup.PostgresCleanupProvider";

  /** The example's test, which extends the test kit. */
  public static final String TEST_CLASS = "com.example.cleanup.PostgresCleanupProviderTest";

  static final Path EXAMPLE = Path.of("examples/postgres-provider").toAbsolutePath();

  private static Built built;

  /** Where it was built: its plugin directory, and its test classes. */
  public record Built(Path pluginDirectory, Path mainClasses, Path testClasses) {}

  private ExamplePlugin() {}

  /** Built once per test JVM. */
  public static synchronized Built build() {
    if (built == null) {
      built =
          compile(Path.of("target/example-postgres-provider", "" + ProcessHandle.current().pid()));
    }
    return built;
  }

  public static Path pluginDirectory() {
    return build().pluginDirectory();
  }

  /**
   * The example's {@code account_residual} table in {@code db}, with a residual in EUR cents for
   * each account ({@code residuals}: account id to amount), what an operator fills before a night.
   */
  public static void seedResiduals(TestDatabases.Target db, Map<String, Long> residuals)
      throws SQLException {
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        Statement ddl = c.createStatement()) {
      ddl.execute(
          "CREATE TABLE IF NOT EXISTS account_residual (account_id VARCHAR(128) PRIMARY KEY,"
              + " amount_minor BIGINT NOT NULL, currency CHAR(3) NOT NULL)");
      try (PreparedStatement seed =
          c.prepareStatement(
              "INSERT INTO account_residual (account_id, amount_minor, currency) VALUES (?, ?,"
                  + " 'EUR')")) {
        for (Map.Entry<String, Long> residual : residuals.entrySet()) {
          seed.setString(1, residual.getKey());
          seed.setLong(2, residual.getValue());
          seed.addBatch();
        }
        seed.executeBatch();
      }
    }
  }

  /** The test class path (surefire's, not its booter jar's). */
  public static String testClassPath() {
    return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
  }

  private static Built compile(Path root) {
    try {
      Path mainClasses = Files.createDirectories(root.resolve("classes"));
      Path testClasses = Files.createDirectories(root.resolve("test-classes"));
      Path plugin = Files.createDirectories(root.resolve("plugin"));
      javac(EXAMPLE.resolve("src/main/java"), mainClasses, testClassPath());
      javac(
          EXAMPLE.resolve("src/test/java"),
          testClasses,
          mainClasses + java.io.File.pathSeparator + testClassPath());
      jar(mainClasses, plugin.resolve("postgres-cleanup-provider-1.0.0.jar"));
      Path driver =
          Path.of(
              org.postgresql.Driver.class
                  .getProtectionDomain()
                  .getCodeSource()
                  .getLocation()
                  .toURI());
      Files.copy(driver, plugin.resolve(driver.getFileName()), StandardCopyOption.REPLACE_EXISTING);
      return new Built(
          plugin.toAbsolutePath(), mainClasses.toAbsolutePath(), testClasses.toAbsolutePath());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void javac(Path sources, Path into, String classPath) throws IOException {
    List<String> options = List.of("--release", "17", "-d", into.toString(), "-cp", classPath);
    List<String> files;
    try (Stream<Path> walk = Files.walk(sources)) {
      files = walk.map(Path::toString).filter(f -> f.endsWith(".java")).toList();
    }
    JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
    StringWriter errors = new StringWriter();
    try (var fileManager = compiler.getStandardFileManager(null, null, null)) {
      boolean compiled =
          compiler
              .getTask(
                  errors,
                  fileManager,
                  null,
                  options,
                  null,
                  fileManager.getJavaFileObjectsFromStrings(files))
              .call();
      if (!compiled) {
        throw new IllegalStateException("the example does not compile:\n" + errors);
      }
    }
  }

  private static void jar(Path classes, Path jar) throws IOException {
    try (OutputStream file = Files.newOutputStream(jar);
        JarOutputStream out = new JarOutputStream(file);
        Stream<Path> entries = Files.walk(classes)) {
      for (Path entry : (Iterable<Path>) entries.filter(Files::isRegularFile)::iterator) {
        out.putNextEntry(new JarEntry(classes.relativize(entry).toString().replace('\\', '/')));
        Files.copy(entry, out);
        out.closeEntry();
      }
    }
  }
}
