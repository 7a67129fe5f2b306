package io.fencekeeper.run.schedule;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigList;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigRenderOptions;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.run.scope.Scope;
import java.time.DateTimeException;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A job that runs every night: it fires at {@code start} local time in {@code zone} and its run
 * must be finished by the next {@code deadline} local time (see {@link ScheduleCalendar} for the
 * exact rules, including daylight saving). Each firing creates the run {@code job/businessDate}
 * with this schedule's scope and limits; run creation is idempotent, so a firing delivered twice
 * creates one run.
 */
public record NightlySchedule(
    String job,
    LocalTime start,
    LocalTime deadline,
    ZoneId zone,
    Scope scope,
    int maxAttempts,
    int maxFailedItems) {

  static final String CONFIG_PATH = "fencekeeper.schedules";

  private static final Set<String> CONFIG_FIELDS =
      Set.of("job", "start", "deadline", "zone", "scope", "max-attempts", "max-failed-items");

  private static final ObjectMapper SCOPE_JSON = new ObjectMapper();

  public NightlySchedule {
    ItemId.requireSegment("job", job);
    if (start == null) {
      throw new IllegalArgumentException("start is required (a local time like 01:00)");
    }
    if (deadline == null) {
      throw new IllegalArgumentException("deadline is required (a local time like 06:00)");
    }
    if (deadline.equals(start)) {
      throw new IllegalArgumentException(
          "deadline must differ from start (both are " + start + "); a run needs time to finish");
    }
    if (zone == null) {
      throw new IllegalArgumentException("zone is required (a time zone id like Europe/Berlin)");
    }
    if (scope == null) {
      throw new IllegalArgumentException("scope is required");
    }
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
    }
    if (maxFailedItems < 0) {
      throw new IllegalArgumentException(
          "maxFailedItems must not be negative, got " + maxFailedItems);
    }
  }

  /**
   * The schedules under {@code fencekeeper.schedules}; none when the list is absent.
   *
   * <pre>
   * fencekeeper.schedules = [
   *   { job = "payment-reconciliation", start = "01:00", deadline = "06:00", zone = "Europe/Berlin",
   *     scope { type = csv, path = "examples/accounts.csv" }, max-attempts = 5, max-failed-items = 10 }
   * ]
   * </pre>
   *
   * The scope block has the JSON shape of the HTTP API ({@code type} csv, inline or sql).
   *
   * @throws IllegalArgumentException naming the schedule's index and field, e.g. {@code
   *     fencekeeper.schedules[1].zone must be a time zone id like Europe/Berlin (got 'Berlin')}
   */
  public static List<NightlySchedule> fromConfig(Config config) {
    if (!config.hasPath(CONFIG_PATH)) {
      return List.of();
    }
    ConfigValue value = config.getValue(CONFIG_PATH);
    if (value.valueType() != ConfigValueType.LIST) {
      throw new IllegalArgumentException(
          CONFIG_PATH + " must be a list of schedules, got " + typeName(value));
    }
    List<NightlySchedule> schedules = new ArrayList<>();
    Map<String, Integer> indexByJob = new HashMap<>();
    ConfigList entries = (ConfigList) value;
    for (int index = 0; index < entries.size(); index++) {
      String where = CONFIG_PATH + "[" + index + "]";
      ConfigValue entry = entries.get(index);
      if (entry.valueType() != ConfigValueType.OBJECT) {
        throw new IllegalArgumentException(
            where + " must be an object { job = ..., start = ..., ... }, got " + typeName(entry));
      }
      NightlySchedule schedule = fromEntry(where, ((ConfigObject) entry).toConfig());
      Integer earlier = indexByJob.putIfAbsent(schedule.job(), index);
      if (earlier != null) {
        // one run per job and business date: two schedules of one job would fight over it
        throw new IllegalArgumentException(
            where
                + ".job '"
                + schedule.job()
                + "' is already scheduled by "
                + CONFIG_PATH
                + "["
                + earlier
                + "]");
      }
      schedules.add(schedule);
    }
    return List.copyOf(schedules);
  }

  private static NightlySchedule fromEntry(String where, Config entry) {
    Set<String> unknown = new TreeSet<>(entry.root().keySet());
    unknown.removeAll(CONFIG_FIELDS);
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException(
          where
              + " has unknown fields "
              + unknown
              + " (known: "
              + new TreeSet<>(CONFIG_FIELDS)
              + ")");
    }
    String job = string(where, entry, "job");
    try {
      ItemId.requireSegment("job", job);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(where + "." + e.getMessage(), e);
    }
    LocalTime start = localTime(where, entry, "start");
    LocalTime deadline = localTime(where, entry, "deadline");
    ZoneId zone = zone(where, entry);
    Scope scope = scope(where, entry);
    int maxAttempts = wholeNumber(where, entry, "max-attempts", 1);
    int maxFailedItems = wholeNumber(where, entry, "max-failed-items", 0);
    try {
      return new NightlySchedule(job, start, deadline, zone, scope, maxAttempts, maxFailedItems);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(where + "." + e.getMessage(), e);
    }
  }

  private static String string(String where, Config entry, String field) {
    if (!entry.hasPath(field)) {
      throw new IllegalArgumentException(where + "." + field + " is required");
    }
    try {
      return entry.getString(field);
    } catch (ConfigException.WrongType e) {
      throw new IllegalArgumentException(where + "." + field + " must be a string", e);
    }
  }

  private static LocalTime localTime(String where, Config entry, String field) {
    String text = string(where, entry, field);
    try {
      return LocalTime.parse(text);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(
          where + "." + field + " must be a local time like 01:00 (got '" + text + "')", e);
    }
  }

  private static ZoneId zone(String where, Config entry) {
    String text = string(where, entry, "zone");
    try {
      return ZoneId.of(text);
    } catch (DateTimeException e) {
      throw new IllegalArgumentException(
          where + ".zone must be a time zone id like Europe/Berlin (got '" + text + "')", e);
    }
  }

  private static int wholeNumber(String where, Config entry, String field, int minimum) {
    if (!entry.hasPath(field)) {
      throw new IllegalArgumentException(where + "." + field + " is required");
    }
    int number;
    try {
      number = entry.getInt(field);
    } catch (ConfigException.WrongType e) {
      throw new IllegalArgumentException(where + "." + field + " must be a whole number", e);
    }
    if (number < minimum) {
      throw new IllegalArgumentException(
          where + "." + field + " must be at least " + minimum + " (got " + number + ")");
    }
    return number;
  }

  /** The scope block is read through the same Jackson mapping as the HTTP API's JSON. */
  private static Scope scope(String where, Config entry) {
    if (!entry.hasPath("scope")) {
      throw new IllegalArgumentException(where + ".scope is required");
    }
    ConfigValue value = entry.getValue("scope");
    if (value.valueType() != ConfigValueType.OBJECT) {
      throw new IllegalArgumentException(
          where + ".scope must be an object like { type = csv, path = \"accounts.csv\" }");
    }
    try {
      return SCOPE_JSON.readValue(value.render(ConfigRenderOptions.concise()), Scope.class);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(where + ".scope: " + reason(e), e);
    }
  }

  private static String reason(JsonProcessingException e) {
    for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
      if (cause instanceof IllegalArgumentException) {
        return cause.getMessage(); // the scope's own validation message
      }
    }
    return e.getOriginalMessage();
  }

  private static String typeName(ConfigValue value) {
    return value.valueType().name().toLowerCase(Locale.ROOT);
  }
}
