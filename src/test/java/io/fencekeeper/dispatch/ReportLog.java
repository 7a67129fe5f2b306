package io.fencekeeper.dispatch;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.apache.pekko.actor.typed.ActorRef;

/** Every report the coordinator would get, with the statuses run_item had when it arrived. */
final class ReportLog {

  record Received(DispatchProtocol.RunReport report, Map<Integer, Short> statuses) {}

  private final ShardRows rows;
  private final List<Received> received = new CopyOnWriteArrayList<>();
  private volatile ActorRef<DispatchProtocol.RunReport> counting;

  ReportLog(ShardRows rows) {
    this.rows = rows;
  }

  void add(DispatchProtocol.RunReport report) {
    received.add(new Received(report, rows.statuses()));
    boolean counts = report.shards().stream().anyMatch(t -> t.settled() + t.closed() > 0);
    if (counting != null && counts) {
      counting.tell(report);
    }
  }

  /** From now on, a report that counts a settled or closed item also goes to {@code probe}. */
  void forwardCountingTo(ActorRef<DispatchProtocol.RunReport> probe) {
    counting = probe;
  }

  int size() {
    return received.size();
  }

  List<DispatchProtocol.RunReport> all() {
    return received.stream().map(Received::report).toList();
  }

  Optional<DispatchProtocol.RunReport> latest() {
    return received.isEmpty()
        ? Optional.empty()
        : Optional.of(received.get(received.size() - 1).report());
  }

  static Set<Integer> shardsOf(DispatchProtocol.RunReport report) {
    return report.shards().stream()
        .map(DispatchProtocol.ShardTally::shard)
        .collect(Collectors.toSet());
  }

  static Optional<DispatchProtocol.ShardTally> tallyOf(
      DispatchProtocol.RunReport report, int shard) {
    return report.shards().stream().filter(t -> t.shard() == shard).findFirst();
  }

  /** The reports that counted more DONE, FAILED or CLOSED items than run_item then held. */
  List<Received> aheadOfTheirWrites() {
    return received.stream().filter(this::ahead).toList();
  }

  private boolean ahead(Received r) {
    for (DispatchProtocol.ShardTally t : r.report().shards()) {
      if (t.done() > held(r, t.shard(), ScopeRows.DONE)
          || t.failed() > held(r, t.shard(), ScopeRows.FAILED)
          || t.closed() > held(r, t.shard(), ScopeRows.CLOSED)) {
        return true;
      }
    }
    return false;
  }

  private long held(Received r, int shard, short status) {
    return r.statuses().entrySet().stream()
        .filter(e -> rows.shardOf(e.getKey()) == shard && e.getValue() == status)
        .count();
  }
}
