package io.fencekeeper.run.scope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ScopeReaderCsvTest {

  @TempDir Path dir;

  private ScopeReader reader() {
    return new ScopeReader(ScopeSettings.in(dir));
  }

  @Test
  void readsAccountsInFileOrder() throws IOException {
    Path csv = write("accountId,cursor\nacct-1,cur-1\nacct-2,cur-2\n");

    List<AccountCursor> accounts = new ArrayList<>();
    ScopeSummary summary =
        reader().read(new Scope.Csv(csv.toString()), CollectingSink.into(accounts::addAll));

    assertEquals(
        List.of(new AccountCursor("acct-1", "cur-1"), new AccountCursor("acct-2", "cur-2")),
        accounts);
    assertEquals(2, summary.count());
    assertEquals(64, summary.digest().length());
  }

  @Test
  void toleratesByteOrderMarkCrlfWhitespaceQuotesAndBlankLines() throws IOException {
    Path plain = write("accountId,cursor\nacct-1,cur-1\nacct-2,cur-2\n");
    Path messy =
        write("\uFEFF accountId , cursor \r\n\r\n acct-1 ,\"cur-1\"\r\nacct-2,cur-2\r\n\r\n");

    assertEquals(readAll(plain), readAll(messy));
  }

  @Test
  void missingFileIsNamed() {
    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                reader()
                    .read(
                        new Scope.Csv(dir.resolve("nope.csv").toString()),
                        CollectingSink.discarding()));

    assertTrue(
        e.getMessage().contains("scope.path does not exist in the scope directory"),
        e.getMessage());
  }

  @Test
  void directoryIsNotAScopeFile() throws IOException {
    Files.createDirectories(dir.resolve("sub"));
    ScopeException e =
        assertThrows(
            ScopeException.class,
            () -> reader().read(new Scope.Csv("sub"), CollectingSink.discarding()));

    assertTrue(e.getMessage().contains("is not a regular file"), e.getMessage());
  }

  @Test
  void emptyFileIsRefused() throws IOException {
    ScopeException e = assertInvalid(write(""));

    assertTrue(
        e.getMessage().contains("is empty: the first line must be the header"), e.getMessage());
  }

  @Test
  void headerOnlyFileHasNoAccounts() throws IOException {
    ScopeException e = assertInvalid(write("accountId,cursor\n\n"));

    assertTrue(e.getMessage().endsWith("has no accounts"), e.getMessage());
  }

  @Test
  void wrongHeaderIsRefusedByLineAndRuleNotByContent() throws IOException {
    ScopeException e = assertInvalid(write("\nroot:x:0:0:root:/root:/bin/bash\nacct-1,cur-1\n"));

    assertTrue(
        e.getMessage().endsWith("line 2: the header must be exactly accountId,cursor"),
        e.getMessage());
    assertFalse(e.getMessage().contains("root"), e.getMessage());
  }

  @Test
  void headerWithExtraColumnIsRefused() throws IOException {
    ScopeException e = assertInvalid(write("accountId,cursor,amount\nacct-1,cur-1,3\n"));

    assertTrue(
        e.getMessage().contains("the header must be exactly accountId,cursor"), e.getMessage());
  }

  @Test
  void everyBadRowIsReportedWithItsLineNumber() throws IOException {
    Path csv =
        write(
            String.join(
                "\n",
                "accountId,cursor",
                "acct-1,cur-1",
                "acct-2",
                "acct-3,cur-3,extra",
                "acct 4,cur-4",
                "acct-5,",
                "acct-1,cur-1",
                "acct-6,cur-6",
                ""));

    ScopeException e = assertInvalid(csv);

    assertEquals(
        List.of(
            "line 3: expected 2 fields (accountId,cursor), got 1",
            "line 4: expected 2 fields (accountId,cursor), got 3",
            "line 5, column 1: accountId must be 1-128 characters of letters, digits or ._:@+=-",
            "line 6, column 2: cursor must be 1-128 characters of letters, digits or ._:@+=-",
            "line 7: duplicate of line 2"),
        e.problems());
    assertTrue(e.getMessage().contains("has 5 invalid entries:\n  line 3:"), e.getMessage());
  }

  @Test
  void sameAccountWithAnotherCursorIsNotADuplicate() throws IOException {
    assertEquals(2, readAll(write("accountId,cursor\nacct-1,cur-1\nacct-1,cur-2\n")).size());
  }

  @Test
  void longListsOfBadRowsAreCappedAndCounted() throws IOException {
    StringBuilder text = new StringBuilder("accountId,cursor\n");
    for (int i = 0; i < 50; i++) {
      text.append("bad account,cur-1\n");
    }

    ScopeException e = assertInvalid(write(text.toString()));

    assertEquals(20, e.problems().size());
    assertTrue(e.problems().get(19).startsWith("line 21, column 1: "), e.problems().get(19));
    assertTrue(e.getMessage().contains("has 50 invalid entries"), e.getMessage());
    assertTrue(e.getMessage().endsWith("... and 30 more"), e.getMessage());
  }

  @Test
  void readingGoesOnAfterABadRowSoThatLaterRepeatsAreFound() throws IOException {
    StringBuilder text = new StringBuilder("accountId,cursor\n");
    for (int i = 0; i < 25; i++) {
      text.append("acct-").append(i).append(",cur-1\n");
    }
    text.append("bad account,cur-1\n");
    for (int i = 25; i < 50; i++) {
      text.append("acct-").append(i).append(",cur-1\n");
    }
    text.append("acct-30,cur-1\n");
    List<AccountCursor> delivered = new ArrayList<>();
    ScopeReader smallBatches = new ScopeReader(ScopeSettings.in(dir).withBatchSize(10));

    ScopeException e =
        assertThrows(
            ScopeException.class,
            () ->
                smallBatches.read(
                    new Scope.Csv(write(text.toString()).toString()),
                    CollectingSink.into(delivered::addAll)));

    assertEquals(
        List.of(
            "line 27, column 1: accountId must be 1-128 characters of letters, digits or ._:@+=-",
            "line 53: duplicate of line 33"),
        e.problems());
    assertEquals(50, delivered.size(), "every valid account reached the sink; the caller discards");
  }

  @Test
  void invalidUtf8IsNamed() throws IOException {
    Path csv = dir.resolve("latin1.csv");
    Files.write(csv, "accountId,cursor\nacct-\u00e9,cur-1\n".getBytes(StandardCharsets.ISO_8859_1));

    ScopeException e = assertInvalid(csv);

    assertTrue(e.getMessage().contains("is not UTF-8 text"), e.getMessage());
  }

  @Test
  void hundredThousandRowsStreamInBatchesWithAStableDigest() throws IOException {
    Path csv = generate("big.csv", 100_000, -1);
    Path changed = generate("big-changed.csv", 100_000, 73_456);
    List<Integer> batchSizes = new ArrayList<>();

    ScopeSummary first =
        reader()
            .read(
                new Scope.Csv(csv.toString()), CollectingSink.into(b -> batchSizes.add(b.size())));
    ScopeSummary second = reader().read(new Scope.Csv(csv.toString()), CollectingSink.discarding());
    ScopeSummary other =
        reader().read(new Scope.Csv(changed.toString()), CollectingSink.discarding());

    assertEquals(100_000, first.count());
    assertEquals(100, batchSizes.size());
    assertTrue(batchSizes.stream().allMatch(size -> size == ScopeSettings.DEFAULT_BATCH_SIZE));
    assertEquals(first, second);
    assertEquals(100_000, other.count());
    assertNotEquals(first.digest(), other.digest());
  }

  /**
   * A staging cut off by a fault reads its scope again after the part it staged: only the rest is
   * handed on, the digest still covers the whole, and each batch says how far the read has come.
   */
  @Test
  void aReadAfterAStagedPartHandsOnOnlyTheRestAndDigestsTheWhole() throws IOException {
    Path csv = generate("resumed.csv", 5_000, -1);
    CollectingSink first = CollectingSink.discarding();
    ScopeSummary whole = reader().read(new Scope.Csv(csv.toString()), first);
    ScopeSink.ReadSoFar staged = first.soFars.get(1);
    assertEquals(2_000, staged.accounts());
    assertTrue(staged.clean());

    List<AccountCursor> rest = new ArrayList<>();
    ScopeSummary resumed =
        reader().read(new Scope.Csv(csv.toString()), CollectingSink.into(rest::addAll), staged);

    assertEquals(whole, resumed);
    assertEquals(3_000, rest.size());
    assertEquals(new AccountCursor("acct-002000", "cur-60"), rest.get(0));
  }

  @Test
  void aReadAfterAStagedPartThatChangedSinceIsRefusedAsChanged() throws IOException {
    Path csv = generate("before.csv", 5_000, -1);
    CollectingSink first = CollectingSink.discarding();
    reader().read(new Scope.Csv(csv.toString()), first);
    ScopeSink.ReadSoFar staged = first.soFars.get(1);
    Path changed = generate("changed.csv", 5_000, 1_500);
    Path shorter = generate("shorter.csv", 1_000, -1);

    for (Path other : List.of(changed, shorter)) {
      assertThrows(
          ScopeChanged.class,
          () -> reader().read(new Scope.Csv(other.toString()), CollectingSink.discarding(), staged),
          other.getFileName().toString());
    }
  }

  @Test
  void duplicateFarApartInALargeFileIsFound() throws IOException {
    Path csv = generate("dup.csv", 50_000, -1);
    Files.writeString(
        csv,
        "acct-000007,cur-7\n",
        StandardCharsets.UTF_8,
        java.nio.file.StandardOpenOption.APPEND);

    ScopeException e = assertInvalid(csv);

    assertEquals(List.of("line 50002: duplicate of line 9"), e.problems());
  }

  @Test
  void shippedSampleIsAValidScope() {
    List<AccountCursor> accounts = new ArrayList<>();
    ScopeSummary summary =
        new ScopeReader(ScopeSettings.in(Path.of("examples")))
            .read(new Scope.Csv("accounts.csv"), CollectingSink.into(accounts::addAll));

    assertEquals(3000, summary.count());
    assertEquals(new AccountCursor("acct-00001", accounts.get(0).cursor()), accounts.get(0));
  }

  private Path generate(String name, int rows, int changedRow) throws IOException {
    Path csv = dir.resolve(name);
    try (BufferedWriter out = Files.newBufferedWriter(csv)) {
      out.write("accountId,cursor\n");
      for (int i = 0; i < rows; i++) {
        out.write(String.format("acct-%06d,cur-%d%s\n", i, i % 97, i == changedRow ? "x" : ""));
      }
    }
    return csv;
  }

  private List<AccountCursor> readAll(Path csv) {
    List<AccountCursor> accounts = new ArrayList<>();
    reader().read(new Scope.Csv(csv.toString()), CollectingSink.into(accounts::addAll));
    return accounts;
  }

  private ScopeException assertInvalid(Path csv) {
    return assertThrows(
        ScopeException.class,
        () -> reader().read(new Scope.Csv(csv.toString()), CollectingSink.discarding()));
  }

  private Path write(String content) throws IOException {
    Path csv = Files.createTempFile(dir, "scope", ".csv");
    Files.writeString(csv, content, StandardCharsets.UTF_8);
    return csv;
  }
}
