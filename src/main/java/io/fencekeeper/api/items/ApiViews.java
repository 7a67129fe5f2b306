package io.fencekeeper.api.items;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fencekeeper.api.http.ApiError;
import io.fencekeeper.item.ItemAudit;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.governor.GovernorSettings;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON shapes of docs/design.md, "HTTP API" that are not a domain record as it is. */
public final class ApiViews {

  private ApiViews() {}

  /**
   * The lease a claim granted; {@code accountId} and {@code cursor} tell an external worker what to
   * do. {@code lookupAfter}, with an AMBIGUOUS effect: the end of the last lease under which a
   * cleanup may have been sent; the worker looks the key up only after it plus its clock-skew
   * allowance (docs/provider-protocol.md, "The deadline").
   */
  public record ClaimView(
      String itemId,
      long token,
      Instant leaseExpiresAt,
      int attempt,
      WorkItem.EffectStatus effect,
      String idempotencyKey,
      boolean takeover,
      String runId,
      String accountId,
      String cursor,
      @JsonInclude(JsonInclude.Include.NON_NULL) Instant lookupAfter) {

    public static ClaimView of(WorkItem.Claimed claimed) {
      ItemId id = ItemId.parse(claimed.itemId());
      return new ClaimView(
          claimed.itemId(),
          claimed.token(),
          claimed.leaseExpiresAt(),
          claimed.attempt(),
          claimed.effect(),
          claimed.idempotencyKey(),
          claimed.takeover(),
          id.runId(),
          id.accountId(),
          id.cursor(),
          claimed.lookupAfter());
    }
  }

  /** A run view plus the governor state the API shows with it. */
  public static ObjectNode run(ObjectMapper mapper, RunView view, GovernorView governor) {
    ObjectNode node = mapper.valueToTree(view);
    node.remove("scopeId"); // the node's own bookkeeping, not part of the API
    node.set("governor", mapper.valueToTree(governor));
    return node;
  }

  /**
   * The run, unless retention archived it: then its items and their journals are gone from here and
   * a request about them is 410 (the message says where to look, never the file or the node).
   */
  public static RunView requireItemsHere(RunView run) {
    if (run.archive() != null) {
      throw new ApiError(
          410,
          "run_archived",
          "run "
              + run.runId()
              + " was archived by retention at "
              + run.archive().archivedAt()
              + ": its items are no longer here; GET /api/runs/{runId} says where its archive is"
              + " (fencekeeper archive show and audit read it)");
    }
    return run;
  }

  /**
   * The caps in force and, for a run, the governor's current decision (mode, cap, reason) and its
   * recent changes.
   */
  public record GovernorView(
      int normalCap,
      int burstCap,
      int minCap,
      String decision,
      Integer cap,
      String reason,
      List<io.fencekeeper.run.governor.GovernorView.Change> changes) {
    public static GovernorView of(GovernorSettings settings) {
      return new GovernorView(
          settings.normalCap(),
          settings.burstCap(),
          settings.minCap(),
          null,
          null,
          null,
          List.of());
    }

    public static GovernorView of(
        GovernorSettings settings, io.fencekeeper.run.governor.GovernorView run) {
      if (run == null) {
        return of(settings);
      }
      return new GovernorView(
          settings.normalCap(),
          settings.burstCap(),
          settings.minCap(),
          run.mode().name(),
          run.cap(),
          run.reason(),
          run.changes());
    }
  }

  /** One journaled event of an item: its sequence number, time, type and fields. */
  public static Map<String, Object> auditEvent(ObjectMapper mapper, ItemAudit.Entry entry) {
    ObjectNode fields = mapper.valueToTree(entry.event());
    fields.remove("at");
    Map<String, Object> event = new LinkedHashMap<>();
    event.put("sequenceNr", entry.sequenceNr());
    event.put("at", entry.at());
    event.put("type", entry.type());
    event.put("fields", fields);
    return event;
  }

  /** An item's journal: every event with its sequence number, time, type and fields. */
  static Map<String, Object> audit(
      ObjectMapper mapper, ItemId itemId, List<ItemAudit.Entry> trail, int limit) {
    List<Map<String, Object>> events = trail.stream().map(e -> auditEvent(mapper, e)).toList();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("itemId", itemId.value());
    body.put("events", events);
    if (trail.size() == limit) {
      // a full page: more may follow after the last one
      body.put("next", trail.get(trail.size() - 1).sequenceNr());
    }
    return body;
  }
}
