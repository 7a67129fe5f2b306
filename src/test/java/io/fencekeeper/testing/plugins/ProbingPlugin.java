package io.fencekeeper.testing.plugins;

import io.fencekeeper.sdk.provider.Guarantees;
import io.fencekeeper.sdk.provider.Item;
import io.fencekeeper.sdk.provider.Plan;
import io.fencekeeper.sdk.provider.ProviderContext;

/**
 * A ledger whose plan says where it runs and what it can see: its thread, whether that thread's
 * context class loader is the plugin's own, the settings it was given, and which of the node's
 * classes its class loader can load ({@code visible} or {@code hidden} for each).
 */
public class ProbingPlugin extends LedgerPlugin {

  private final ProviderContext context;

  public ProbingPlugin(ProviderContext context) {
    this.context = context;
  }

  @Override
  public Guarantees guarantees() {
    return Guarantees.ALL;
  }

  @Override
  public Plan plan(Item item) {
    Thread thread = Thread.currentThread();
    String seen =
        "thread="
            + thread.getName()
            + " ownContextLoader="
            + (thread.getContextClassLoader() == getClass().getClassLoader())
            + " name="
            + context.name()
            + " settings="
            + context.settings()
            + " pekko="
            + visible("org.apache.pekko.actor.ActorSystem")
            + " jackson="
            + visible("com.fasterxml.jackson.databind.ObjectMapper")
            + " fencekeeper="
            + visible("io.fencekeeper.provider.Provider")
            + " checks="
            + visible("io.fencekeeper.sdk.provider.check.ProviderChecks")
            + " api="
            + visible("io.fencekeeper.sdk.provider.CleanupProvider")
            + " jdk="
            + visible("java.sql.Connection");
    return Plan.action("write-off", 1, "EUR", seen);
  }

  private String visible(String className) {
    try {
      Class.forName(className, false, getClass().getClassLoader());
      return "visible";
    } catch (ClassNotFoundException e) {
      return "hidden";
    }
  }
}
