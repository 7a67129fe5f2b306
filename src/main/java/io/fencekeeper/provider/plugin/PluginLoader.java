package io.fencekeeper.provider.plugin;

import io.fencekeeper.sdk.provider.CleanupProvider;
import io.fencekeeper.sdk.provider.Guarantees;
import io.fencekeeper.sdk.provider.ProviderContext;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Modifier;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Loads a provider plugin (docs/design.md, "The provider boundary"): its class in a class loader of
 * its own over the jars of its directory, whose parent shows it the JDK (the platform class loader)
 * and the provider API's package only, never the node's libraries; then one instance, through its
 * public constructor taking a {@link ProviderContext} or none. Every way this can go wrong is a
 * {@link PluginProblem} of one line naming the class and what it did.
 */
public final class PluginLoader {

  /** The package a plugin sees of the node: the API, not its sub-packages. */
  static final String API_PACKAGE = CleanupProvider.class.getPackageName() + ".";

  private PluginLoader() {}

  /** A plugin instance, its class loader (closed with it) and what it claims. */
  public record Loaded(
      CleanupProvider plugin, URLClassLoader loader, String className, Guarantees guarantees) {}

  /** Loads the plugin of provider {@code name}; throws {@link PluginProblem}. */
  public static Loaded load(String name, PluginSettings settings) {
    String className = settings.className();
    List<Path> jars = jars(name, settings.path());
    URLClassLoader loader =
        new URLClassLoader(
            "fencekeeper-plugin-" + name,
            urls(jars),
            new ApiOnly(PluginLoader.class.getClassLoader()));
    try {
      CleanupProvider plugin = construct(name, settings, loader, jars);
      Guarantees guarantees = guarantees(plugin, className, loader);
      return new Loaded(plugin, loader, className, guarantees);
    } catch (RuntimeException | Error e) {
      closeQuietly(loader);
      throw e;
    }
  }

  private static CleanupProvider construct(
      String name, PluginSettings settings, URLClassLoader loader, List<Path> jars) {
    String className = settings.className();
    String plugin = "provider " + name + ": plugin " + className;
    Class<?> type;
    try {
      type = Class.forName(className, false, loader);
    } catch (ClassNotFoundException e) {
      throw new PluginProblem(
          plugin + " was not found in " + settings.path() + " (" + jars.size() + " jars)");
    } catch (LinkageError e) {
      throw new PluginProblem(plugin + " cannot be loaded: " + PluginProblem.said(e));
    }
    if (!CleanupProvider.class.isAssignableFrom(type)) {
      throw new PluginProblem(
          plugin + " does not implement " + CleanupProvider.class.getName() + " (API 1.x)");
    }
    if (!Modifier.isPublic(type.getModifiers())
        || Modifier.isAbstract(type.getModifiers())
        || type.isInterface()) {
      throw new PluginProblem(plugin + " is not a public concrete class");
    }
    Constructor<?> constructor = constructor(type, plugin);
    ClassLoader nodeLoader = Thread.currentThread().getContextClassLoader();
    Thread.currentThread().setContextClassLoader(loader);
    try {
      Object instance =
          constructor.getParameterCount() == 1
              ? constructor.newInstance(new ProviderContext(name, settings.settings()))
              : constructor.newInstance();
      return (CleanupProvider) instance;
    } catch (InvocationTargetException e) {
      throw new PluginProblem(
          plugin + ": its constructor threw " + PluginProblem.said(e.getCause()));
    } catch (ExceptionInInitializerError e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      throw new PluginProblem(
          plugin + ": its static initializer threw " + PluginProblem.said(cause));
    } catch (LinkageError e) {
      throw new PluginProblem(plugin + " cannot be linked: " + PluginProblem.said(e));
    } catch (ReflectiveOperationException e) {
      throw new PluginProblem(plugin + " cannot be constructed: " + PluginProblem.said(e));
    } finally {
      Thread.currentThread().setContextClassLoader(nodeLoader);
    }
  }

  private static Constructor<?> constructor(Class<?> type, String plugin) {
    try {
      return type.getConstructor(ProviderContext.class);
    } catch (NoSuchMethodException noContext) {
      try {
        return type.getConstructor();
      } catch (NoSuchMethodException none) {
        throw new PluginProblem(
            plugin
                + " has no public constructor taking a "
                + ProviderContext.class.getSimpleName()
                + ", nor one without arguments");
      }
    }
  }

  private static Guarantees guarantees(
      CleanupProvider plugin, String className, ClassLoader loader) {
    ClassLoader nodeLoader = Thread.currentThread().getContextClassLoader();
    Thread.currentThread().setContextClassLoader(loader);
    try {
      Guarantees guarantees = plugin.guarantees();
      if (guarantees == null) {
        throw new PluginProblem("plugin " + className + ": guarantees() returned null");
      }
      return guarantees;
    } catch (PluginProblem e) {
      throw e;
    } catch (RuntimeException | LinkageError e) {
      throw new PluginProblem(
          "plugin " + className + ": guarantees() threw " + PluginProblem.said(e));
    } finally {
      Thread.currentThread().setContextClassLoader(nodeLoader);
    }
  }

  /** The jars of {@code path}: its {@code *.jar} files in name order, or the one jar it is. */
  static List<Path> jars(String name, Path path) {
    String where = "provider " + name + ": plugin path " + path;
    if (Files.isRegularFile(path) && path.getFileName().toString().endsWith(".jar")) {
      return List.of(path);
    }
    if (!Files.isDirectory(path)) {
      throw new PluginProblem(where + " is neither a directory nor a .jar file");
    }
    List<Path> jars = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(path, "*.jar")) {
      for (Path jar : entries) {
        if (Files.isRegularFile(jar)) {
          jars.add(jar);
        }
      }
    } catch (IOException e) {
      throw new PluginProblem(where + " cannot be read: " + PluginProblem.said(e));
    }
    if (jars.isEmpty()) {
      throw new PluginProblem(where + " has no .jar files");
    }
    jars.sort(null);
    return jars;
  }

  private static URL[] urls(List<Path> jars) {
    URL[] urls = new URL[jars.size()];
    for (int i = 0; i < urls.length; i++) {
      try {
        urls[i] = jars.get(i).toUri().toURL();
      } catch (MalformedURLException e) {
        throw new PluginProblem("plugin jar " + jars.get(i) + " has no URL: " + e.getMessage());
      }
    }
    return urls;
  }

  public static void closeQuietly(URLClassLoader loader) {
    try {
      loader.close();
    } catch (IOException ignored) {
      // the jars stay open until the JVM ends: nothing else to do
    }
  }

  /**
   * The parent of a plugin's class loader: the JDK's classes (the platform class loader, not the
   * node's class path) and the provider API's package, from the node, so that the plugin and the
   * node agree on what a {@link CleanupProvider} is. Nothing else of the node can be loaded through
   * it: not Pekko, not Jackson, not the node's JDBC drivers.
   */
  static final class ApiOnly extends ClassLoader {

    static {
      registerAsParallelCapable();
    }

    private final ClassLoader node;

    ApiOnly(ClassLoader node) {
      super("fencekeeper-provider-api", ClassLoader.getPlatformClassLoader());
      this.node = node;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (name.startsWith(API_PACKAGE) && name.indexOf('.', API_PACKAGE.length()) < 0) {
        return node.loadClass(name);
      }
      return super.loadClass(name, resolve);
    }
  }
}
