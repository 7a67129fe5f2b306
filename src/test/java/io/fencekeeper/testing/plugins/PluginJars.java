package io.fencekeeper.testing.plugins;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;

/**
 * Test plugins as an operator deploys them: their compiled classes (and their nested ones) in a jar
 * of their own, in a directory a node loads from.
 */
public final class PluginJars {

  private PluginJars() {}

  /** {@code dir/plugins.jar} with every test plugin of this package; returns {@code dir}. */
  public static Path directoryWithTestPlugins(Path dir) {
    return directoryWith(
        dir,
        LedgerPlugin.class,
        TwiceApplyingPlugin.class,
        ForgetfulLookupPlugin.class,
        LateCommittingPlugin.class,
        UnfencedPlugin.class,
        MisbehavingPlugin.class,
        ProbingPlugin.class,
        NullGuaranteesPlugin.class,
        NotAPlugin.class);
  }

  /** {@code dir/plugins.jar} with {@code classes} and their nested classes; returns {@code dir}. */
  public static Path directoryWith(Path dir, Class<?>... classes) {
    try {
      Files.createDirectories(dir);
      try (OutputStream file = Files.newOutputStream(dir.resolve("plugins.jar"));
          JarOutputStream jar = new JarOutputStream(file)) {
        Set<String> written = new LinkedHashSet<>();
        for (Class<?> type : classes) {
          for (Path classFile : classFiles(type)) {
            String entry = type.getPackageName().replace('.', '/') + "/" + classFile.getFileName();
            if (written.add(entry)) {
              jar.putNextEntry(new JarEntry(entry));
              try (InputStream in = Files.newInputStream(classFile)) {
                in.transferTo(jar);
              }
              jar.closeEntry();
            }
          }
        }
      }
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Set<Path> classFiles(Class<?> type) throws IOException {
    Path own;
    try {
      own = Path.of(type.getResource(type.getSimpleName() + ".class").toURI());
    } catch (URISyntaxException e) {
      throw new IOException(e);
    }
    Set<Path> files = new LinkedHashSet<>();
    files.add(own);
    try (DirectoryStream<Path> nested =
        Files.newDirectoryStream(own.getParent(), type.getSimpleName() + "$*.class")) {
      nested.forEach(files::add);
    }
    return files;
  }
}
