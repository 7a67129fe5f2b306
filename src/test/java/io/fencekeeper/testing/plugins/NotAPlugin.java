package io.fencekeeper.testing.plugins;

/** A public class that does not implement the plugin API. */
public class NotAPlugin {
  public NotAPlugin() {}
}
