package io.fencekeeper.item;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;

/**
 * The audit trails of many items at once, read in one query from the journal's own table, and the
 * items they make ({@link WorkItem#replay}): what a page of items or the archive shows, without
 * waking an entity per item (a recovery of its own: two queries, an actor and its passivation) or
 * opening a read-journal stream per item. An entity answers with the fold of the events it has
 * written, so this is the same item as a {@code Get} to it would answer, as of the last event
 * committed.
 *
 * <p>Plain SQL on the table the migrations create (as retention deletes it): its names are quoted,
 * since H2's schema has them in lower case as PostgreSQL folds them. Items are only ever written
 * through their entities; this class only reads.
 */
public final class ItemTrails {

  /** The most items one query names: a page of items or a batch of the archive. */
  public static final int MAX_ITEMS = 500;

  private final DataSource journal;
  private final Serialization serialization;

  /** {@code journal}: a pool on the database that holds the journal's tables. */
  public ItemTrails(ActorSystem<?> system, DataSource journal) {
    this.journal = journal;
    this.serialization = SerializationExtension.get(system.classicSystem());
  }

  /** Each item's events, in the order they were written (none for an item never written). */
  public Map<ItemId, List<ItemAudit.Entry>> trails(List<ItemId> items) {
    if (items.size() > MAX_ITEMS) {
      throw new IllegalArgumentException(items.size() + " items in one read; at most " + MAX_ITEMS);
    }
    Map<ItemId, List<ItemAudit.Entry>> trails = new LinkedHashMap<>();
    Map<String, ItemId> byPersistenceId = new HashMap<>();
    for (ItemId item : items) {
      trails.put(item, new ArrayList<>());
      byPersistenceId.put(WorkItem.persistenceId(item).id(), item);
    }
    if (items.isEmpty()) {
      return trails;
    }
    String sql =
        "SELECT \"persistence_id\", \"sequence_number\", \"event_ser_id\","
            + " \"event_ser_manifest\", \"event_payload\" FROM \"event_journal\""
            + " WHERE \"persistence_id\" IN ("
            + String.join(", ", Collections.nCopies(byPersistenceId.size(), "?"))
            + ") AND \"deleted\" = FALSE ORDER BY \"persistence_id\", \"sequence_number\"";
    try (Connection c = journal.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      int i = 1;
      for (String id : byPersistenceId.keySet()) {
        ps.setString(i++, id);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          WorkItem.Event event =
              (WorkItem.Event)
                  serialization.deserialize(rs.getBytes(5), rs.getInt(3), rs.getString(4)).get();
          trails
              .get(byPersistenceId.get(rs.getString(1)))
              .add(
                  new ItemAudit.Entry(
                      rs.getLong(2), event.at(), event.getClass().getSimpleName(), event));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the items' journal: " + e.getMessage(), e);
    }
    return trails;
  }

  /** Each item as its events make it, in the order asked. */
  public List<ItemView> views(List<ItemId> items) {
    Map<ItemId, List<ItemAudit.Entry>> trails = trails(items);
    List<ItemView> views = new ArrayList<>(items.size());
    for (ItemId item : items) {
      views.add(
          WorkItem.replay(item, trails.get(item).stream().map(ItemAudit.Entry::event).toList()));
    }
    return views;
  }
}
