package io.fencekeeper.dispatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A node pages the shards it hosts one at a time, arrivals first, each from where it stopped. */
class ShardPagingTest {

  final ShardPaging paging = new ShardPaging();

  static List<ScopeRows.Row> rows(int from, int count) {
    List<ScopeRows.Row> rows = new ArrayList<>();
    for (int seq = from; seq < from + count; seq++) {
      rows.add(new ScopeRows.Row(seq, "a" + seq, "c", ScopeRows.UNKNOWN));
    }
    return rows;
  }

  @Test
  void eachHostedShardIsPagedToItsEndInTurn() {
    paging.hosted(Set.of(7, 3));
    assertEquals(OptionalInt.of(3), paging.nextShard());
    paging.loaded(3, rows(0, 10), 10);
    assertEquals(10, paging.from(3), "a full page: the next starts after its last item");
    paging.loaded(3, rows(10, 4), 10);
    assertEquals(OptionalInt.of(7), paging.nextShard(), "a short page was shard 3's end");
    paging.loaded(7, rows(0, 0), 10);
    assertTrue(paging.allPaged());
    assertEquals(OptionalInt.empty(), paging.nextShard());
  }

  @Test
  void aShardThatArrivesAfterAMemberWasLostIsPagedFirstAndOneThatLeftIsForgotten() {
    paging.hosted(Set.of(1, 2));
    paging.loaded(1, rows(0, 10), 10); // shard 1 half paged
    paging.memberLost();
    paging.hosted(Set.of(1, 2, 9)); // 9 moved here from a node that left

    assertTrue(paging.hasArrivals());
    assertTrue(paging.arrived(9));
    assertFalse(paging.arrived(2), "hosted from the start");
    assertEquals(OptionalInt.of(9), paging.nextShard());
    paging.loaded(9, rows(0, 3), 10);
    assertFalse(paging.hasArrivals());

    paging.hosted(Set.of(2)); // 1 and 9 moved away
    paging.loaded(1, rows(10, 10), 10); // a page read while it moved: ignored
    assertEquals(OptionalInt.of(2), paging.nextShard());
    paging.hosted(Set.of(1, 2)); // 1 came back: paged again from its first item
    assertEquals(0, paging.from(1));
  }

  @Test
  void shardsAllocatedOneByOneAtANightsStartAreNotArrivals() {
    paging.hosted(Set.of()); // the dispatcher starts before its node hosts any shard
    paging.hosted(Set.of(4));
    paging.hosted(Set.of(4, 2));

    assertFalse(paging.hasArrivals(), "no member was lost: nobody's leases are due");
    assertEquals(OptionalInt.of(2), paging.nextShard());
    paging.loaded(2, rows(0, 10), 10);
    assertEquals(OptionalInt.of(2), paging.nextShard(), "paged a page at a time, in turn");
  }
}
