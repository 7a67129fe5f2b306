package io.fencekeeper.bench.soak;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One item's journal, folded here without the product's code: its events as the database holds
 * them (the class name of each event, its payload read as a plain tree), counted the way
 * docs/design.md, "A run's counters come from the journal" defines the run's counters, and its
 * status and effect as the events leave them. The soak compares these with what the product says
 * (the run view) and with what the provider did (the sim's ledger), so a counting mistake in the
 * product cannot hide in a check that uses the same code.
 */
final class ItemHistory {

  /**
   * The statuses of docs/design.md, "The work item": spelled again here, not the product's enum, so
   * that what the checks read from the journal owes nothing to the code they check.
   */
  enum Status {
    PENDING,
    LEASED,
    DONE,
    FAILED,
    CLOSED,
    QUARANTINED
  }

  Status status = Status.PENDING;

  /** The recorded effect's kind (APPLIED, FOUND_BY_LOOKUP, NOTHING_TO_DO), null while none is. */
  String effectKind;

  long claims;
  long endedAttempts;
  long takeovers;
  long staleRejections;
  long reconciliations;
  long throttledAnswers;
  long quarantines;
  long events;

  /** The last quarantine's reason and lost holders, for the report. */
  String quarantine;

  /** Why the item last failed or was given up, for the report. */
  String lastError;

  /** The incarnations (journal writers) that wrote the item, in the order they first wrote. */
  final java.util.List<String> writers = new java.util.ArrayList<>(2);

  /** A writer that wrote again after another had written: two live incarnations at once. */
  String interleaved;

  /**
   * The row's writer: one incarnation of the entity. A new one takes over from the last for good (a
   * node died, or the shard moved); one that writes again after another had written means two
   * incarnations of the item were live at once (a split brain).
   */
  void writtenBy(String writer) {
    int known = writers.indexOf(writer);
    if (known < 0) {
      writers.add(writer);
    } else if (known != writers.size() - 1 && interleaved == null) {
      interleaved = writers + " then " + writer + " again at event " + (events + 1);
    }
  }

  /**
   * One event: {@code manifest} is its serializer manifest, the event's class name ({@code
   * io.fencekeeper.item.WorkItem$LeaseGranted}), {@code event} its fields.
   */
  void add(String manifest, JsonNode event) {
    events++;
    switch (eventName(manifest)) {
      case "LeaseGranted" -> {
        claims++;
        if (present(event, "previousOwner")) {
          // the previous holder's attempt ends here
          takeovers++;
          endedAttempts++;
        }
        status = Status.LEASED;
      }
      case "EffectRecorded" -> {
        reconciliations += event.path("reconciled").asBoolean() ? 1 : 0;
        effectKind = event.path("outcome").path("kind").asText(effectKind);
      }
      case "ItemCompleted" -> {
        reconciliations += event.path("reconciled").asBoolean() ? 1 : 0;
        throttledAnswers += event.path("throttles").asLong();
        if (present(event, "outcome")) {
          effectKind = event.path("outcome").path("kind").asText(effectKind);
        }
        endedAttempts++;
        status = Status.DONE;
      }
      case "AttemptFailed" -> {
        throttledAnswers += event.path("throttles").asLong();
        endedAttempts++;
        lastError = event.path("error").asText();
        status = event.path("exhausted").asBoolean() ? Status.FAILED : Status.PENDING;
      }
      case "LeaseReleased" -> {
        endedAttempts++;
        status = Status.PENDING;
      }
      case "ItemReopened", "RetryRequested" -> status = Status.PENDING;
      case "ItemClosed" -> {
        endedAttempts += present(event, "abandonedOwner") ? 1 : 0;
        status = Status.CLOSED;
      }
      case "ItemQuarantined" -> {
        endedAttempts += present(event, "previousOwner") ? 1 : 0;
        quarantines++;
        quarantine = event.path("reason").asText() + " " + event.path("lostOwners");
        status = Status.QUARANTINED;
      }
      case "AttemptsExhausted" -> {
        endedAttempts += present(event, "previousOwner") ? 1 : 0;
        lastError = event.path("reason").asText();
        status = Status.FAILED;
      }
      case "StaleCommandRejected" -> staleRejections++;
      case "LateHolderHeard" -> {
        if (event.path("quarantineLifted").asBoolean() && status == Status.QUARANTINED) {
          status = Status.PENDING;
        }
      }
      default -> {
        // LeaseRenewed, MarkedAmbiguous, HolderNodeAlive: no status, no counter
      }
    }
  }

  /**
   * The effects the provider may hold for this item: exactly one for a DONE item whose plan had an
   * action, none for one whose plan had nothing to do, at most one otherwise.
   */
  boolean effectsAgree(int effects) {
    if (status == Status.DONE) {
      return effects == ("NOTHING_TO_DO".equals(effectKind) ? 0 : 1);
    }
    return effects <= 1;
  }

  /** The event's simple name: after the last {@code $} or {@code .}, before a {@code #version}. */
  static String eventName(String manifest) {
    String name = manifest;
    int version = name.indexOf('#');
    if (version >= 0) {
      name = name.substring(0, version);
    }
    return name.substring(Math.max(name.lastIndexOf('$'), name.lastIndexOf('.')) + 1);
  }

  private static boolean present(JsonNode event, String field) {
    JsonNode value = event.get(field);
    return value != null && !value.isNull();
  }
}
