package io.fencekeeper.api.runs;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.http.ApiCall;
import io.fencekeeper.api.http.ApiError;
import io.fencekeeper.api.http.ApiErrors;
import io.fencekeeper.api.http.ApiResponse;
import io.fencekeeper.api.http.ApiStream;
import io.fencekeeper.api.http.PrintableText;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemView;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.RunItemStore;
import io.fencekeeper.run.RunView;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * {@code GET /api/runs/{runId}/report?format=csv|jsonl}: one line per item of the run (id, status,
 * attempts, effect, provider reference, last error, idempotency key), streamed while it is read.
 * The scope is paged from {@code run_item} and each page's items are read from their journals in
 * one query ({@code items}, as the item pages read them: no entity is woken), so a run of a million
 * items costs a page of memory, not a million rows or a million entities.
 */
public final class RunReport {

  static final int PAGE = 500;

  /** The CSV header, and the order of every line's fields. */
  public static final List<String> COLUMNS =
      List.of(
          "itemId",
          "status",
          "attempt",
          "maxAttempts",
          "effect",
          "outcome",
          "providerReference",
          "lastError",
          "closedReason",
          "token",
          // last, so that a reader of the earlier columns by position reads them as before
          "idempotencyKey");

  private final ObjectMapper mapper;
  private final RunItemStore queries;
  private final Function<List<ItemId>, List<ItemView>> items;
  private final Executor blocking;

  /** {@code items}: the items as their journals make them, in the order asked. */
  public RunReport(
      ObjectMapper mapper,
      RunItemStore queries,
      Function<List<ItemId>, List<ItemView>> items,
      Executor blocking) {
    this.mapper = mapper;
    this.queries = queries;
    this.items = items;
    this.blocking = blocking;
  }

  public CompletionStage<ApiResponse> report(ApiCall call, CompletionStage<RunView> found) {
    String format = call.query().getOrDefault("format", "csv").toLowerCase(Locale.ROOT);
    for (String name : call.query().keySet()) {
      if (!name.equals("format")) {
        throw ApiError.unknownParameter(name);
      }
    }
    if (!format.equals("csv") && !format.equals("jsonl")) {
      throw ApiError.badRequest("format", "format must be csv or jsonl");
    }
    boolean csv = format.equals("csv");
    return found.thenApply(
        run -> {
          Source<ByteString, ?> lines =
              pages(run.scopeId())
                  .mapAsync(
                      1,
                      page -> CompletableFuture.supplyAsync(() -> lines(run, page, csv), blocking))
                  .mapConcat(page -> page);
          if (csv) {
            lines = Source.single(csvLine(COLUMNS)).concat(lines);
          }
          String file = run.runId().replace('/', '-') + "-report." + format;
          return ApiResponse.stream(ApiStream.download(csv, file, lines));
        });
  }

  /** Every staged row of the scope, a page at a time, in scope order. */
  private Source<List<RunItemStore.Row>, ?> pages(String scopeId) {
    return Source.unfoldAsync(
        0,
        fromSeq ->
            CompletableFuture.supplyAsync(
                () -> {
                  List<RunItemStore.Row> page = queries.page(scopeId, fromSeq, PAGE);
                  return page.isEmpty()
                      ? Optional.<Pair<Integer, List<RunItemStore.Row>>>empty()
                      : Optional.of(Pair.create(page.get(page.size() - 1).seq() + 1, page));
                },
                blocking));
  }

  /** A page's lines; a page whose journals cannot be read says so on each of its lines. */
  private List<ByteString> lines(RunView run, List<RunItemStore.Row> page, boolean csv) {
    LocalDate date = LocalDate.parse(run.businessDate());
    List<ItemId> ids =
        page.stream()
            .map(row -> ItemId.of(run.job(), date, row.accountId(), row.cursor()))
            .toList();
    List<ItemView> views;
    String unreadable = null;
    try {
      views = items.apply(ids);
    } catch (RuntimeException e) {
      // one unreadable page must not end a million-line download: say so on its lines
      views = null;
      unreadable = "the item's journal could not be read: " + ApiErrors.unwrap(e);
    }
    List<ByteString> lines = new ArrayList<>(ids.size());
    for (int i = 0; i < ids.size(); i++) {
      Map<String, Object> fields;
      if (views != null) {
        fields = fields(run, ids.get(i), views.get(i));
      } else {
        fields = new LinkedHashMap<>();
        fields.put("itemId", ids.get(i).value());
        fields.put("status", "UNKNOWN");
        fields.put("lastError", unreadable);
      }
      lines.add(csv ? csvLine(fields) : jsonLine(fields));
    }
    return lines;
  }

  /** An item's line of the report (the JSON lines format; CSV has the same fields in order). */
  static Map<String, Object> fields(RunView run, ItemId id, ItemView item) {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("itemId", id.value());
    fields.put("status", item.status().name());
    fields.put("attempt", item.attempt());
    // an item never claimed has not learned the run's limit yet
    fields.put("maxAttempts", item.maxAttempts() > 0 ? item.maxAttempts() : run.maxAttempts());
    fields.put("effect", item.effect().name());
    WorkItem.EffectOutcome outcome = item.effectOutcome();
    fields.put("outcome", outcome == null ? null : outcome.kind().name());
    fields.put("providerReference", outcome == null ? null : outcome.providerReference());
    fields.put("lastError", item.lastError());
    fields.put("closedReason", item.closedReason());
    fields.put("token", item.token());
    fields.put("idempotencyKey", id.idempotencyKey());
    return fields;
  }

  /**
   * The CSV line of a report line's fields, in {@link #COLUMNS} order, free text made safe for a
   * spreadsheet (the archive's report is printed with it too).
   */
  public static ByteString csvLine(Map<String, Object> fields) {
    Map<String, Object> safe = new LinkedHashMap<>(fields);
    for (String text : List.of("providerReference", "lastError", "closedReason")) {
      safe.computeIfPresent(
          text, (name, value) -> spreadsheetSafe(PrintableText.escape(value.toString())));
    }
    return csvLine(COLUMNS.stream().map(safe::get).toList());
  }

  private ByteString jsonLine(Map<String, Object> fields) {
    try {
      return ByteString.fromArray(mapper.writeValueAsBytes(fields))
          .concat(ByteString.fromString("\n"));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("could not write a report line", e);
    }
  }

  /**
   * Free text from a provider opened in a spreadsheet must not become a formula: a leading =, +,
   * -, @ or control character is escaped with a quote, as OWASP advises for CSV exports. (Control
   * characters are written as visible escapes before this, so one item stays one line.)
   */
  static String spreadsheetSafe(String text) {
    return !text.isEmpty() && "=+-@\t\r".indexOf(text.charAt(0)) >= 0 ? "'" + text : text;
  }

  /** RFC 4180: quoted when a value holds a comma, quote or line break; quotes doubled. */
  public static ByteString csvLine(List<?> values) {
    StringBuilder line = new StringBuilder();
    for (int i = 0; i < values.size(); i++) {
      if (i > 0) {
        line.append(',');
      }
      Object value = values.get(i);
      String text = value == null ? "" : value.toString();
      if (text.indexOf(',') >= 0
          || text.indexOf('"') >= 0
          || text.indexOf('\n') >= 0
          || text.indexOf('\r') >= 0) {
        line.append('"').append(text.replace("\"", "\"\"")).append('"');
      } else {
        line.append(text);
      }
    }
    return ByteString.fromString(line.append("\r\n").toString(), StandardCharsets.UTF_8);
  }
}
