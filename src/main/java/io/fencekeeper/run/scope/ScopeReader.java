package io.fencekeeper.run.scope;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * Reads a run's scope as a stream of account batches into a {@link ScopeSink}, validating every
 * account on the way, so a million-account scope never sits in memory: the reader holds one batch
 * and the first problems, the sink (the {@code run_item} table) finds repeated accounts.
 *
 * <p>Batches are delivered while reading. A read that ends in a {@link ScopeException} has
 * delivered some batches already: the caller discards all of them; only a returned {@link
 * ScopeSummary} means the scope is complete and valid. Reading goes on after a bad row so that the
 * exception lists every bad row (the first {@value AccountIntake#REPORTED_PROBLEMS} with their
 * line, index or row number, then a count of the rest), but stops at once past {@code
 * max-items-per-run}.
 *
 * <p>Every source is held to the same rules: accountId and cursor are item id segments, an
 * account+cursor pair appears once, and a scope has at least one account. No message quotes what a
 * file or a query returned, only where and which rule: see {@link AccountIntake}.
 */
public final class ScopeReader {

  private static final String HEADER = "accountId,cursor";

  /**
   * Rows a SQL scope fetches per round trip: at most this many sit in memory, and a million-row
   * scope costs a hundred round trips, not a thousand.
   */
  private static final int SQL_FETCH_SIZE = 10_000;

  private final ScopeSettings settings;
  private final ScopeDirectory directory;

  public ScopeReader(ScopeSettings settings) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.directory = new ScopeDirectory(settings.scopeDir());
    try {
      Files.createDirectories(settings.scopeDir());
    } catch (IOException e) {
      // reported when a CSV scope is read: "the scope directory has not been created"
    }
  }

  /**
   * Streams a scope the node reads itself (inline, a CSV file in the scope directory, a SQL query)
   * to {@code sink} in order, in batches of at most the batch size.
   *
   * @return the number of accounts and their digest, once all are read and valid
   * @throws ScopeException when the scope cannot be read or any account is invalid; batches already
   *     delivered must be discarded
   */
  public ScopeSummary read(Scope scope, ScopeSink sink) {
    return read(scope, sink, ScopeSink.ReadSoFar.NOTHING);
  }

  /**
   * As {@link #read(Scope, ScopeSink)}, for a staging that a fault cut off after it had staged
   * {@code after}: the scope is read from its first row again (the digest covers all of it, and
   * every row is checked again), but only the accounts after those are handed to the sink.
   *
   * @throws ScopeChanged when the accounts read up to there do not digest as {@code after} says:
   *     the scope is not the one staged, and its staging must start over
   */
  public ScopeSummary read(Scope scope, ScopeSink sink, ScopeSink.ReadSoFar after) {
    Objects.requireNonNull(scope, "scope");
    Objects.requireNonNull(sink, "sink");
    Objects.requireNonNull(after, "after");
    if (scope instanceof Scope.Csv csv) {
      return readFile(csv, sink, after);
    } else if (scope instanceof Scope.Inline inline) {
      return readInline(inline, sink, after);
    } else if (scope instanceof Scope.Sql sql) {
      return readSql(sql, sink, after);
    } else if (scope instanceof Scope.Upload) {
      throw new ScopeException("an uploaded scope needs its CSV: none was sent");
    }
    throw new IllegalArgumentException("unknown scope " + scope);
  }

  /**
   * Streams an uploaded CSV ({@code accountId,cursor} header) to {@code sink}; the caller closes
   * {@code upload}. Reading stops at the end of the stream or past {@code max-items-per-run}.
   */
  public ScopeSummary readUpload(InputStream upload, ScopeSink sink) {
    Objects.requireNonNull(upload, "upload");
    return readCsv("uploaded CSV", upload, sink, ScopeSink.ReadSoFar.NOTHING);
  }

  /**
   * Whether this node could read the scope again, to go on with a staging that a fault cut off: a
   * CSV file in its own scope directory, a SQL scope with a source configured here, any inline
   * scope; never an upload, whose body went with the request.
   */
  public boolean canRead(Scope scope) {
    if (scope instanceof Scope.Csv csv) {
      try {
        return Files.isReadable(directory.resolve(csv.path()));
      } catch (ScopeException refused) {
        return false;
      }
    }
    if (scope instanceof Scope.Sql) {
      return settings.sqlSource().isPresent();
    }
    return scope instanceof Scope.Inline;
  }

  private ScopeSummary readInline(Scope.Inline inline, ScopeSink sink, ScopeSink.ReadSoFar after) {
    AccountIntake intake =
        intake("inline scope", (i, column) -> "accounts[" + i + "]", sink, after);
    List<AccountCursor> accounts = inline.accounts();
    for (int i = 0; i < accounts.size(); i++) {
      intake.accept(i, accounts.get(i).accountId(), accounts.get(i).cursor());
    }
    return intake.finish();
  }

  private ScopeSummary readFile(Scope.Csv csv, ScopeSink sink, ScopeSink.ReadSoFar after) {
    Path path = directory.resolve(csv.path());
    // the path is the caller's input: messages name the field, not its value
    String source = "the scope CSV (scope.path)";
    try (InputStream in = Files.newInputStream(path)) {
      return readCsv(source, in, sink, after);
    } catch (IOException e) {
      throw new ScopeException(source + " cannot be opened", e);
    }
  }

  private ScopeSummary readCsv(
      String source, InputStream in, ScopeSink sink, ScopeSink.ReadSoFar after) {
    Reader reader =
        new InputStreamReader(
            in,
            StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT));
    CsvLines lines = new CsvLines(reader);
    try {
      String text = lines.next();
      while (text != null && text != CsvLines.TOO_LONG && isBlank(text)) {
        text = lines.next();
      }
      if (text == null) {
        throw new ScopeException(source + " is empty: the first line must be the header " + HEADER);
      }
      if (text == CsvLines.TOO_LONG || !isHeader(text)) {
        throw new ScopeException(
            source + " line " + lines.number() + ": the header must be exactly " + HEADER);
      }
      AccountIntake intake =
          intake(
              source,
              (n, column) -> column == 0 ? "line " + n : "line " + n + ", column " + column,
              sink,
              after);
      while ((text = lines.next()) != null) {
        long line = lines.number();
        if (text == CsvLines.TOO_LONG) {
          intake.problem(line, "longer than " + CsvLines.MAX_LINE + " characters");
          continue;
        }
        if (text.isBlank()) {
          continue;
        }
        String[] fields = text.split(",", -1);
        if (fields.length != 2) {
          intake.problem(line, "expected 2 fields (" + HEADER + "), got " + fields.length);
        } else {
          intake.accept(line, unquote(fields[0].strip()), unquote(fields[1].strip()));
        }
      }
      return intake.finish();
    } catch (CharacterCodingException e) {
      throw new ScopeException(
          source + " is not UTF-8 text (at line " + (lines.number() + 1) + ")", e);
    } catch (IOException e) {
      // the cause may be the upload's size limit; callers look at it, the message names no path
      throw new ScopeException(source + " could not be read to the end", e);
    }
  }

  private AccountIntake intake(
      String source, AccountIntake.Where where, ScopeSink sink, ScopeSink.ReadSoFar after) {
    return new AccountIntake(
        source, where, settings.batchSize(), settings.maxItemsPerRun(), sink, after);
  }

  private static boolean isBlank(String line) {
    return line.isBlank() || line.equals("\uFEFF");
  }

  private static boolean isHeader(String line) {
    String[] names = line.replace("\uFEFF", "").split(",", -1);
    return names.length == 2
        && unquote(names[0].strip()).equals("accountId")
        && unquote(names[1].strip()).equals("cursor");
  }

  /** Spreadsheet exports quote fields; ids never contain quotes, so a plain strip is enough. */
  private static String unquote(String field) {
    if (field.length() >= 2 && field.startsWith("\"") && field.endsWith("\"")) {
      return field.substring(1, field.length() - 1);
    }
    return field;
  }

  private ScopeSummary readSql(Scope.Sql sql, ScopeSink sink, ScopeSink.ReadSoFar after) {
    SqlSource source =
        settings
            .sqlSource()
            .orElseThrow(
                () ->
                    new ScopeException(
                        "no scope SQL data source is configured (fencekeeper.scope-sql.url)"));
    String query = SelectOnly.require(sql.query());
    AccountIntake intake = intake("scope SQL query", (n, column) -> "row " + n, sink, after);
    new SqlScopeQuery(
            source,
            settings.sqlTimeout(),
            settings.maxItemsPerRun(),
            Math.max(settings.batchSize(), SQL_FETCH_SIZE))
        .run(query, (row, accountId, cursor) -> intake.accept(row, accountId, cursor));
    return intake.finish();
  }
}
