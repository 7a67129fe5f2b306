package io.fencekeeper.api.ops;

import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.model.Uri;
import org.apache.pekko.management.cluster.bootstrap.ClusterBootstrap;
import org.apache.pekko.management.javadsl.PekkoManagement;

/**
 * Starts Pekko Management on its own port ({@code pekko.management.http.port}, 8558 by default):
 * {@code /cluster/members}, {@code /health/ready} (with {@link JournalReadinessCheck}), {@code
 * /health/alive} and, with Cluster Bootstrap, {@code /bootstrap/seed-nodes} (what other nodes'
 * bootstrap asks a contact point). Read-only: {@code route-providers-read-only = true} in conf/.
 */
public final class ManagementStarter {

  private ManagementStarter() {}

  /**
   * Completes with the address Management listens on. With {@code bootstrap}, Cluster Bootstrap
   * starts too: it looks up the contact points (conf/kubernetes.conf: pods through the Kubernetes
   * API), joins the cluster one of them reports, or, when none reports one and at least {@code
   * required-contact-point-nr} answer, the one with the lowest address forms it.
   */
  public static CompletionStage<Uri> start(ActorSystem<?> system, boolean bootstrap) {
    CompletionStage<Uri> started = PekkoManagement.get(system.classicSystem()).start();
    if (bootstrap) {
      ClusterBootstrap.get(system.classicSystem()).start();
    }
    return started;
  }
}
