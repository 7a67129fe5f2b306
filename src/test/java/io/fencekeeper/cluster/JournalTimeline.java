package io.fencekeeper.cluster;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;

/**
 * The items' journal of one run as the database holds it: every event with the writer (one
 * incarnation of one entity) and the database's own clock at insert ({@code db_time}, see {@link
 * ProcessCluster}), so that what happened when can be told across nodes whose clocks disagree.
 */
final class JournalTimeline {

  /** One journal row of one item. {@code at} is the event's own time: the writing node's clock. */
  record Row(String itemId, long seq, String writer, Instant dbTime, WorkItem.Event event) {
    Instant at() {
      return event.at();
    }

    /** How far the writing node's clock was ahead of the database's when it wrote this row. */
    Duration clockAhead() {
      return Duration.between(dbTime, event.at());
    }
  }

  final Map<String, List<Row>> byItem;

  private JournalTimeline(Map<String, List<Row>> byItem) {
    this.byItem = byItem;
  }

  /** Reads every event of the items of {@code job}, deserialized as the nodes wrote them. */
  static JournalTimeline read(ProcessCluster cluster, String job) throws Exception {
    return readJobs(cluster, job + "/");
  }

  /**
   * Reads every event of the items whose id starts with {@code prefix} ({@code kill-9} reads the
   * jobs {@code kill-9} and {@code kill-9-ledger}), in one query.
   */
  static JournalTimeline readJobs(ProcessCluster cluster, String prefix) throws Exception {
    Serialization serialization =
        SerializationExtension.get(
            org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(cluster.client.system()));
    Map<String, List<Row>> byItem = new LinkedHashMap<>();
    try (Connection c =
            DriverManager.getConnection(
                cluster.db.url(), cluster.db.user(), cluster.db.password());
        PreparedStatement s =
            c.prepareStatement(
                "SELECT persistence_id, sequence_number, writer, db_time, event_ser_id,"
                    + " event_ser_manifest, event_payload FROM event_journal"
                    + " WHERE persistence_id LIKE ? ORDER BY persistence_id, sequence_number")) {
      s.setString(1, WorkItem.ENTITY_TYPE_KEY.name() + "|" + prefix + "%");
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          String itemId = rs.getString(1).substring(rs.getString(1).indexOf('|') + 1);
          Object event =
              serialization.deserialize(rs.getBytes(7), rs.getInt(5), rs.getString(6)).get();
          byItem
              .computeIfAbsent(itemId, k -> new ArrayList<>())
              .add(
                  new Row(
                      itemId,
                      rs.getLong(2),
                      rs.getString(3),
                      rs.getTimestamp(4).toInstant(),
                      (WorkItem.Event) event));
        }
      }
    }
    return new JournalTimeline(byItem);
  }

  /**
   * The items whose lease a worker of {@code node} holds as the journal has it (granted, and no
   * event has ended it yet), with the holder: each item's events folded by the entity's own event
   * handler ({@link WorkItem#replay}).
   */
  Map<String, String> leasedBy(String node) {
    Map<String, String> held = new LinkedHashMap<>();
    byItem.forEach(
        (itemId, rows) -> {
          ItemView item =
              WorkItem.replay(ItemId.parse(itemId), rows.stream().map(Row::event).toList());
          if (item.status() == WorkItem.Status.LEASED
              && ClusterFixture.nodeOf(item.owner()).equals(node)) {
            held.put(itemId, item.owner());
          }
        });
    return held;
  }

  /** Whether the lease {@code holder} held on {@code item} was taken over (claimed from it). */
  boolean takenOver(String item, String holder) {
    return byItem.get(item).stream()
        .anyMatch(
            row ->
                row.event() instanceof WorkItem.LeaseGranted granted
                    && holder.equals(granted.previousOwner()));
  }

  List<Row> rows() {
    return byItem.values().stream().flatMap(List::stream).toList();
  }

  /** Every row of one kind of event, in database-time order. */
  <E extends WorkItem.Event> List<Row> all(Class<E> kind) {
    return rows().stream()
        .filter(r -> kind.isInstance(r.event()))
        .sorted(Comparator.comparing(Row::dbTime))
        .toList();
  }

  /** The claim that granted {@code token} on the item of {@code row}, if it is in the journal. */
  Optional<Row> grantOf(String itemId, long token) {
    return byItem.getOrDefault(itemId, List.of()).stream()
        .filter(r -> r.event() instanceof WorkItem.LeaseGranted g && g.token() == token)
        .findFirst();
  }

  /** The longest stretch of database time between two consecutive rows of {@code kind}. */
  <E extends WorkItem.Event> Stretch longestQuietStretch(Class<E> kind) {
    List<Row> rows = all(kind);
    Stretch longest = new Stretch(Instant.EPOCH, Instant.EPOCH);
    for (int i = 1; i < rows.size(); i++) {
      Stretch gap = new Stretch(rows.get(i - 1).dbTime(), rows.get(i).dbTime());
      if (gap.length().compareTo(longest.length()) > 0) {
        longest = gap;
      }
    }
    return longest;
  }

  record Stretch(Instant from, Instant to) {
    Duration length() {
      return Duration.between(from, to);
    }
  }
}
