package io.fencekeeper.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.node.NodeConfig;
import io.fencekeeper.node.NodeSettings;
import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JournalDatabaseTest {

  @TempDir Path dataDir;

  static NodeSettings settings(Map<String, Object> overrides) {
    return NodeSettings.from(NodeConfig.load(Optional.empty(), overrides));
  }

  @Test
  void embeddedDefaultIsAnH2FileUnderTheDataDir() {
    NodeSettings settings =
        settings(Map.of("fencekeeper.data-dir", dataDir.toString(), "fencekeeper.db.url", ""));
    JournalDatabase db = settings.journalDatabase();
    assertEquals(JournalDatabase.Kind.H2, db.kind());
    assertTrue(db.url().startsWith("jdbc:h2:file:" + dataDir.toAbsolutePath()), db.url());
  }

  @Test
  void aPostgresUrlSelectsPostgres() {
    JournalDatabase db =
        settings(Map.of("fencekeeper.db.url", "jdbc:postgresql://db:5432/fencekeeper"))
            .journalDatabase();
    assertEquals(JournalDatabase.Kind.POSTGRESQL, db.kind());
    assertEquals(
        "slick.jdbc.PostgresProfile$",
        db.pekkoConfig().getString("pekko-persistence-jdbc.shared-databases.fencekeeper.profile"));
  }

  @Test
  void anUnknownDatabaseUrlIsRefusedWithTheVariableName() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> settings(Map.of("fencekeeper.db.url", "jdbc:mysql://x/y")).journalDatabase());
    assertTrue(e.getMessage().contains("FENCEKEEPER_DB_URL"), e.getMessage());
  }

  @Test
  void migrationsCreateTheJournalSchemaOnH2OnceAndOnlyOnce() throws Exception {
    TestDatabases.Target target = TestDatabases.h2File(dataDir);
    assertMigratesOnce(
        target,
        10,
        "journal, run items, lookup index, unique accounts, run staging, run_item shard, run_record,"
            + " run archive, lease requests, staging resume");
  }

  @Test
  void migrationsCreateTheJournalSchemaOnPostgresOnceAndOnlyOnce() throws Exception {
    TestDatabases.Target target = TestDatabases.freshPostgres();
    assertMigratesOnce(
        target,
        11,
        "journal, run items, lookup index, unique accounts, run staging, run_item fillfactor,"
            + " run_item shard, run_record, run archive, lease requests, staging resume");
    try (Connection c =
            DriverManager.getConnection(target.url(), target.user(), target.password());
        ResultSet rs =
            c.createStatement()
                .executeQuery("SELECT reloptions FROM pg_class WHERE relname = 'run_item'")) {
      assertTrue(rs.next());
      assertEquals("{fillfactor=60}", rs.getString(1), "room in each page for HOT status updates");
    }
  }

  private void assertMigratesOnce(TestDatabases.Target target, int migrations, String which)
      throws Exception {
    NodeSettings settings =
        settings(
            Map.of(
                "fencekeeper.db.url", target.url(),
                "fencekeeper.db.user", target.user(),
                "fencekeeper.db.password", target.password()));
    JournalDatabase db = settings.journalDatabase();
    assertEquals(migrations, db.migrate(), "first start runs every migration: " + which);
    assertEquals(0, db.migrate(), "a restart finds it current");
    Set<String> tables = new HashSet<>();
    Set<String> indexes = new HashSet<>();
    try (Connection c =
        DriverManager.getConnection(target.url(), target.user(), target.password())) {
      try (ResultSet rs = c.getMetaData().getTables(null, null, "%", new String[] {"TABLE"})) {
        while (rs.next()) {
          tables.add(rs.getString("TABLE_NAME").toLowerCase());
        }
      }
      try (ResultSet rs = c.getMetaData().getIndexInfo(null, null, "event_tag", false, false)) {
        while (rs.next()) {
          if (rs.getString("INDEX_NAME") != null) {
            indexes.add(rs.getString("INDEX_NAME").toLowerCase());
          }
        }
      }
    }
    assertTrue(
        tables.containsAll(Set.of("event_journal", "event_tag", "snapshot", "run_item")),
        tables.toString());
    assertTrue(indexes.contains("event_tag_tag_idx"), indexes.toString());
  }
}
