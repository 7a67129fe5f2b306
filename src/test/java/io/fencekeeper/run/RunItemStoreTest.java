package io.fencekeeper.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fencekeeper.journal.JournalDatabase;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.TestDatabases;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The status cache a recovering dispatcher trusts: terminal statuses written in one batch land on
 * exactly the items named, in exactly the scope named, on both databases.
 */
class RunItemStoreTest {

  @TempDir Path dataDir;

  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgresql"})
  void markedStatusesLandOnTheirOwnItemsAndDoneItemsAreSkippedWhenPaging(String kind) {
    TestDatabases.Target target =
        kind.equals("h2") ? TestDatabases.h2File(dataDir) : TestDatabases.freshPostgres();
    JournalDatabase db =
        new JournalDatabase(
            kind.equals("h2") ? JournalDatabase.Kind.H2 : JournalDatabase.Kind.POSTGRESQL,
            target.url(),
            target.user(),
            target.password(),
            2);
    db.migrate();
    try (RunItemStore store = new RunItemStore(db)) {
      List<AccountCursor> accounts = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        accounts.add(new AccountCursor("acct-" + i, "c1"));
      }
      store.stage("scope-a", 0, accounts);
      store.stage("scope-b", 0, accounts);
      store.refreshStatistics();

      store.markStatuses(
          "scope-a",
          List.of(
              new RunItemStore.StatusWrite(1, RunItemStore.DONE),
              new RunItemStore.StatusWrite(4, RunItemStore.FAILED),
              new RunItemStore.StatusWrite(5, RunItemStore.DONE),
              new RunItemStore.StatusWrite(9, RunItemStore.CLOSED)));

      Map<Integer, Short> a =
          store.page("scope-a", 0, 100).stream()
              .collect(Collectors.toMap(RunItemStore.Row::seq, RunItemStore.Row::status));
      assertEquals(RunItemStore.DONE, a.get(1));
      assertEquals(RunItemStore.FAILED, a.get(4));
      assertEquals(RunItemStore.DONE, a.get(5));
      assertEquals(RunItemStore.CLOSED, a.get(9));
      assertEquals(
          6,
          a.values().stream().filter(status -> status == RunItemStore.UNKNOWN).count(),
          "the other items of the scope are untouched");
      assertEquals(
          List.of(0, 2, 3, 4, 6, 7, 8, 9),
          store.window("scope-a", 0, 10, true).stream().map(RunItemStore.Row::seq).toList(),
          "a window that skips DONE items skips DONE items only");
      assertEquals(
          List.of(2, 3, 4),
          store.window("scope-a", 2, 6, true).stream().map(RunItemStore.Row::seq).toList(),
          "a window reads its range of seqs, and nothing past it");
      assertEquals(
          List.of(2, 3, 4, 5),
          store.window("scope-a", 2, 6, false).stream().map(RunItemStore.Row::seq).toList());
      assertEquals(
          List.of(RunItemStore.UNKNOWN),
          store.page("scope-b", 0, 100).stream().map(RunItemStore.Row::status).distinct().toList(),
          "the same seqs in another scope keep their status");
    }
  }

  /**
   * The run tables' pool ends a session left idle inside a transaction as the journal's does
   * (EndedRuns holds a row lock in one): a node stopped mid-transaction cannot hold it for the
   * others. The limit is a session setting, so every connection of the pool must carry it.
   */
  @Test
  void everyPooledPostgresConnectionCarriesTheIdleTransactionLimit() throws Exception {
    JournalDatabase db = TestDatabases.migrated(TestDatabases.freshPostgres());
    try (RunItemStore store = new RunItemStore(db);
        Connection first = store.dataSource().getConnection();
        Connection second = store.dataSource().getConnection()) {
      for (Connection c : List.of(first, second)) {
        try (Statement s = c.createStatement();
            ResultSet rs = s.executeQuery("SHOW idle_in_transaction_session_timeout")) {
          rs.next();
          assertEquals(JournalDatabase.IDLE_TRANSACTION_LIMIT.toSeconds() + "s", rs.getString(1));
        }
      }
    }
  }
}
