package io.fencekeeper.sdk.provider.check;

import io.fencekeeper.sdk.provider.Guarantees;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What a check run found: one line per {@link Guarantee}, in its order, and what Fencekeeper can
 * promise with this provider. Printed as a table or as JSON ({@code fencekeeper provider-check
 * --json}).
 */
public record CheckReport(
    String provider,
    Guarantees claims,
    String claimsSource,
    String runId,
    LocalDate businessDate,
    List<CheckResult> results) {

  /** Every guarantee the provider claims holds (none broken, none left unknown). */
  public static final int HOLDS = 0;

  /** A guarantee the provider claims is broken. */
  public static final int BROKEN = 1;

  /** None broken, but a claimed guarantee could not be shown either way. */
  public static final int INCONCLUSIVE = 3;

  public CheckReport {
    results = List.copyOf(results);
  }

  /** The first claimed guarantee shown broken, in the report's order. */
  public Optional<CheckResult> firstBroken() {
    return results.stream().filter(r -> r.claimed() && r.verdict() == Verdict.BROKEN).findFirst();
  }

  /** The first claimed guarantee that could not be shown either way. */
  public Optional<CheckResult> firstInconclusive() {
    return results.stream()
        .filter(r -> r.claimed() && r.verdict() == Verdict.INCONCLUSIVE)
        .findFirst();
  }

  /** {@link #HOLDS}, {@link #BROKEN} or {@link #INCONCLUSIVE}. */
  public int exitCode() {
    if (firstBroken().isPresent()) {
      return BROKEN;
    }
    return firstInconclusive().isPresent() ? INCONCLUSIVE : HOLDS;
  }

  public Optional<CheckResult> result(Guarantee guarantee) {
    return results.stream().filter(r -> r.guarantee() == guarantee).findFirst();
  }

  /** The last line: all hold, or the first broken (or unknown) guarantee by name. */
  public String conclusion() {
    Optional<CheckResult> broken = firstBroken();
    if (broken.isPresent()) {
      return "BROKEN: "
          + broken.get().guarantee().id()
          + " ("
          + broken.get().guarantee().title()
          + "): "
          + broken.get().detail();
    }
    Optional<CheckResult> unknown = firstInconclusive();
    if (unknown.isPresent()) {
      return "INCONCLUSIVE: "
          + unknown.get().guarantee().id()
          + " ("
          + unknown.get().guarantee().title()
          + "): "
          + unknown.get().detail();
    }
    return "OK: every guarantee the provider claims holds";
  }

  /** The report for people: a header, one row per guarantee with its detail beneath, the end. */
  public String table() {
    StringBuilder out = new StringBuilder();
    out.append("provider  ").append(provider).append('\n');
    out.append("claims    ").append(claimed(claims)).append(" (").append(claimsSource);
    out.append(")\n");
    out.append("run       jobs pc-").append(runId).append("-*, business date ");
    out.append(businessDate).append("\n\n");
    out.append(String.format("%-22s %-8s %-13s %s%n", "guarantee", "claimed", "verdict", "id"));
    for (CheckResult r : results) {
      out.append(
          String.format(
              "%-22s %-8s %-13s %s%n",
              r.guarantee().title(),
              r.claimed() ? "yes" : "no",
              r.verdict().name().toLowerCase(java.util.Locale.ROOT).replace('_', ' '),
              r.guarantee().id()));
      out.append("    seen:     ").append(r.detail()).append('\n');
      out.append("    promise:  ").append(r.promise()).append('\n');
    }
    out.append('\n').append(conclusion()).append('\n');
    return out.toString();
  }

  /** The report for machines. */
  public String json() {
    StringBuilder out = new StringBuilder("{");
    field(out, "provider", provider).append(',');
    out.append("\"claims\":{\"fences\":").append(claims.fences());
    out.append(",\"keepsKeys\":").append(claims.keepsKeys());
    out.append(",\"honoursDeadline\":").append(claims.honoursDeadline()).append("},");
    field(out, "claimsSource", claimsSource).append(',');
    field(out, "runId", runId).append(',');
    field(out, "businessDate", businessDate.toString()).append(',');
    out.append("\"exitCode\":").append(exitCode()).append(',');
    out.append("\"firstBroken\":");
    Optional<CheckResult> broken = firstBroken();
    if (broken.isPresent()) {
      quote(out, broken.get().guarantee().id());
    } else {
      out.append("null");
    }
    out.append(",\"guarantees\":[");
    List<String> rows = new ArrayList<>();
    for (CheckResult r : results) {
      StringBuilder row = new StringBuilder("{");
      field(row, "id", r.guarantee().id()).append(',');
      field(row, "title", r.guarantee().title()).append(',');
      row.append("\"claimed\":").append(r.claimed()).append(',');
      field(row, "verdict", r.verdict().name()).append(',');
      field(row, "detail", r.detail()).append(',');
      field(row, "promise", r.promise()).append('}');
      rows.add(row.toString());
    }
    out.append(String.join(",", rows)).append("]}");
    return out.toString();
  }

  static String claimed(Guarantees claims) {
    List<String> names = new ArrayList<>();
    if (claims.fences()) {
      names.add("fences");
    }
    if (claims.keepsKeys()) {
      names.add("keeps keys");
    }
    if (claims.honoursDeadline()) {
      names.add("honours the deadline");
    }
    return names.isEmpty() ? "none beyond answering" : String.join(", ", names);
  }

  private static StringBuilder field(StringBuilder out, String name, String value) {
    quote(out, name).append(':');
    return quote(out, value);
  }

  private static StringBuilder quote(StringBuilder out, String value) {
    out.append('"');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"');
  }
}
