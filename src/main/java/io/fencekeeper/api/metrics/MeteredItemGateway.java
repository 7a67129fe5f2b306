package io.fencekeeper.api.metrics;

import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.KeepApart;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.Reply;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * An {@link ItemGateway} that counts what passes through it: claims by outcome, stale rejections,
 * takeovers of expired leases and the latency of every item command. Wraps the node's gateway for
 * the lease API, and the workers' gateway through {@code FencekeeperNode.Builder.workerGateway}.
 */
public final class MeteredItemGateway implements ItemGateway {

  private final ItemGateway delegate;
  private final ApiMetrics metrics;
  private final String source;

  public MeteredItemGateway(ItemGateway delegate, ApiMetrics metrics, String source) {
    this.delegate = delegate;
    this.metrics = metrics;
    this.source = source;
  }

  private CompletionStage<Reply> observe(String command, Supplier<CompletionStage<Reply>> call) {
    long start = System.nanoTime();
    return call.get()
        .whenComplete(
            (reply, failure) -> {
              String outcome = failure != null ? "unanswered" : outcomeOf(reply);
              metrics.itemCommand(command, outcome, Duration.ofNanos(System.nanoTime() - start));
              // stale rejections and takeovers are counted per run from the journal, not here:
              // this node sees only its own commands
              if (command.equals("claim")) {
                metrics.claim(source, outcome);
              }
            });
  }

  static String outcomeOf(Reply reply) {
    if (reply instanceof WorkItem.Claimed) {
      return "claimed";
    } else if (reply instanceof WorkItem.Accepted) {
      return "accepted";
    } else if (reply instanceof WorkItem.LeaseLost) {
      return "lease_lost";
    } else if (reply instanceof WorkItem.LeaseHeld) {
      return "lease_held";
    } else if (reply instanceof WorkItem.NotClaimable) {
      return "not_claimable";
    } else if (reply instanceof WorkItem.KeptApart) {
      return "kept_apart";
    }
    return "invalid";
  }

  @Override
  public CompletionStage<Reply> claim(
      ItemId item, String workerId, Duration lease, int maxAttempts, KeepApart keepApart) {
    return observe("claim", () -> delegate.claim(item, workerId, lease, maxAttempts, keepApart));
  }

  @Override
  public CompletionStage<Reply> claim(
      ItemId item, String workerId, Duration lease, int maxAttempts, String requestId) {
    return observe("claim", () -> delegate.claim(item, workerId, lease, maxAttempts, requestId));
  }

  @Override
  public void claimAbandoned(ItemId item, String workerId) {
    delegate.claimAbandoned(item, workerId);
  }

  @Override
  public CompletionStage<Reply> renew(ItemId item, String workerId, long token, Duration lease) {
    return observe("renew", () -> delegate.renew(item, workerId, token, lease));
  }

  @Override
  public CompletionStage<Reply> recordEffect(
      ItemId item, String workerId, long token, EffectOutcome outcome) {
    return observe("effect", () -> delegate.recordEffect(item, workerId, token, outcome));
  }

  @Override
  public CompletionStage<Reply> markAmbiguous(
      ItemId item, String workerId, long token, String reason) {
    return observe("ambiguous", () -> delegate.markAmbiguous(item, workerId, token, reason));
  }

  @Override
  public CompletionStage<Reply> complete(ItemId item, String workerId, long token) {
    return observe("complete", () -> delegate.complete(item, workerId, token));
  }

  @Override
  public CompletionStage<Reply> recordEffectAndComplete(
      ItemId item, String workerId, long token, WorkItem.EffectOutcome outcome, int throttles) {
    return observe(
        "record_effect_and_complete",
        () -> delegate.recordEffectAndComplete(item, workerId, token, outcome, throttles));
  }

  @Override
  public CompletionStage<Reply> fail(
      ItemId item,
      String workerId,
      long token,
      String error,
      boolean retryable,
      Duration retryAfter,
      int throttles) {
    return observe(
        "fail",
        () -> delegate.fail(item, workerId, token, error, retryable, retryAfter, throttles));
  }

  @Override
  public CompletionStage<Reply> release(ItemId item, String workerId, long token) {
    return observe("release", () -> delegate.release(item, workerId, token));
  }

  @Override
  public CompletionStage<Reply> close(ItemId item, String reason) {
    return observe("close", () -> delegate.close(item, reason));
  }

  @Override
  public CompletionStage<Reply> reopen(ItemId item) {
    return observe("reopen", () -> delegate.reopen(item));
  }

  @Override
  public CompletionStage<Reply> retry(ItemId item) {
    return observe("retry", () -> delegate.retry(item));
  }

  @Override
  public CompletionStage<Reply> get(ItemId item) {
    return observe("get", () -> delegate.get(item));
  }
}
