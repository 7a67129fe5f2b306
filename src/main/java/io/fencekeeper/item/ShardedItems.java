package io.fencekeeper.item;

import io.fencekeeper.Stages;
import io.fencekeeper.item.WorkItem.EffectOutcome;
import io.fencekeeper.item.WorkItem.Reply;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.typed.Cluster;

/** The item gateway over Cluster Sharding: each item lives on whichever node owns its shard. */
public final class ShardedItems implements ItemGateway {

  private final ClusterSharding sharding;
  private final Duration askTimeout;
  private final Duration claimTimeout;
  private final Executor executor;
  private final ActorRef<Reply> nobody;
  private final String ownWorkers;
  private final long incarnation;

  /**
   * The gateway of the lease API and the coordinator: its claims name no node, so a holder that
   * goes silent counts as lost whatever its worker id says (an API caller must not borrow a node's
   * standing by naming itself after the node's workers). {@code askTimeout} for a lease holder's
   * commands (it may retry them until its lease ends); {@code claimTimeout}, shorter, for claims
   * (nothing depends on one yet).
   */
  public ShardedItems(ActorSystem<?> system, Duration askTimeout, Duration claimTimeout) {
    this(system, askTimeout, claimTimeout, false);
  }

  /**
   * The gateway of this node's own worker pool: its workers' claims carry this node's incarnation
   * (its cluster uid), so an item can tell later whether a silent holder's node is still a member
   * (docs/design.md, "Lost holders count").
   */
  public static ShardedItems forOwnWorkers(
      ActorSystem<?> system, Duration askTimeout, Duration claimTimeout) {
    return new ShardedItems(system, askTimeout, claimTimeout, true);
  }

  private ShardedItems(
      ActorSystem<?> system, Duration askTimeout, Duration claimTimeout, boolean ownWorkers) {
    this.sharding = ClusterSharding.get(system);
    this.executor = system.executionContext();
    this.askTimeout = askTimeout;
    this.claimTimeout = claimTimeout;
    this.nobody = system.ignoreRef();
    UniqueAddress self = Cluster.get(system).selfMember().uniqueAddress();
    this.ownWorkers = NodeWorkers.prefix(self.address().toString());
    this.incarnation = ownWorkers ? self.longUid() : 0;
  }

  private CompletionStage<Reply> ask(
      ItemId item, Function<ActorRef<Reply>, WorkItem.Command> command) {
    return ask(item, command, askTimeout);
  }

  private CompletionStage<Reply> ask(
      ItemId item, Function<ActorRef<Reply>, WorkItem.Command> command, Duration timeout) {
    return Stages.on(
        sharding.entityRefFor(WorkItem.ENTITY_TYPE_KEY, item.value()).ask(command::apply, timeout),
        executor);
  }

  @Override
  public CompletionStage<Reply> claim(
      ItemId item, String workerId, Duration lease, int maxAttempts, KeepApart keepApart) {
    // only this node's worker pool names its node, and only for ids of its own form: a lease API
    // worker's node is not known (0)
    long node = incarnation != 0 && workerId.startsWith(ownWorkers) ? incarnation : 0;
    return ask(
        item,
        r -> new WorkItem.Claim(workerId, lease, maxAttempts, node, keepApart, r),
        claimTimeout);
  }

  @Override
  public CompletionStage<Reply> claim(
      ItemId item, String workerId, Duration lease, int maxAttempts, String requestId) {
    // a lease API worker's node is not known (0), whatever its worker id says
    return ask(
        item,
        r -> new WorkItem.Claim(workerId, lease, maxAttempts, 0, KeepApart.NOTHING, requestId, r),
        claimTimeout);
  }

  @Override
  public void claimAbandoned(ItemId item, String workerId) {
    sharding
        .entityRefFor(WorkItem.ENTITY_TYPE_KEY, item.value())
        .tell(new WorkItem.ClaimAbandoned(workerId, nobody));
  }

  @Override
  public CompletionStage<Reply> renew(ItemId item, String workerId, long token, Duration lease) {
    return ask(item, r -> new WorkItem.Renew(workerId, token, lease, r));
  }

  @Override
  public CompletionStage<Reply> recordEffect(
      ItemId item, String workerId, long token, EffectOutcome outcome) {
    return ask(item, r -> new WorkItem.RecordEffect(workerId, token, outcome, r));
  }

  @Override
  public CompletionStage<Reply> markAmbiguous(
      ItemId item, String workerId, long token, String reason) {
    return ask(item, r -> new WorkItem.MarkAmbiguous(workerId, token, reason, r));
  }

  @Override
  public CompletionStage<Reply> complete(ItemId item, String workerId, long token) {
    return ask(item, r -> new WorkItem.Complete(workerId, token, r));
  }

  @Override
  public CompletionStage<Reply> recordEffectAndComplete(
      ItemId item, String workerId, long token, EffectOutcome outcome, int throttles) {
    return ask(
        item, r -> new WorkItem.RecordEffectAndComplete(workerId, token, outcome, throttles, r));
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
    return ask(
        item, r -> new WorkItem.Fail(workerId, token, error, retryable, retryAfter, throttles, r));
  }

  @Override
  public CompletionStage<Reply> release(ItemId item, String workerId, long token) {
    return ask(item, r -> new WorkItem.Release(workerId, token, r));
  }

  @Override
  public CompletionStage<Reply> close(ItemId item, String reason) {
    return ask(item, r -> new WorkItem.Close(reason, r));
  }

  @Override
  public CompletionStage<Reply> reopen(ItemId item) {
    return ask(item, WorkItem.Reopen::new);
  }

  @Override
  public CompletionStage<Reply> retry(ItemId item) {
    return ask(item, WorkItem.Retry::new);
  }

  @Override
  public CompletionStage<Reply> get(ItemId item) {
    return ask(item, WorkItem.Get::new);
  }
}
