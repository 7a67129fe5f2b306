package io.fencekeeper.testing;

import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;

/**
 * A message written by the serializer remoting picks for it, and read back: what crosses a wire.
 */
public final class WireRoundTrip {

  private WireRoundTrip() {}

  public static Object roundTrip(ActorSystem<?> system, Object message) {
    Serialization serialization = SerializationExtension.get(system);
    var serializer = serialization.findSerializerFor(message);
    byte[] bytes = serializer.toBinary(message);
    return serialization
        .deserialize(bytes, serializer.identifier(), Serializers.manifestFor(serializer, message))
        .get();
  }
}
