package io.fencekeeper.run.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.List;
import org.junit.jupiter.api.Test;

class NightlyScheduleConfigTest {

  private static final String EXAMPLE =
      "{ job = \"payment-reconciliation\", start = \"01:00\", deadline = \"06:00\","
          + " zone = \"Europe/Berlin\", scope { type = csv, path = \"examples/accounts.csv\" },"
          + " max-attempts = 5, max-failed-items = 10 }";

  @Test
  void readsTheDocumentedExample() {
    List<NightlySchedule> schedules = parse("fencekeeper.schedules = [" + EXAMPLE + "]");

    assertEquals(
        List.of(
            new NightlySchedule(
                "payment-reconciliation",
                LocalTime.of(1, 0),
                LocalTime.of(6, 0),
                ZoneId.of("Europe/Berlin"),
                new Scope.Csv("examples/accounts.csv"),
                5,
                10)),
        schedules);
  }

  @Test
  void noScheduleListMeansNoSchedules() {
    assertEquals(List.of(), parse("fencekeeper.http.port = 8080"));
    assertEquals(List.of(), parse("fencekeeper.schedules = []"));
  }

  @Test
  void inlineAndSqlScopesUseTheApiShape() {
    List<NightlySchedule> schedules =
        parse(
            "fencekeeper.schedules = [ "
                + EXAMPLE
                + ", { job = sweep, start = \"23:00\", deadline = \"05:00\", zone = UTC,"
                + " scope { type = inline, accounts = [ { accountId = a-1, cursor = c-1 } ] },"
                + " max-attempts = 1, max-failed-items = 0 },"
                + " { job = audit, start = \"02:00\", deadline = \"04:00\", zone = UTC,"
                + " scope { type = sql, query = \"select account_id, cursor from accounts\" },"
                + " max-attempts = 3, max-failed-items = 0 } ]");

    assertEquals(
        new Scope.Inline(List.of(new AccountCursor("a-1", "c-1"))), schedules.get(1).scope());
    assertEquals(
        new Scope.Sql("select account_id, cursor from accounts"), schedules.get(2).scope());
  }

  @Test
  void badEntriesNameTheScheduleIndexAndField() {
    assertRefused(
        "fencekeeper.schedules = " + "{ job = x }",
        "fencekeeper.schedules must be a list of schedules, got object");
    assertRefused("fencekeeper.schedules = [ 42 ]", "fencekeeper.schedules[0] must be an object");
    assertRefused(
        withSecond("zone = \"Europe/Berlin\"", "zone = \"Berlin\""),
        "fencekeeper.schedules[1].zone must be a time zone id like Europe/Berlin (got 'Berlin')");
    assertRefused(
        withSecond("start = \"01:00\"", "start = \"25:00\""),
        "fencekeeper.schedules[1].start must be a local time like 01:00 (got '25:00')");
    assertRefused(
        withSecond("deadline = \"06:00\"", "deadline = \"01:00\""),
        "fencekeeper.schedules[1].deadline must differ from start (both are 01:00)");
    assertRefused(
        withSecond(", max-attempts = 5", ""), "fencekeeper.schedules[1].max-attempts is required");
    assertRefused(
        withSecond("max-attempts = 5", "max-attempts = five"),
        "fencekeeper.schedules[1].max-attempts must be a whole number");
    assertRefused(
        withSecond("max-failed-items = 10", "max-failed-items = -1"),
        "fencekeeper.schedules[1].max-failed-items must be at least 0 (got -1)");
    assertRefused(
        withSecond("job = \"payment-reconciliation\"", "job = \"payment reconciliation\""),
        "fencekeeper.schedules[1].job must be 1-128 characters");
    assertRefused(
        withSecond("job = \"payment-reconciliation\"", "jobb = \"other\", job = other"),
        "fencekeeper.schedules[1] has unknown fields [jobb]");
    assertRefused(
        withSecond("type = csv", "type = xml"),
        "fencekeeper.schedules[1].scope: Could not resolve type id 'xml'");
    assertRefused(
        withSecond(
            "scope { type = csv, path = \"examples/accounts.csv\" }",
            "scope { type = inline, accounts = [ { accountId = \"a 1\", cursor = c } ] }"),
        "fencekeeper.schedules[1].scope: accountId must be 1-128 characters");
    assertRefused(
        "fencekeeper.schedules = [" + EXAMPLE + ", " + EXAMPLE + "]",
        "fencekeeper.schedules[1].job 'payment-reconciliation' is already scheduled by"
            + " fencekeeper.schedules[0]");
  }

  /**
   * The example as entry 0 and, as entry 1, a copy with one change (under another job name unless
   * the change is to the job itself).
   */
  private static String withSecond(String original, String replacement) {
    String second = EXAMPLE.replace(original, replacement);
    if (!original.startsWith("job")) {
      second = second.replace("job = \"payment-reconciliation\"", "job = other");
    }
    return "fencekeeper.schedules = [" + EXAMPLE + ", " + second + "]";
  }

  private static void assertRefused(String hocon, String expected) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> parse(hocon), hocon);
    assertTrue(e.getMessage().startsWith(expected), e.getMessage());
  }

  private static List<NightlySchedule> parse(String hocon) {
    return NightlySchedule.fromConfig(ConfigFactory.parseString(hocon).resolve());
  }
}
