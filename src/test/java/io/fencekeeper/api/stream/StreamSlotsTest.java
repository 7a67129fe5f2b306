package io.fencekeeper.api.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.api.http.ApiError;
import org.junit.jupiter.api.Test;

/** The node's live-stream slots: the caps, and a slot that comes back exactly once. */
class StreamSlotsTest {

  @Test
  void theNodeTheTokenAndTheAddressEachHaveACap() {
    StreamSlots slots = new StreamSlots(6, 4, 2);
    slots.reserve("READ", "10.0.0.1");
    slots.reserve("READ", "10.0.0.1");
    ApiError address = assertThrows(ApiError.class, () -> slots.reserve("READ", "10.0.0.1"));
    assertEquals(503, address.status());
    assertEquals("too_many_streams", address.code());
    assertTrue(address.getMessage().contains("max-event-streams-per-address"));
    slots.reserve("READ", "10.0.0.2");
    slots.reserve("READ", "10.0.0.2");
    ApiError token = assertThrows(ApiError.class, () -> slots.reserve("READ", "10.0.0.3"));
    assertTrue(token.getMessage().contains("max-event-streams-per-token"), token.getMessage());
    slots.reserve("ADMIN", "10.0.0.3");
    slots.reserve("ADMIN", "10.0.0.4");
    ApiError node = assertThrows(ApiError.class, () -> slots.reserve("ADMIN", "10.0.0.5"));
    assertTrue(node.getMessage().contains("(fencekeeper.http.max-event-streams)"));
    assertEquals(6, slots.open());
  }

  @Test
  void aSlotComesBackOnceWhicheverWayItsStreamEnds() {
    StreamSlots slots = new StreamSlots(2, 0, 0);
    StreamSlots.Slot ended = slots.reserve("OPEN", "a");
    assertTrue(ended.start());
    ended.releaseIfUnstarted(); // a running stream keeps its slot
    assertEquals(1, slots.open());
    ended.release();
    ended.release();
    assertEquals(0, slots.open(), "released once");

    StreamSlots.Slot neverStarted = slots.reserve("OPEN", "a");
    neverStarted.releaseIfUnstarted();
    assertEquals(0, slots.open());
    assertFalse(neverStarted.start(), "a body that starts after its slot came back must end");
    neverStarted.release();
    assertEquals(0, slots.open(), "and its end does not give the slot back twice");
    slots.reserve("OPEN", "a");
    slots.reserve("OPEN", "a");
    assertEquals(2, slots.open(), "no cap per token or address when they are 0");
  }
}
