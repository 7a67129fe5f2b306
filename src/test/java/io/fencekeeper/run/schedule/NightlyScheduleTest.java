package io.fencekeeper.run.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.typesafe.config.ConfigFactory;
import io.fencekeeper.run.scope.Scope;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Which schedules exist at all: a window that crosses midnight is a night, one of no length is not;
 * a schedule built in code is refused naming the missing or impossible part, and one read from
 * configuration names its index and field for what {@link NightlyScheduleConfigTest} does not cover
 * (a missing field, a value of the wrong kind, a scope that is not a block).
 */
class NightlyScheduleTest {

  static final Scope SCOPE = new Scope.Csv("accounts.csv");
  static final LocalTime ONE = LocalTime.of(1, 0);
  static final LocalTime SIX = LocalTime.of(6, 0);

  @Test
  void aWindowAcrossMidnightIsANightAndAWindowOfNoLengthIsRefused() {
    NightlySchedule overnight =
        new NightlySchedule(
            "sweep", LocalTime.of(23, 0), LocalTime.of(5, 0), ZoneOffset.UTC, SCOPE, 1, 0);
    assertEquals(LocalTime.of(5, 0), overnight.deadline());

    assertRefused(
        () -> new NightlySchedule("sweep", ONE, ONE, ZoneOffset.UTC, SCOPE, 1, 0),
        "deadline must differ from start (both are 01:00); a run needs time to finish");
  }

  @Test
  void aScheduleBuiltInCodeNamesWhatIsMissingOrImpossible() {
    ZoneId utc = ZoneOffset.UTC;
    assertRefused(
        () -> new NightlySchedule("sweep", null, SIX, utc, SCOPE, 1, 0),
        "start is required (a local time like 01:00)");
    assertRefused(
        () -> new NightlySchedule("sweep", ONE, null, utc, SCOPE, 1, 0),
        "deadline is required (a local time like 06:00)");
    assertRefused(
        () -> new NightlySchedule("sweep", ONE, SIX, null, SCOPE, 1, 0),
        "zone is required (a time zone id like Europe/Berlin)");
    assertRefused(
        () -> new NightlySchedule("sweep", ONE, SIX, utc, null, 1, 0), "scope is required");
    assertRefused(
        () -> new NightlySchedule("sweep", ONE, SIX, utc, SCOPE, 0, 0),
        "maxAttempts must be at least 1, got 0");
    assertRefused(
        () -> new NightlySchedule("sweep", ONE, SIX, utc, SCOPE, 1, -1),
        "maxFailedItems must not be negative, got -1");
  }

  @Test
  void inConfigurationAMissingOrMistypedFieldIsNamedWithItsSchedule() {
    String full =
        "job = sweep, start = \"01:00\", deadline = \"06:00\", zone = UTC,"
            + " scope { type = csv, path = a.csv }, max-attempts = 3, max-failed-items = 0";
    assertConfigRefused(
        full.replace(" zone = UTC,", ""), "fencekeeper.schedules[0].zone is required");
    assertConfigRefused(
        full.replace(" scope { type = csv, path = a.csv },", ""),
        "fencekeeper.schedules[0].scope is required");
    assertConfigRefused(
        full.replace("scope { type = csv, path = a.csv }", "scope = a.csv"),
        "fencekeeper.schedules[0].scope must be an object like { type = csv, path ="
            + " \"accounts.csv\" }");
    assertConfigRefused(
        full.replace("start = \"01:00\"", "start = [1]"),
        "fencekeeper.schedules[0].start must be a string");
    assertConfigRefused(
        full.replace("max-attempts = 3", "max-attempts = 0"),
        "fencekeeper.schedules[0].max-attempts must be at least 1 (got 0)");
  }

  static void assertRefused(Executable build, String message) {
    assertEquals(message, assertThrows(IllegalArgumentException.class, build).getMessage());
  }

  static void assertConfigRefused(String entry, String message) {
    assertRefused(
        () ->
            NightlySchedule.fromConfig(
                ConfigFactory.parseString("fencekeeper.schedules = [ { " + entry + " } ]")),
        message);
  }
}
