package io.fencekeeper.worker;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.ProviderName;
import io.fencekeeper.provider.budget.ThrottleShare;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;

/**
 * The work protocol between a run's dispatchers (one per node) and the worker pools (work pulling):
 * a pool asks a dispatcher for up to N items, gets one {@link WorkBatch} back, and reports how each
 * attempt ended with {@link Settled}. Dispatchers are found through the receptionist under {@link
 * #SERVICE_KEY}. A pool works for its own node's dispatchers; a message crosses the network only
 * when a pool steals from another node's dispatcher.
 */
public final class WorkProtocol {

  private WorkProtocol() {}

  /**
   * What a dispatcher accepts from pools. Not sealed: the dispatcher (a layer above) adds its own
   * internal messages to the same mailbox.
   */
  public interface ToDispatcher extends CborSerializable {}

  /** Every running run's dispatcher registers here; pools subscribe to the listing. */
  public static final ServiceKey<ToDispatcher> SERVICE_KEY =
      ServiceKey.create(ToDispatcher.class, "run-dispatcher");

  /** The dispatcher of one run, for callers that want that run only (the claim-next API). */
  public static ServiceKey<ToDispatcher> serviceKeyOf(String runId) {
    return ServiceKey.create(ToDispatcher.class, "run-dispatcher:" + runId);
  }

  /**
   * A pool asks for up to {@code max} items; it gets exactly one {@link WorkBatch} back, held until
   * work is ready unless {@code answerNow} (the external lease API must not hang). A {@code steal}
   * is a pool's request to another node's dispatcher: answered at once, with what that node's own
   * pool cannot take now (none, full, or leaving), so items stay on the node that hosts them.
   */
  public record RequestWork(int max, boolean answerNow, boolean steal, ActorRef<WorkBatch> replyTo)
      implements ToDispatcher {
    public RequestWork(int max, ActorRef<WorkBatch> replyTo) {
      this(max, false, false, replyTo);
    }

    public RequestWork(int max, boolean answerNow, ActorRef<WorkBatch> replyTo) {
      this(max, answerNow, false, replyTo);
    }

    /** A steal: at once, and only what the dispatcher's own node cannot take. */
    public static RequestWork steal(int max, ActorRef<WorkBatch> replyTo) {
      return new RequestWork(max, true, true, replyTo);
    }
  }

  /**
   * A pool whose node is shutting down takes no more work: its open {@link RequestWork} is void and
   * nothing more may be offered to it ({@code pool} is the {@code replyTo} of its requests). The
   * attempts it still runs report with {@link Settled} as usual.
   */
  public record PoolLeaving(ActorRef<WorkBatch> pool) implements ToDispatcher {}

  /**
   * A pool reports how the attempt at item {@code seq} ended. What the attempt met on the way
   * (throttling, a takeover, a reconciliation) is in the item's journal, not here.
   */
  public record Settled(int seq, AttemptResult result) implements ToDispatcher {}

  /**
   * The provider calls a pool's attempts made for this dispatcher's items since the pool last said
   * (at most twice a second, and only when there were any), the throttled ones among them: the
   * dispatcher adds them to its run's report, and the run's governor reads throttling as their
   * share (docs/design.md, "The governor").
   */
  public record CallsMade(ThrottleShare.Calls calls) implements ToDispatcher {}

  /**
   * An attempt of the lease API ended ({@code result}, read from the item's answer to its holder's
   * last command): the dispatcher that handed {@code itemId} out through claim-next, if any,
   * settles it now rather than when the lease would have ended. Sent to every dispatcher of the
   * run: the API does not know which node's dispatcher gave the item out; the others have nothing
   * to settle.
   */
  public record SettledElsewhere(ItemId itemId, AttemptResult result) implements ToDispatcher {}

  /**
   * The endings of a pool's attempts at items it stole from another node's dispatcher, sent
   * together (at most a few times a second) rather than one message each across the network.
   */
  public record SettledAll(List<Settled> settled) implements ToDispatcher {}

  /**
   * One item handed to a pool: {@code seq} is its place in the run's scope; {@code provider} the
   * run's provider (null: the default one).
   */
  public record WorkOffer(int seq, ItemId itemId, int maxAttempts, Duration lease, String provider)
      implements CborSerializable {

    public WorkOffer(int seq, ItemId itemId, int maxAttempts, Duration lease) {
      this(seq, itemId, maxAttempts, lease, null);
    }

    public String providerName() {
      return ProviderName.orDefault(provider);
    }
  }

  /**
   * Why a dispatcher asked to answer at once (the lease API's claim-next) has nothing to hand out
   * now (docs/external-workers.md, "claim-next"): the run's cap on this node is reached while items
   * are ready; every open item is in flight or waits for a time (a lease, a back-off; or its shards
   * are still being paged in); or nothing is open here at all (every item settled or quarantined).
   */
  public enum NothingNow {
    AT_CAP,
    WAITING,
    DRAINED
  }

  /**
   * The answer to a {@link RequestWork}; empty and {@code finished} when the run stopped; empty and
   * {@code dry} when the dispatcher has nothing to hand out for now (every item of its node's
   * shards is done, in flight or waiting), so the pool may steal from other nodes' dispatchers. An
   * empty answer to a request answered at once says why ({@code nothingNow}, null from a node of an
   * earlier version) and when to ask again ({@code retryAt}, or null).
   */
  public record WorkBatch(
      String runId,
      List<WorkOffer> offers,
      boolean finished,
      ActorRef<ToDispatcher> dispatcher,
      boolean dry,
      NothingNow nothingNow,
      Instant retryAt)
      implements CborSerializable {

    public WorkBatch(
        String runId,
        List<WorkOffer> offers,
        boolean finished,
        ActorRef<ToDispatcher> dispatcher,
        boolean dry) {
      this(runId, offers, finished, dispatcher, dry, null, null);
    }

    public WorkBatch(
        String runId, List<WorkOffer> offers, boolean finished, ActorRef<ToDispatcher> dispatcher) {
      this(runId, offers, finished, dispatcher, false);
    }
  }
}
