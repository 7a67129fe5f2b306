package io.fencekeeper.run.scope;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * The one directory a node reads CSV scopes from ({@code fencekeeper.scope-dir}). A request names a
 * file relative to it; whatever the name, the file read is inside it. Anything that leads out
 * ({@code ..}, an absolute path elsewhere, a symbolic link pointing out) is refused with one answer
 * that does not depend on whether the outside file exists, so the API cannot be used to probe the
 * server's disk.
 */
final class ScopeDirectory {

  static final String FIELD = "scope.path";

  private final Path root;

  ScopeDirectory(Path root) {
    this.root = root.toAbsolutePath().normalize();
  }

  /** The real path of a regular file inside the directory, or a {@link ScopeException}. */
  Path resolve(String name) {
    Path candidate;
    try {
      candidate = root.resolve(name).normalize();
    } catch (InvalidPathException e) {
      throw outside(name);
    }
    // lexical check first: an outside path is refused before the disk is asked anything
    if (!candidate.startsWith(root) || candidate.equals(root)) {
      throw outside(name);
    }
    Path realRoot;
    try {
      realRoot = root.toRealPath();
    } catch (IOException e) {
      throw new ScopeException(
          "scope.path does not exist: the scope directory has not been created");
    }
    Path real;
    try {
      real = candidate.toRealPath();
    } catch (NoSuchFileException e) {
      throw new ScopeException(
          "scope.path does not exist in the scope directory (fencekeeper.scope-dir)");
    } catch (IOException e) {
      throw new ScopeException("scope.path cannot be opened");
    }
    // a symbolic link inside may point anywhere: the real path decides
    if (!real.startsWith(realRoot)) {
      throw outside(name);
    }
    if (!Files.isRegularFile(real)) {
      throw new ScopeException("scope.path is not a regular file");
    }
    return real;
  }

  private static ScopeRefused outside(String name) {
    return new ScopeRefused(
        FIELD,
        "scope.path must name a file inside the node's scope directory (fencekeeper.scope-dir),"
            + " relative to it");
  }
}
