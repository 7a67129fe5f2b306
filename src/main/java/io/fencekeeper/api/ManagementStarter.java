package io.fencekeeper.api;

import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.model.Uri;
import org.apache.pekko.management.javadsl.PekkoManagement;

/**
 * Starts Pekko Management on its own port ({@code pekko.management.http.port}, 8558 by default):
 * {@code /cluster/members}, {@code /health/ready} (with {@link JournalReadinessCheck}) and {@code
 * /health/alive}. Read-only: {@code route-providers-read-only = true} in conf/.
 */
public final class ManagementStarter {

  private ManagementStarter() {}

  /** Completes with the address Management listens on. */
  public static CompletionStage<Uri> start(ActorSystem<?> system) {
    return PekkoManagement.get(system.classicSystem()).start();
  }
}
