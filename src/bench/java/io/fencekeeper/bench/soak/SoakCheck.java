package io.fencekeeper.bench.soak;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.cbor.CBORFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The soak's checks once its nights have ended (scripts/soak.sh, docs/testing.md "The soak"): what
 * the provider did (the sim's {@code GET /ledger}), what the journal holds (every item's events,
 * folded by {@link ItemHistory}, not by the product) and what the product says (each run's view,
 * {@code GET /api/runs/{id}}), held against each other.
 */
final class SoakCheck {

  /** One check: whether it held, and what was seen. */
  record Result(String name, boolean held, String detail) {}

  /** One night as read back: its run view, and its items' histories by id. */
  record NightRead(Night night, JsonNode view, Map<String, ItemHistory> items) {

    Map<ItemHistory.Status, Long> statuses() {
      Map<ItemHistory.Status, Long> counts = new EnumMap<>(ItemHistory.Status.class);
      items.values().forEach(h -> counts.merge(h.status, 1L, Long::sum));
      return counts;
    }

    long sum(java.util.function.ToLongFunction<ItemHistory> counter) {
      return items.values().stream().mapToLong(counter).sum();
    }
  }

  /** Examples shown per failed check. */
  private static final int EXAMPLES = 10;

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ObjectMapper CBOR = new ObjectMapper(new CBORFactory());
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private final String dbUrl;
  private final String dbUser;
  private final String dbPassword;
  private final URI simUrl;
  private final List<URI> apiUrls;
  private final Duration clockAhead;

  SoakCheck(
      String dbUrl,
      String dbUser,
      String dbPassword,
      URI simUrl,
      List<URI> apiUrls,
      Duration clockAhead) {
    this.dbUrl = dbUrl;
    this.dbUser = dbUser;
    this.dbPassword = dbPassword;
    this.simUrl = simUrl;
    this.apiUrls = apiUrls;
    this.clockAhead = clockAhead;
  }

  /** Reads everything, prints the nights and the checks; true when every check held. */
  boolean run(List<Night> nights, PrintStream out) throws Exception {
    Map<String, Integer> effects = ledger();
    List<NightRead> reads = new ArrayList<>();
    for (Night night : nights) {
      reads.add(new NightRead(night, runView(night.runId()), journal(night)));
    }
    printNights(reads, out);
    List<Result> results =
        List.of(
            noDuplicateEffect(effects),
            doneItemsHaveTheirEffect(reads, effects),
            noLostItem(reads),
            noInnocentQuarantine(reads),
            countersMatchJournal(reads),
            oneWriterAtATime(reads),
            finalStateTrueToDeadline(reads));
    out.println();
    out.println("checks");
    boolean all = true;
    for (Result result : results) {
      out.printf("  %-6s %-36s %s%n", result.held() ? "held" : "FAILED", result.name(), result.detail());
      all &= result.held();
    }
    return all;
  }

  // --- the checks -----------------------------------------------------------------------------

  static Result noDuplicateEffect(Map<String, Integer> effects) {
    List<String> twice = new ArrayList<>();
    long once = 0;
    for (Map.Entry<String, Integer> e : effects.entrySet()) {
      if (e.getValue() > 1) {
        twice.add(e.getKey() + " x" + e.getValue());
      } else if (e.getValue() == 1) {
        once++;
      }
    }
    return new Result(
        "0 duplicate effects",
        twice.isEmpty(),
        String.format(
            "%,d keys at the provider with one effect, %,d with more%s",
            once, twice.size(), examples(twice)));
  }

  static Result doneItemsHaveTheirEffect(List<NightRead> reads, Map<String, Integer> effects) {
    List<String> wrong = new ArrayList<>();
    long checked = 0;
    for (NightRead read : reads) {
      for (Map.Entry<String, ItemHistory> item : read.items().entrySet()) {
        int count = effects.getOrDefault(Night.idempotencyKey(item.getKey()), 0);
        checked++;
        if (!item.getValue().effectsAgree(count)) {
          wrong.add(
              item.getKey()
                  + " "
                  + item.getValue().status
                  + " ("
                  + item.getValue().effectKind
                  + ") with "
                  + count
                  + " effects");
        }
      }
    }
    return new Result(
        "effects = DONE items",
        wrong.isEmpty(),
        String.format(
            "%,d items: each DONE one with its effect (none when nothing to do), no other with"
                + " more than one; %,d otherwise%s",
            checked, wrong.size(), examples(wrong)));
  }

  static Result noLostItem(List<NightRead> reads) {
    List<String> lost = new ArrayList<>();
    long items = 0;
    for (NightRead read : reads) {
      items += read.items().size();
      read.items()
          .forEach(
              (id, h) -> {
                if (h.status == ItemHistory.Status.PENDING
                    || h.status == ItemHistory.Status.LEASED) {
                  lost.add(id + " " + h.status + " in the journal (" + h.events + " events)");
                }
              });
      JsonNode counts = read.view().path("counts");
      Map<ItemHistory.Status, Long> journal = read.statuses();
      long total = counts.path("total").asLong(-1);
      long sum = 0;
      for (ItemHistory.Status status : ItemHistory.Status.values()) {
        long shown = counts.path(status.name().toLowerCase(java.util.Locale.ROOT)).asLong(-1);
        sum += shown;
        long inJournal = journal.getOrDefault(status, 0L);
        if (shown != inJournal) {
          lost.add(
              "night "
                  + read.night().number()
                  + ": the run counts "
                  + shown
                  + " "
                  + status
                  + ", the journal "
                  + inJournal);
        }
      }
      if (total != read.items().size() || sum != total) {
        lost.add(
            "night "
                + read.night().number()
                + ": "
                + read.items().size()
                + " items uploaded, the run counts "
                + total
                + " in all and "
                + sum
                + " by status");
      }
    }
    return new Result(
        "0 lost items",
        lost.isEmpty(),
        String.format(
            "%,d items of %d nights, every one settled in the journal (DONE, CLOSED, FAILED or"
                + " QUARANTINED) and counted by its run as the journal has it; %,d otherwise%s",
            items, reads.size(), lost.size(), examples(lost)));
  }

  static Result noInnocentQuarantine(List<NightRead> reads) {
    List<String> quarantined = new ArrayList<>();
    for (NightRead read : reads) {
      read.items()
          .forEach(
              (id, h) -> {
                if (h.quarantines > 0) {
                  quarantined.add(id + ": " + h.quarantine + ", now " + h.status);
                }
              });
      long counted = read.view().path("quarantines").asLong(-1);
      if (counted != 0) {
        quarantined.add("night " + read.night().number() + ": the run counts " + counted);
      }
    }
    return new Result(
        "no innocent quarantine",
        quarantined.isEmpty(),
        String.format(
            "no poison item in a soak: %,d quarantines%s",
            quarantined.size(), examples(quarantined)));
  }

  static Result countersMatchJournal(List<NightRead> reads) {
    List<String> differ = new ArrayList<>();
    for (NightRead read : reads) {
      Map<String, Long> journal = journalCounters(read);
      journal.forEach(
          (name, counted) -> {
            long shown = read.view().path(name).asLong(-1);
            if (shown != counted) {
              differ.add(
                  "night "
                      + read.night().number()
                      + " "
                      + name
                      + ": run view "
                      + shown
                      + ", journal "
                      + counted);
            }
          });
      long claims = read.sum(h -> h.claims);
      long ended = read.sum(h -> h.endedAttempts);
      if (claims != ended) {
        differ.add(
            "night "
                + read.night().number()
                + ": "
                + claims
                + " claims in the journal, "
                + ended
                + " attempts ended");
      }
    }
    return new Result(
        "counters = journal",
        differ.isEmpty(),
        String.format(
            "staleRejections, takeovers, reconciliations, throttledAnswers, attempts, quarantines"
                + " of every run view against its journal; %d differ%s",
            differ.size(), examples(differ)));
  }

  static Result oneWriterAtATime(List<NightRead> reads) {
    List<String> interleaved = new ArrayList<>();
    long incarnations = 0;
    for (NightRead read : reads) {
      for (Map.Entry<String, ItemHistory> item : read.items().entrySet()) {
        incarnations += item.getValue().writers.size();
        if (item.getValue().interleaved != null) {
          interleaved.add(item.getKey() + ": " + item.getValue().interleaved);
        }
      }
    }
    return new Result(
        "one writer at a time",
        interleaved.isEmpty(),
        String.format(
            "%,d entity incarnations wrote the items' journals, none after another had (no split"
                + " brain); %,d items otherwise%s",
            incarnations, interleaved.size(), examples(interleaved)));
  }

  static Map<String, Long> journalCounters(NightRead read) {
    Map<String, Long> counters = new LinkedHashMap<>();
    counters.put("staleRejections", read.sum(h -> h.staleRejections));
    counters.put("takeovers", read.sum(h -> h.takeovers));
    counters.put("reconciliations", read.sum(h -> h.reconciliations));
    counters.put("throttledAnswers", read.sum(h -> h.throttledAnswers));
    counters.put("attempts", read.sum(h -> h.endedAttempts));
    counters.put("quarantines", read.sum(h -> h.quarantines));
    return counters;
  }

  /**
   * SUCCEEDED only with every item DONE; PARTIAL only once the deadline has passed: by the
   * coordinator's clock ({@code endedAt}) and by the script's (the end it first saw), less what
   * the soak moved a node's clock ahead (a coordinator ahead by s ends a run s early: docs/cluster.md,
   * "Whose clock decides a lease"). Any other end, or none, does not hold.
   */
  Result finalStateTrueToDeadline(List<NightRead> reads) {
    List<String> wrong = new ArrayList<>();
    List<String> seen = new ArrayList<>();
    for (NightRead read : reads) {
      int n = read.night().number();
      String state = read.view().path("state").asText("?");
      long done = read.statuses().getOrDefault(ItemHistory.Status.DONE, 0L);
      int items = read.items().size();
      Instant deadline = instant(read.view().path("deadline"));
      Instant endedAt = instant(read.view().path("endedAt"));
      switch (state) {
        case "SUCCEEDED" -> {
          if (done != items) {
            wrong.add("night " + n + " SUCCEEDED with " + done + " of " + items + " DONE");
          } else {
            seen.add("night " + n + " SUCCEEDED");
          }
        }
        case "PARTIAL" -> {
          Instant seenAt = read.night().endSeen();
          if (done == items) {
            wrong.add("night " + n + " PARTIAL with every item DONE");
          } else if (deadline == null || endedAt == null || endedAt.isBefore(deadline)) {
            wrong.add("night " + n + " PARTIAL, ended at " + endedAt + ", deadline " + deadline);
          } else if (seenAt == null || seenAt.isBefore(deadline.minus(clockAhead))) {
            wrong.add(
                "night "
                    + n
                    + " PARTIAL, seen ended at "
                    + seenAt
                    + ", before its deadline "
                    + deadline
                    + " less the clock moved ahead ("
                    + clockAhead.toSeconds()
                    + " s)");
          } else {
            seen.add(
                "night "
                    + n
                    + " PARTIAL "
                    + String.format(
                        "%+.1f s", Duration.between(deadline, seenAt).toMillis() / 1000.0)
                    + " from its deadline");
          }
        }
        default ->
            wrong.add(
                "night "
                    + n
                    + " "
                    + state
                    + " ("
                    + read.view().path("endReason").asText("")
                    + ")");
      }
      read.items()
          .forEach(
              (id, h) -> {
                if (h.status == ItemHistory.Status.FAILED) {
                  wrong.add(id + " FAILED: " + h.lastError);
                }
              });
    }
    return new Result(
        "final state true to deadline",
        wrong.isEmpty(),
        wrong.isEmpty()
            ? String.join("; ", seen)
            : wrong.size() + " wrong (a FAILED item included: no fault of a soak is permanent)"
                + examples(wrong));
  }

  // --- reading --------------------------------------------------------------------------------

  /** The sim's ledger, effects per key, read as a stream (a million keys stay small). */
  Map<String, Integer> ledger() throws IOException, InterruptedException {
    HttpResponse<InputStream> answer =
        HTTP.send(
            HttpRequest.newBuilder(simUrl.resolve("/ledger"))
                .timeout(Duration.ofMinutes(2))
                .build(),
            HttpResponse.BodyHandlers.ofInputStream());
    if (answer.statusCode() != 200) {
      throw new IOException("GET " + simUrl + "/ledger answered " + answer.statusCode());
    }
    Map<String, Integer> effects = new HashMap<>();
    try (JsonParser parser = JSON.getFactory().createParser(answer.body())) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        throw new IOException("the ledger is not a JSON object");
      }
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String field = parser.currentName();
        parser.nextToken();
        if (field.equals("effects")) {
          while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String key = parser.currentName();
            parser.nextToken();
            effects.put(key, parser.getIntValue());
          }
        } else {
          parser.skipChildren();
        }
      }
    }
    return effects;
  }

  /** The run view from the first node that answers it. */
  JsonNode runView(String runId) throws IOException, InterruptedException {
    String path = "/api/runs/" + URLEncoder.encode(runId, StandardCharsets.UTF_8);
    List<String> failures = new ArrayList<>();
    for (URI api : apiUrls) {
      try {
        HttpResponse<String> answer =
            HTTP.send(
                HttpRequest.newBuilder(api.resolve(path)).timeout(Duration.ofSeconds(20)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() == 200) {
          return JSON.readTree(answer.body());
        }
        failures.add(api + " " + answer.statusCode());
      } catch (IOException e) {
        failures.add(api + " " + e);
      }
    }
    throw new IOException("no node answered GET " + path + ": " + failures);
  }

  /**
   * Every event of the night's items, folded per item; an item of the CSV without any event is
   * PENDING (never claimed, never closed).
   */
  Map<String, ItemHistory> journal(Night night) throws IOException, SQLException {
    Map<String, ItemHistory> items = new LinkedHashMap<>();
    for (String id : night.itemIds()) {
      items.put(id, new ItemHistory());
    }
    String prefix = "WorkItem|" + night.runId() + "/";
    try (Connection c = DriverManager.getConnection(dbUrl, dbUser, dbPassword)) {
      c.setAutoCommit(false); // PostgreSQL streams a result set only inside a transaction
      try (PreparedStatement s =
          c.prepareStatement(
              "SELECT persistence_id, event_ser_manifest, event_payload, writer FROM event_journal"
                  + " WHERE persistence_id LIKE ? ESCAPE '\\' AND NOT deleted"
                  + " ORDER BY persistence_id, sequence_number")) {
        s.setFetchSize(10_000);
        s.setString(1, prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%");
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            String id = rs.getString(1).substring("WorkItem|".length());
            ItemHistory history = items.get(id);
            if (history == null) {
              throw new IllegalStateException("an item of the run outside its CSV: " + id);
            }
            history.writtenBy(rs.getString(4));
            history.add(rs.getString(2), CBOR.readTree(rs.getBytes(3)));
          }
        }
      }
      c.rollback();
    }
    return items;
  }

  // --- printing -------------------------------------------------------------------------------

  private static void printNights(List<NightRead> reads, PrintStream out) {
    out.println("nights");
    out.printf(
        "  %-5s %-28s %-9s %8s %8s %7s %6s %5s %8s %9s %6s %6s %9s%n",
        "night",
        "run",
        "state",
        "items",
        "done",
        "closed",
        "failed",
        "quar",
        "attempts",
        "takeovers",
        "stale",
        "recon",
        "throttled");
    for (NightRead read : reads) {
      Map<ItemHistory.Status, Long> s = read.statuses();
      Map<String, Long> counters = journalCounters(read);
      out.printf(
          "  %-5d %-28s %-9s %8d %8d %7d %6d %5d %8d %9d %6d %6d %9d%n",
          read.night().number(),
          read.night().runId(),
          read.view().path("state").asText("?"),
          read.items().size(),
          s.getOrDefault(ItemHistory.Status.DONE, 0L),
          s.getOrDefault(ItemHistory.Status.CLOSED, 0L),
          s.getOrDefault(ItemHistory.Status.FAILED, 0L),
          s.getOrDefault(ItemHistory.Status.QUARANTINED, 0L),
          counters.get("attempts"),
          counters.get("takeovers"),
          counters.get("staleRejections"),
          counters.get("reconciliations"),
          counters.get("throttledAnswers"));
    }
  }

  private static String examples(List<String> found) {
    if (found.isEmpty()) {
      return "";
    }
    List<String> shown = found.subList(0, Math.min(EXAMPLES, found.size()));
    return ":\n           " + String.join("\n           ", shown)
        + (found.size() > EXAMPLES ? "\n           ... " + (found.size() - EXAMPLES) + " more" : "");
  }

  private static Instant instant(JsonNode node) {
    return node.isTextual() ? Instant.parse(node.asText()) : null;
  }
}
