package io.fencekeeper.item;

import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.Reply;
import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * How workers, the dispatcher and the lease API talk to items: every command of docs/design.md,
 * "The work item", as an asynchronous request with a typed reply. A failed stage means the answer
 * is unknown (timeout, journal failure): the caller must assume nothing was written.
 */
public interface ItemGateway {

  /**
   * A claim; its answer is awaited for a short time only (a healthy item answers in milliseconds),
   * so a worker does not sit on an item whose node died. After a failed stage, call {@link
   * #claimAbandoned}.
   */
  default CompletionStage<Reply> claim(
      ItemId item, String workerId, Duration lease, int maxAttempts) {
    return claim(item, workerId, lease, maxAttempts, KeepApart.NOTHING);
  }

  /**
   * A claim of a node's own worker that keeps its node's loss cohorts apart (docs/design.md, "Lost
   * together, kept apart"): an item in one of them answers {@link WorkItem.KeptApart}.
   */
  CompletionStage<Reply> claim(
      ItemId item, String workerId, Duration lease, int maxAttempts, KeepApart keepApart);

  /**
   * A claim of the lease API with the client's {@code requestId} (null: none): the same worker
   * repeating it while the lease it was granted is the item's current one is answered that lease
   * again (docs/external-workers.md, "A claim that can be retried"). Keeps nothing apart.
   */
  default CompletionStage<Reply> claim(
      ItemId item, String workerId, Duration lease, int maxAttempts, String requestId) {
    if (requestId == null) {
      return claim(item, workerId, lease, maxAttempts, KeepApart.NOTHING);
    }
    throw new UnsupportedOperationException("this gateway does not pass request ids");
  }

  /**
   * Tells the item, without waiting, that the worker gave up on its claim's answer: a claim that
   * was granted after all goes back at once.
   */
  void claimAbandoned(ItemId item, String workerId);

  // the lease holder's commands name the worker that holds the lease and its token

  CompletionStage<Reply> renew(ItemId item, String workerId, long token, Duration lease);

  CompletionStage<Reply> recordEffect(
      ItemId item, String workerId, long token, EffectOutcome outcome);

  CompletionStage<Reply> markAmbiguous(ItemId item, String workerId, long token, String reason);

  CompletionStage<Reply> complete(ItemId item, String workerId, long token);

  /**
   * The effect record and the completion in one journal event (the worker's last step); {@code
   * throttles}: throttled answers the attempt met.
   */
  CompletionStage<Reply> recordEffectAndComplete(
      ItemId item, String workerId, long token, EffectOutcome outcome, int throttles);

  CompletionStage<Reply> fail(
      ItemId item,
      String workerId,
      long token,
      String error,
      boolean retryable,
      Duration retryAfter,
      int throttles);

  CompletionStage<Reply> release(ItemId item, String workerId, long token);

  CompletionStage<Reply> close(ItemId item, String reason);

  CompletionStage<Reply> reopen(ItemId item);

  CompletionStage<Reply> retry(ItemId item);

  CompletionStage<Reply> get(ItemId item);
}
