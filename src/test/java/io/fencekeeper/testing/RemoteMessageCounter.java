package io.fencekeeper.testing;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.remote.artery.RemoteInstrument;

/**
 * Artery's own count of what crosses the network: every message any actor system of this JVM sends
 * to another member, by the message's class (a message Artery wraps, such as a sharding envelope,
 * counts under the wrapper's class). Enabled with {@code pekko.remote.artery.advanced.instruments =
 * ["io.fencekeeper.testing.RemoteMessageCounter"]}; it writes no metadata.
 */
public final class RemoteMessageCounter extends RemoteInstrument {

  private static final Map<String, LongAdder> SENT = new ConcurrentHashMap<>();

  @Override
  public byte identifier() {
    return 17;
  }

  @Override
  public void remoteWriteMetadata(
      ActorRef recipient, Object message, ActorRef sender, ByteBuffer buffer) {}

  @Override
  public void remoteMessageSent(
      ActorRef recipient, Object message, ActorRef sender, int size, long time) {
    SENT.computeIfAbsent(message.getClass().getName(), c -> new LongAdder()).increment();
  }

  @Override
  public void remoteReadMetadata(
      ActorRef recipient, Object message, ActorRef sender, ByteBuffer buffer) {}

  @Override
  public void remoteMessageReceived(
      ActorRef recipient, Object message, ActorRef sender, int size, long time) {}

  /** Messages sent to other members so far, by class name. */
  public static Map<String, Long> sent() {
    Map<String, Long> copy = new TreeMap<>();
    SENT.forEach((name, count) -> copy.put(name, count.sum()));
    return copy;
  }

  /** What {@code later} counts beyond {@code earlier}, by class name (zeros left out). */
  public static Map<String, Long> between(Map<String, Long> earlier, Map<String, Long> later) {
    Map<String, Long> delta = new TreeMap<>();
    later.forEach(
        (name, count) -> {
          long d = count - earlier.getOrDefault(name, 0L);
          if (d > 0) {
            delta.put(name, d);
          }
        });
    return delta;
  }
}
