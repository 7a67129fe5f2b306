package io.fencekeeper.testing;

import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.KeepApart;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.item.WorkItem.Reply;
import io.fencekeeper.item.WorkItem.Status;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * Items without a journal, for tests of the actors and loops that talk to them: every command is
 * recorded in the order it was sent, and answered as a healthy item would answer its holder (the
 * lease holder's commands are accepted; a claim finds nothing to claim). A test scripts the answers
 * it bends with {@link #answer}.
 */
public final class ScriptedItems implements ItemGateway {

  /** One command as sent: {@code detail} is the outcome, reason, error or lease it carried. */
  public record Command(String name, ItemId item, String workerId, long token, Object detail) {}

  public static final String CLAIM = "claim";
  public static final String CLAIM_ABANDONED = "claimAbandoned";
  public static final String RENEW = "renew";
  public static final String RECORD_EFFECT = "recordEffect";
  public static final String MARK_AMBIGUOUS = "markAmbiguous";
  public static final String COMPLETE = "complete";
  public static final String RECORD_EFFECT_AND_COMPLETE = "recordEffectAndComplete";
  public static final String FAIL = "fail";
  public static final String RELEASE = "release";
  public static final String CLOSE = "close";
  public static final String REOPEN = "reopen";
  public static final String RETRY = "retry";
  public static final String GET = "get";

  private final List<Command> commands = new CopyOnWriteArrayList<>();
  private final Map<String, Function<ItemId, CompletionStage<Reply>>> scripted =
      new ConcurrentHashMap<>();

  /** From now on, {@code command} (one of the names above) is answered by {@code answer}. */
  public ScriptedItems answer(String command, Function<ItemId, CompletionStage<Reply>> answer) {
    scripted.put(command, answer);
    return this;
  }

  /** As {@link #answer}, with an answer that is there at once. */
  public ScriptedItems answerNow(String command, Function<ItemId, Reply> answer) {
    return answer(command, item -> CompletableFuture.completedFuture(answer.apply(item)));
  }

  /** Every command sent so far, in order. */
  public List<Command> commands() {
    return List.copyOf(commands);
  }

  /** The names of the commands sent so far, in order. */
  public List<String> names() {
    return commands.stream().map(Command::name).toList();
  }

  /** The commands sent to {@code item}, in order. */
  public List<Command> commandsTo(ItemId item) {
    return commands.stream().filter(c -> c.item().equals(item)).toList();
  }

  // --- answers
  // ------------------------------------------------------------------------------------

  /** The item as its holder sees it after an accepted command. */
  public static ItemView view(ItemId item, Status status, long token, EffectStatus effect) {
    return new ItemView(
        item.value(),
        status,
        status == Status.LEASED ? "worker" : null,
        token,
        null,
        1,
        3,
        effect,
        null,
        null,
        status == Status.CLOSED ? "closed by the test" : null,
        null,
        item.idempotencyKey());
  }

  public static Reply accepted(ItemId item, Status status) {
    return new WorkItem.Accepted(view(item, status, 1, EffectStatus.NONE));
  }

  /** A granted claim with token {@code token}, the item's own idempotency key and this effect. */
  public static WorkItem.Claimed claimed(ItemId item, long token, EffectStatus effect) {
    return claimed(item, token, effect, null);
  }

  /** As {@link #claimed(ItemId, long, EffectStatus)}, saying from when a lookup is final. */
  public static WorkItem.Claimed claimed(
      ItemId item, long token, EffectStatus effect, Instant lookupAfter) {
    return new WorkItem.Claimed(
        item.value(),
        token,
        Instant.parse("2026-11-30T02:00:30Z"),
        1,
        effect,
        item.idempotencyKey(),
        false,
        view(item, Status.LEASED, token, effect),
        Set.of(),
        lookupAfter);
  }

  private CompletionStage<Reply> send(
      String name, ItemId item, String workerId, long token, Object detail, Reply healthy) {
    commands.add(new Command(name, item, workerId, token, detail));
    Function<ItemId, CompletionStage<Reply>> answer = scripted.get(name);
    return answer != null ? answer.apply(item) : CompletableFuture.completedFuture(healthy);
  }

  @Override
  public CompletionStage<Reply> claim(
      ItemId item, String workerId, Duration lease, int maxAttempts, KeepApart keepApart) {
    return send(
        CLAIM, item, workerId, 0, lease, new WorkItem.NotClaimable(Status.DONE, null, null));
  }

  @Override
  public void claimAbandoned(ItemId item, String workerId) {
    commands.add(new Command(CLAIM_ABANDONED, item, workerId, 0, null));
  }

  @Override
  public CompletionStage<Reply> renew(ItemId item, String workerId, long token, Duration lease) {
    return send(RENEW, item, workerId, token, lease, accepted(item, Status.LEASED));
  }

  @Override
  public CompletionStage<Reply> recordEffect(
      ItemId item, String workerId, long token, EffectOutcome outcome) {
    return send(
        RECORD_EFFECT,
        item,
        workerId,
        token,
        outcome,
        new WorkItem.Accepted(view(item, Status.LEASED, token, EffectStatus.RECORDED)));
  }

  @Override
  public CompletionStage<Reply> markAmbiguous(
      ItemId item, String workerId, long token, String reason) {
    return send(
        MARK_AMBIGUOUS,
        item,
        workerId,
        token,
        reason,
        new WorkItem.Accepted(view(item, Status.LEASED, token, EffectStatus.AMBIGUOUS)));
  }

  @Override
  public CompletionStage<Reply> complete(ItemId item, String workerId, long token) {
    return send(
        COMPLETE,
        item,
        workerId,
        token,
        null,
        new WorkItem.Accepted(view(item, Status.DONE, token, EffectStatus.RECORDED)));
  }

  /** Its {@code detail} is a {@link Recorded}. */
  @Override
  public CompletionStage<Reply> recordEffectAndComplete(
      ItemId item, String workerId, long token, EffectOutcome outcome, int throttles) {
    return send(
        RECORD_EFFECT_AND_COMPLETE,
        item,
        workerId,
        token,
        new Recorded(outcome, throttles),
        new WorkItem.Accepted(view(item, Status.DONE, token, EffectStatus.RECORDED)));
  }

  /** What a {@link #RECORD_EFFECT_AND_COMPLETE} carried. */
  public record Recorded(EffectOutcome outcome, int throttles) {}

  /** What a {@link #FAIL} carried. */
  public record Failure(String error, boolean retryable, Duration retryAfter, int throttles) {}

  @Override
  public CompletionStage<Reply> fail(
      ItemId item,
      String workerId,
      long token,
      String error,
      boolean retryable,
      Duration retryAfter,
      int throttles) {
    return send(
        FAIL,
        item,
        workerId,
        token,
        new Failure(error, retryable, retryAfter, throttles),
        accepted(item, retryable ? Status.PENDING : Status.FAILED));
  }

  @Override
  public CompletionStage<Reply> release(ItemId item, String workerId, long token) {
    return send(RELEASE, item, workerId, token, null, accepted(item, Status.PENDING));
  }

  @Override
  public CompletionStage<Reply> close(ItemId item, String reason) {
    return send(CLOSE, item, null, 0, reason, accepted(item, Status.CLOSED));
  }

  @Override
  public CompletionStage<Reply> reopen(ItemId item) {
    return send(REOPEN, item, null, 0, null, accepted(item, Status.PENDING));
  }

  @Override
  public CompletionStage<Reply> retry(ItemId item) {
    return send(RETRY, item, null, 0, null, accepted(item, Status.PENDING));
  }

  @Override
  public CompletionStage<Reply> get(ItemId item) {
    return send(GET, item, null, 0, null, accepted(item, Status.PENDING));
  }
}
