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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ScopeReaderInlineTest {

  private final ScopeReader reader = new ScopeReader(ScopeSettings.in(Path.of("")));

  @Test
  void deliversAccountsInBatchesOfTheConfiguredSize() {
    List<AccountCursor> accounts = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      accounts.add(new AccountCursor("a-" + i, "c-1"));
    }
    List<List<AccountCursor>> batches = new ArrayList<>();

    ScopeSummary summary =
        new ScopeReader(ScopeSettings.in(Path.of("")).withBatchSize(10))
            .read(new Scope.Inline(accounts), CollectingSink.into(batches::add));

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

    ScopeReader inDir = new ScopeReader(ScopeSettings.in(dir));

    assertEquals(
        inDir.read(new Scope.Csv("a.csv"), CollectingSink.discarding()),
        inDir.read(inline, CollectingSink.discarding()));
  }

  @Test
  void orderIsPartOfTheDigest() {
    AccountCursor one = new AccountCursor("a-1", "c-1");
    AccountCursor two = new AccountCursor("a-2", "c-1");

    ScopeSummary forward =
        reader.read(new Scope.Inline(List.of(one, two)), CollectingSink.discarding());
    ScopeSummary backward =
        reader.read(new Scope.Inline(List.of(two, one)), CollectingSink.discarding());

    assertTrue(!forward.digest().equals(backward.digest()));
  }

  @Test
  void duplicatesAreReportedByIndex() {
    AccountCursor one = new AccountCursor("a-1", "c-1");
    AccountCursor two = new AccountCursor("a-2", "c-1");

    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                reader.read(
                    new Scope.Inline(List.of(one, two, one, two)), CollectingSink.discarding()));

    assertEquals(
        List.of("accounts[2]: duplicate of accounts[0]", "accounts[3]: duplicate of accounts[1]"),
        e.problems());
    assertTrue(e.getMessage().startsWith("inline scope has 2 invalid entries:"), e.getMessage());
  }

  @Test
  void emptyInlineScopeHasNoAccounts() {
    ScopeException e =
        assertThrows(
            ScopeException.class,
            () -> reader.read(new Scope.Inline(List.of()), CollectingSink.discarding()));

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
