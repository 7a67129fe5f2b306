package io.fencekeeper.api.ops;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.Stages;
import io.fencekeeper.api.http.ApiCall;
import io.fencekeeper.api.http.ApiError;
import io.fencekeeper.api.http.ApiResponse;
import io.fencekeeper.api.http.JsonBody;
import io.fencekeeper.archive.RetentionKeeper;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code POST /api/archive/prune} (docs/design.md, "Retention and the archive"): retention on an
 * operator's demand, for the runs that ended before a date or instant; {@code dryRun} only lists
 * them. The answer is the plan: 202 while the pass goes on, 200 for a dry run, 409 while another
 * pass runs.
 */
public final class ArchiveEndpoints {

  private static final Logger log = LoggerFactory.getLogger(ArchiveEndpoints.class);

  /** Planning reads run_record and asks the coordinator about each run it lists. */
  static final Duration PLAN_TIMEOUT = Duration.ofSeconds(15);

  private final ObjectMapper mapper;
  private final ActorSystem<?> system;
  private final ActorRef<RetentionKeeper.Command> keeper;

  public ArchiveEndpoints(
      ObjectMapper mapper, ActorSystem<?> system, ActorRef<RetentionKeeper.Command> keeper) {
    this.mapper = mapper;
    this.system = system;
    this.keeper = keeper;
  }

  public CompletionStage<ApiResponse> prune(ApiCall call) {
    JsonBody body = JsonBody.parse(mapper, call.body(), Set.of("endedBefore", "dryRun"));
    Instant endedBefore = endedBefore(body.requireString("endedBefore", 64));
    boolean dryRun = body.optionalBoolean("dryRun", false);
    log.info(
        "retention on demand: runs that ended before {}{}",
        endedBefore,
        dryRun ? " (dry run)" : "");
    return Stages.on(
            AskPattern.<RetentionKeeper.Command, RetentionKeeper.PruneAnswer>ask(
                keeper,
                replyTo -> new RetentionKeeper.Prune(endedBefore, dryRun, replyTo),
                PLAN_TIMEOUT,
                system.scheduler()),
            system.executionContext())
        .thenApply(this::answer);
  }

  private ApiResponse answer(RetentionKeeper.PruneAnswer answer) {
    if (answer instanceof RetentionKeeper.PruneRefused refused) {
      int status = refused.error().equals("retention_busy") ? 409 : 503;
      throw new ApiError(status, refused.error(), refused.message());
    }
    RetentionKeeper.PrunePlanned plan = (RetentionKeeper.PrunePlanned) answer;
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("endedBefore", plan.endedBefore());
    body.put("dryRun", plan.dryRun());
    body.put("started", plan.started());
    body.put("total", plan.total());
    body.put("runs", plan.runs());
    return ApiResponse.json(plan.started() ? 202 : 200, body);
  }

  /** A date (its start, UTC) or an instant; the message names the field, never the value. */
  static Instant endedBefore(String text) {
    try {
      return text.length() == 10
          ? LocalDate.parse(text).atStartOfDay(ZoneOffset.UTC).toInstant()
          : Instant.parse(text);
    } catch (DateTimeParseException e) {
      throw ApiError.badRequest(
          "endedBefore",
          "endedBefore must be a date such as 2026-12-01 (its start, UTC) or an ISO-8601 instant"
              + " such as 2026-12-01T06:00:00Z");
    }
  }
}
