package io.fencekeeper.dispatch;

import java.util.function.Consumer;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.BehaviorInterceptor;
import org.apache.pekko.actor.typed.TypedActorContext;

/**
 * Tells someone why an actor failed, then lets it fail: a node's agent learns the cause of a
 * dispatcher's failure this way (a death watch says only that it stopped), and the coordinator puts
 * it in the run view when the run ends FAILED for it.
 */
final class CrashReport<T> extends BehaviorInterceptor<T, T> {

  private final Consumer<Throwable> report;

  CrashReport(Class<T> messages, Consumer<Throwable> report) {
    super(messages);
    this.report = report;
  }

  @Override
  public Behavior<T> aroundStart(TypedActorContext<T> ctx, PreStartTarget<T> target) {
    try {
      return target.start(ctx);
    } catch (RuntimeException e) {
      report.accept(e);
      throw e;
    }
  }

  @Override
  public Behavior<T> aroundReceive(TypedActorContext<T> ctx, T msg, ReceiveTarget<T> target) {
    try {
      return target.apply(ctx, msg);
    } catch (RuntimeException e) {
      report.accept(e);
      throw e;
    }
  }
}
