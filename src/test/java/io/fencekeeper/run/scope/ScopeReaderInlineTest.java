package io.fencekeeper.run.scope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ScopeReaderInlineTest {

  private final ScopeReader reader = new ScopeReader(Optional.empty());

  @Test
  void deliversAccountsInBatchesOfTheConfiguredSize() {
    List<AccountCursor> accounts = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      accounts.add(new AccountCursor("a-" + i, "c-1"));
    }
    List<List<AccountCursor>> batches = new ArrayList<>();

    ScopeSummary summary =
        new ScopeReader(Optional.empty(), 10, ScopeReader.DEFAULT_SQL_TIMEOUT)
            .read(new Scope.Inline(accounts), batches::add);

    assertEquals(25, summary.count());
    assertEquals(List.of(10, 10, 5), batches.stream().map(List::size).toList());
    assertEquals(accounts, batches.stream().flatMap(List::stream).toList());
  }

  @Test
  void sameAccountsDigestTheSameInlineAndFromCsv(@TempDir Path dir) throws IOException {
    Path csv = dir.resolve("a.csv");
    Files.writeString(csv, "accountId,cursor\na-1,c-1\na-2,c-2\n");
    Scope.Inline inline =
        new Scope.Inline(List.of(new AccountCursor("a-1", "c-1"), new AccountCursor("a-2", "c-2")));

    assertEquals(reader.read(new Scope.Csv(csv.toString()), b -> {}), reader.read(inline, b -> {}));
  }

  @Test
  void orderIsPartOfTheDigest() {
    AccountCursor one = new AccountCursor("a-1", "c-1");
    AccountCursor two = new AccountCursor("a-2", "c-1");

    ScopeSummary forward = reader.read(new Scope.Inline(List.of(one, two)), b -> {});
    ScopeSummary backward = reader.read(new Scope.Inline(List.of(two, one)), b -> {});

    assertTrue(!forward.digest().equals(backward.digest()));
  }

  @Test
  void duplicatesAreReportedByIndex() {
    AccountCursor one = new AccountCursor("a-1", "c-1");
    AccountCursor two = new AccountCursor("a-2", "c-1");

    ScopeException e =
        assertThrows(
            ScopeException.class,
            () -> reader.read(new Scope.Inline(List.of(one, two, one, two)), b -> {}));

    assertEquals(
        List.of(
            "accounts[2]: duplicate of accounts[0] (accountId 'a-1', cursor 'c-1')",
            "accounts[3]: duplicate of accounts[1] (accountId 'a-2', cursor 'c-1')"),
        e.problems());
    assertTrue(e.getMessage().startsWith("inline scope has 2 invalid entries:"), e.getMessage());
  }

  @Test
  void emptyInlineScopeHasNoAccounts() {
    ScopeException e =
        assertThrows(ScopeException.class, () -> reader.read(new Scope.Inline(List.of()), b -> {}));

    assertEquals("inline scope has no accounts", e.getMessage());
  }

  @Test
  void invalidAccountIsRefusedWhenConstructed() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> new AccountCursor("a/1", "c-1"));

    assertTrue(e.getMessage().startsWith("accountId must be"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> new AccountCursor("a-1", " "));
  }

  @Test
  void nullEntryIsRefusedWithItsIndex() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new Scope.Inline(Arrays.asList(new AccountCursor("a-1", "c-1"), null)));

    assertEquals("inline scope accounts[1] is empty", e.getMessage());
  }
}
