package io.fencekeeper.testing;

import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.KeepApart;
import io.fencekeeper.item.WorkItem;
import java.time.Duration;
import java.util.concurrent.CompletionStage;

/** Passes every call through to a real gateway; a test overrides the one it bends. */
public class ForwardingItemGateway implements ItemGateway {
  private final ItemGateway items;

  public ForwardingItemGateway(ItemGateway items) {
    this.items = items;
  }

  @Override
  public CompletionStage<WorkItem.Reply> claim(
      ItemId item, String workerId, Duration lease, int maxAttempts, KeepApart keepApart) {
    return items.claim(item, workerId, lease, maxAttempts, keepApart);
  }

  @Override
  public CompletionStage<WorkItem.Reply> claim(
      ItemId item, String workerId, Duration lease, int maxAttempts, String requestId) {
    return items.claim(item, workerId, lease, maxAttempts, requestId);
  }

  @Override
  public void claimAbandoned(ItemId item, String workerId) {
    items.claimAbandoned(item, workerId);
  }

  @Override
  public CompletionStage<WorkItem.Reply> renew(
      ItemId item, String workerId, long token, Duration lease) {
    return items.renew(item, workerId, token, lease);
  }

  @Override
  public CompletionStage<WorkItem.Reply> recordEffect(
      ItemId item, String workerId, long token, WorkItem.EffectOutcome outcome) {
    return items.recordEffect(item, workerId, token, outcome);
  }

  @Override
  public CompletionStage<WorkItem.Reply> markAmbiguous(
      ItemId item, String workerId, long token, String reason) {
    return items.markAmbiguous(item, workerId, token, reason);
  }

  @Override
  public CompletionStage<WorkItem.Reply> complete(ItemId item, String workerId, long token) {
    return items.complete(item, workerId, token);
  }

  @Override
  public CompletionStage<WorkItem.Reply> recordEffectAndComplete(
      ItemId item, String workerId, long token, WorkItem.EffectOutcome outcome, int throttles) {
    return items.recordEffectAndComplete(item, workerId, token, outcome, throttles);
  }

  @Override
  public CompletionStage<WorkItem.Reply> fail(
      ItemId item,
      String workerId,
      long token,
      String error,
      boolean retryable,
      Duration retryAfter,
      int throttles) {
    return items.fail(item, workerId, token, error, retryable, retryAfter, throttles);
  }

  @Override
  public CompletionStage<WorkItem.Reply> release(ItemId item, String workerId, long token) {
    return items.release(item, workerId, token);
  }

  @Override
  public CompletionStage<WorkItem.Reply> close(ItemId item, String reason) {
    return items.close(item, reason);
  }

  @Override
  public CompletionStage<WorkItem.Reply> reopen(ItemId item) {
    return items.reopen(item);
  }

  @Override
  public CompletionStage<WorkItem.Reply> retry(ItemId item) {
    return items.retry(item);
  }

  @Override
  public CompletionStage<WorkItem.Reply> get(ItemId item) {
    return items.get(item);
  }
}
