package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.ProviderName;
import io.fencekeeper.run.scope.Scope;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;

/**
 * What a caller asks for when creating a run; two requests for one run must be equal. {@code
 * provider} names the provider the run calls (null: the default one, as in runs journaled before
 * providers had names).
 */
public record RunRequest(
    String job,
    LocalDate businessDate,
    Scope scope,
    Instant deadline,
    int maxAttempts,
    int maxFailedItems,
    String provider)
    implements CborSerializable {

  /** A run of the default provider. */
  public RunRequest(
      String job,
      LocalDate businessDate,
      Scope scope,
      Instant deadline,
      int maxAttempts,
      int maxFailedItems) {
    this(job, businessDate, scope, deadline, maxAttempts, maxFailedItems, null);
  }

  public String runId() {
    return job + "/" + businessDate;
  }

  /** The provider the run calls. */
  public String providerName() {
    return ProviderName.orDefault(provider);
  }

  /** Every problem with the request, each naming its field; empty when it is valid. */
  public List<String> problems() {
    List<String> problems = new ArrayList<>();
    try {
      ItemId.requireSegment("job", job);
    } catch (IllegalArgumentException e) {
      problems.add(e.getMessage());
    }
    if (businessDate == null) {
      problems.add("businessDate is required (yyyy-MM-dd)");
    }
    if (scope == null) {
      problems.add("scope is required");
    }
    if (deadline == null) {
      problems.add("deadline is required (an ISO-8601 instant)");
    }
    if (maxAttempts < 1 || maxAttempts > 100) {
      problems.add("maxAttempts must be between 1 and 100, got " + maxAttempts);
    }
    if (maxFailedItems < 0) {
      problems.add("maxFailedItems must not be negative, got " + maxFailedItems);
    }
    if (provider != null) {
      ProviderName.problem(provider).ifPresent(problems::add);
    }
    return problems;
  }

  /** Which parameters differ from another request for the same run, for a conflict message. */
  public List<String> differencesFrom(RunRequest other) {
    List<String> differences = new ArrayList<>();
    if (!scope.equals(other.scope)) {
      differences.add("scope");
    }
    if (!deadline.equals(other.deadline)) {
      differences.add("deadline (" + other.deadline + " vs " + deadline + ")");
    }
    if (maxAttempts != other.maxAttempts) {
      differences.add("maxAttempts (" + other.maxAttempts + " vs " + maxAttempts + ")");
    }
    if (maxFailedItems != other.maxFailedItems) {
      differences.add("maxFailedItems (" + other.maxFailedItems + " vs " + maxFailedItems + ")");
    }
    if (!providerName().equals(other.providerName())) {
      differences.add("provider (" + other.providerName() + " vs " + providerName() + ")");
    }
    return differences;
  }
}
