package io.fencekeeper.item;

import java.util.Map;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.LWWMapKey;
import org.apache.pekko.cluster.ddata.LWWRegister;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;

/**
 * This node's replica of the lease API workers' last words ({@link ExternalWorkers}): writes a word
 * to the replicated map and hands every change of it, from any node, to {@code changed}. One small
 * actor; the map itself is Pekko Distributed Data's.
 */
final class WorkerWords {

  private WorkerWords() {}

  static final Key<LWWMap<String, Long>> KEY =
      LWWMapKey.create("fencekeeper-external-worker-words");

  /**
   * A word wins by its own time, not by when it reached the map: a late-gossiped older word never
   * replaces a newer one.
   */
  private static final LWWRegister.Clock<Long> BY_ITS_TIME = (current, at) -> at;

  sealed interface Command {}

  /** {@code workerId} spoke at {@code at}; words older than {@code dropBefore} go. */
  record Heard(String workerId, long at, long dropBefore) implements Command {}

  private record Changed(Replicator.SubscribeResponse<LWWMap<String, Long>> response)
      implements Command {}

  private record Written(Replicator.UpdateResponse<LWWMap<String, Long>> response)
      implements Command {}

  static Behavior<Command> create(Consumer<Map<String, Long>> changed) {
    return Behaviors.setup(
        ctx -> {
          SelfUniqueAddress self = DistributedData.get(ctx.getSystem()).selfUniqueAddress();
          return DistributedData.withReplicatorMessageAdapter(
              (ReplicatorMessageAdapter<Command, LWWMap<String, Long>> replicator) -> {
                replicator.subscribe(KEY, Changed::new);
                return Behaviors.receive(Command.class)
                    .onMessage(
                        Heard.class,
                        heard -> {
                          replicator.askUpdate(
                              replyTo ->
                                  new Replicator.Update<>(
                                      KEY,
                                      LWWMap.empty(),
                                      Replicator.writeLocal(),
                                      replyTo,
                                      map -> write(map, self, heard)),
                              Written::new);
                          return Behaviors.same();
                        })
                    .onMessage(
                        Changed.class,
                        c -> {
                          if (c.response()
                              instanceof Replicator.Changed<LWWMap<String, Long>> now) {
                            changed.accept(now.get(KEY).getEntries());
                          }
                          return Behaviors.same();
                        })
                    // a local write cannot fail but for a full mailbox: the next word writes again
                    .onMessage(Written.class, w -> Behaviors.same())
                    .build();
              });
        });
  }

  private static LWWMap<String, Long> write(
      LWWMap<String, Long> map, SelfUniqueAddress self, Heard heard) {
    LWWMap<String, Long> next = map;
    for (Map.Entry<String, Long> word : map.getEntries().entrySet()) {
      if (word.getValue() < heard.dropBefore()) {
        next = next.remove(self, word.getKey());
      }
    }
    Long known = next.getEntries().get(heard.workerId());
    if (known != null && known >= heard.at()) {
      return next;
    }
    return next.put(self, heard.workerId(), heard.at(), BY_ITS_TIME);
  }
}
