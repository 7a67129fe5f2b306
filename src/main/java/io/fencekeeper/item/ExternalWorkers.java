package io.fencekeeper.item;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;

/**
 * The last word of each lease API worker, as every node can read it (docs/design.md, "Lost holders
 * count"): the API notes every command a worker sends, on any item of any run ({@link #heard}), and
 * an item that counts its lost holders asks whether one of them has spoken since its lease ended
 * ({@link #lastWord}). A node's own workers are judged by the cluster's membership instead ({@link
 * HolderNodes}); a lease API worker names no node, so its word is what tells that it is alive.
 *
 * <p>Kept cluster-wide by Pekko Distributed Data (one last-writer-wins map of worker id to the time
 * of its word, by the clock of the node that heard it), written locally and spread by gossip, so a
 * word costs no round trip and a read inside the entity never blocks: it reads this node's copy.
 * Each node writes a worker's word at most once a second (a word is compared with lease ends, at a
 * second's margin), and a word older than {@link #KEPT} is dropped when the next is written.
 */
public final class ExternalWorkers {

  /** How long a word is kept: past it, a lost holder is judged as one never heard from. */
  static final Duration KEPT = Duration.ofHours(2);

  /** Each node writes a worker's word to the replicated map at most this often. */
  static final Duration WRITE_EVERY = Duration.ofSeconds(1);

  /**
   * No word is ever known (an entity without a cluster, a replay): every lost holder stays lost.
   */
  public static final ExternalWorkers NONE = new ExternalWorkers(null, null);

  private final Clock clock;
  private final ActorRef<WorkerWords.Command> replica;
  private final ConcurrentHashMap<String, Long> words = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Long> written = new ConcurrentHashMap<>();

  private ExternalWorkers(Clock clock, ActorRef<WorkerWords.Command> replica) {
    this.clock = clock;
    this.replica = replica;
  }

  /** The registry of this node, its words stamped with {@code clock} (the items' clock). */
  public static ExternalWorkers start(ActorSystem<?> system, Clock clock) {
    ExternalWorkers[] self = new ExternalWorkers[1];
    ActorRef<WorkerWords.Command> replica =
        system.systemActorOf(
            WorkerWords.create(entries -> self[0].merge(entries)),
            "external-worker-words",
            Props.empty());
    self[0] = new ExternalWorkers(clock, replica);
    return self[0];
  }

  /** A registry kept in this JVM only: for an entity or a test without a cluster. */
  public static ExternalWorkers local(Clock clock) {
    return new ExternalWorkers(clock, null);
  }

  /** {@code workerId} sent a command of the lease API now. */
  public void heard(String workerId) {
    if (clock == null) {
      return; // NONE hears nothing
    }
    long now = clock.millis();
    words.merge(workerId, now, Math::max);
    if (replica == null) {
      return;
    }
    Long last = written.get(workerId);
    if (last == null || now - last >= WRITE_EVERY.toMillis()) {
      if (written.size() > 10_000) {
        written.clear(); // a bound, not a cache policy: a cleared entry only writes again
      }
      written.put(workerId, now);
      replica.tell(new WorkerWords.Heard(workerId, now, now - KEPT.toMillis()));
    }
  }

  /** When {@code workerId} last spoke, as far as this node knows; empty if never (or long ago). */
  public Optional<Instant> lastWord(String workerId) {
    Long at = words.get(workerId);
    return at == null ? Optional.empty() : Optional.of(Instant.ofEpochMilli(at));
  }

  /** The replicated map changed: every word it holds, kept where it is later than ours. */
  private void merge(java.util.Map<String, Long> replicated) {
    replicated.forEach((worker, at) -> words.merge(worker, at, Math::max));
    long cutoff = clock.millis() - KEPT.toMillis();
    words.entrySet().removeIf(e -> e.getValue() < cutoff);
  }
}
