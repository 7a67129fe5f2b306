package io.fencekeeper.api.items;

import static io.fencekeeper.api.ApiRefusals.assertRefused;
import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.api.ApiTestNode;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What {@link ItemEndpoints} decides, over real HTTP: an id that is no item of a run is refused by
 * every command before anything is journaled, a bad body before the item is even looked up; the
 * run's attempt limit goes with every claim; and each command's fields have their own bounds (an
 * effect's outcome, a failure's retry delay, free text, the audit's pages). The refusals an
 * existing test already makes (malformed JSON, wrong types, bad ids, huge leases, another worker's
 * token) are not made again.
 */
class ItemEndpointsTest {

  private static final String HOSTILE = "<script>alert(1)</script>";
  private final ApiTestNode api = ApiTestNode.get();

  private static String item(String itemId) {
    return "/api/items/" + seg(itemId);
  }

  /** A fresh run of one pending item; the item's path. */
  private String pendingItem(String prefix) {
    return item(ApiTestNode.itemId(api.createRun(ApiTestNode.newJob(prefix), 1), 1));
  }

  private long claim(String item) {
    ApiTestNode.Answer claimed =
        api.post(item + "/claim", "{\"workerId\":\"w\",\"leaseMillis\":600000}");
    assertEquals(200, claimed.status(), claimed.body());
    return claimed.tree().path("token").asLong();
  }

  /** The journal's events of the item, read from the node's database itself. */
  private long journaled(String itemId) {
    var db = api.node.database();
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        PreparedStatement count =
            c.prepareStatement(
                "SELECT count(*) FROM \"event_journal\" WHERE \"persistence_id\" = ?")) {
      count.setString(1, WorkItem.persistenceId(ItemId.parse(itemId)).id());
      try (ResultSet rows = count.executeQuery()) {
        rows.next();
        return rows.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void anIdThatIsNoItemOfARunIsRefusedByEveryCommandAndNeverJournaled() {
    String runId = api.createRun(ApiTestNode.newJob("stranger"), 1);
    String stranger = ApiTestNode.itemId(runId, 2);
    String noRun = ApiTestNode.newJob("no-run") + "/2026-11-29/a-1/c-1";
    String held = "{\"workerId\":\"w\",\"token\":1";
    Map<String, String> commands =
        Map.of(
            "/claim", "{\"workerId\":\"w\",\"leaseMillis\":1000}",
            "/renew", held + ",\"leaseMillis\":1000}",
            "/effect", held + ",\"outcome\":{\"kind\":\"APPLIED\"}}",
            "/ambiguous", held + ",\"reason\":\"timeout\"}",
            "/complete", held + "}",
            "/fail", held + ",\"error\":\"x\"}",
            "/release", held + "}",
            "/retry", "{}");
    for (String id : List.of(stranger, noRun)) {
      commands.forEach(
          (command, body) -> {
            JsonNode refused = assertRefused(api.post(item(id) + command, body), 404, null);
            assertEquals("unknown_item", refused.path("error").asText(), command);
          });
      assertRefused(api.get(item(id)), 404, null);
      assertRefused(api.get(item(id) + "/audit"), 404, null);
    }
    assertTrue(
        api.get(item(noRun)).tree().path("message").asText().contains("there is no run"),
        "says the run is missing, not the item");

    assertEquals(0, journaled(stranger), "a typo never starts an item");
    assertEquals(0, journaled(noRun));
    claim(item(ApiTestNode.itemId(runId, 1)));
    assertEquals(1, journaled(ApiTestNode.itemId(runId, 1)), "the claim of the real item is");
  }

  @Test
  void aBadBodyIsRefusedBeforeTheItemIsLookedUp() {
    String noRun = item(ApiTestNode.newJob("no-run") + "/2026-11-29/a-1/c-1");

    assertRefused(api.post(noRun + "/claim", "{\"leaseMillis\":1000}"), 400, "workerId");
    assertRefused(api.post(noRun + "/complete", "{\"workerId\":\"w\"}"), 400, "token");
    assertRefused(api.post(noRun + "/retry", "{\"now\":true}"), 400, "now");
  }

  @Test
  void everyClaimCarriesTheRunsAttemptLimit() {
    String job = ApiTestNode.newJob("one-attempt");
    ApiTestNode.Answer created =
        api.post(
            "/api/runs",
            ApiTestNode.createBody(
                job,
                "2026-11-29",
                "{\"type\":\"inline\",\"accounts\":[{\"accountId\":\"a-1\",\"cursor\":\"c-1\"}]}",
                ",\"maxAttempts\":1"));
    assertEquals(201, created.status(), created.body());
    String once = item(ApiTestNode.itemId(job + "/2026-11-29", 1));
    String fiveTimes = pendingItem("five-attempts");

    long onceToken = claim(once);
    long fiveToken = claim(fiveTimes);
    ApiTestNode.Answer exhausted =
        api.post(
            once + "/fail", "{\"workerId\":\"w\",\"token\":" + onceToken + ",\"error\":\"x\"}");
    ApiTestNode.Answer again =
        api.post(
            fiveTimes + "/fail",
            "{\"workerId\":\"w\",\"token\":" + fiveToken + ",\"error\":\"x\"}");

    assertEquals(1, api.get(once).tree().path("maxAttempts").asInt());
    assertEquals(5, api.get(fiveTimes).tree().path("maxAttempts").asInt());
    assertEquals("FAILED", exhausted.tree().path("status").asText(), exhausted.body());
    assertEquals(
        "PENDING", again.tree().path("status").asText(), "retryable unless said: " + again.body());
  }

  @Test
  void aFailureWaitsTheRetryDelayItAsksForUpToADay() {
    String item = pendingItem("retry-after");
    long token = claim(item);
    String holder = "{\"workerId\":\"w\",\"token\":" + token;

    assertRefused(
        api.post(item + "/fail", holder + ",\"error\":\"x\",\"retryAfterMillis\":86400001}"),
        400,
        "retryAfterMillis");
    assertRefused(
        api.post(item + "/fail", holder + ",\"error\":\"x\",\"retryAfterMillis\":-1}"),
        400,
        "retryAfterMillis");
    assertRefused(api.post(item + "/fail", holder + "}"), 400, "error");
    assertRefused(
        api.post(item + "/fail", holder + ",\"error\":\"" + "e".repeat(1001) + "\"}"),
        400,
        "error",
        "eeeeeeeeee");
    assertEquals("LEASED", api.get(item).tree().path("status").asText(), "nothing was failed");

    Instant now = ApiTestNode.CLOCK.instant();
    ApiTestNode.Answer failed =
        api.post(item + "/fail", holder + ",\"error\":\"busy\",\"retryAfterMillis\":3600000}");
    JsonNode notYet =
        assertRefused(
            api.post(item + "/claim", "{\"workerId\":\"w2\",\"leaseMillis\":1000}"), 409, null);

    assertEquals(200, failed.status(), failed.body());
    assertEquals("PENDING", failed.tree().path("status").asText());
    String retryAt = now.plus(Duration.ofHours(1)).toString();
    assertEquals(retryAt, failed.tree().path("retryAt").asText(), failed.body());
    assertEquals("not_claimable", notYet.path("error").asText());
    assertEquals(retryAt, notYet.path("retryAt").asText(), notYet.toString());
  }

  @Test
  void anEffectsOutcomeIsReadByItsOwnRules() {
    String item = pendingItem("outcome");
    long token = claim(item);
    String holder = "{\"workerId\":\"w\",\"token\":" + token + ",\"outcome\":";

    assertRefused(api.post(item + "/effect", holder + "\"APPLIED\"}"), 400, "outcome");
    JsonNode extra =
        assertRefused(
            api.post(item + "/effect", holder + "{\"kind\":\"APPLIED\",\"amount\":5}}"),
            400,
            "outcome");
    assertTrue(extra.path("message").asText().startsWith("outcome: "), extra.toString());
    assertRefused(
        api.post(item + "/effect", holder + "{\"kind\":\"" + HOSTILE + "\"}}"),
        400,
        "outcome.kind",
        HOSTILE);
    JsonNode longReference =
        assertRefused(
            api.post(
                item + "/effect",
                holder
                    + "{\"kind\":\"APPLIED\",\"providerReference\":\""
                    + "r".repeat(501)
                    + "\"}}"),
            400,
            "outcome.providerReference",
            "rrrrrrrrrr");
    assertTrue(
        longReference.path("message").asText().contains("providerReference"),
        longReference.toString());
    assertRefused(
        api.post(
            item + "/effect",
            holder + "{\"kind\":\"APPLIED\",\"detail\":\"" + "d".repeat(1001) + "\"}}"),
        400,
        "outcome.detail",
        "dddddddddd");
    assertRefused(
        api.post(item + "/effect", holder + "{\"providerReference\":\"p\"}}"), 400, "outcome.kind");
    assertEquals("NONE", api.get(item).tree().path("effect").asText(), "nothing was recorded");

    ApiTestNode.Answer recorded =
        api.post(
            item + "/effect",
            holder
                + "{\"kind\":\"found_by_lookup\",\"providerReference\":\"p-7\",\"detail\":\"d\"}}");

    assertEquals(200, recorded.status(), recorded.body());
    JsonNode outcome = recorded.tree().path("effectOutcome");
    assertEquals("FOUND_BY_LOOKUP", outcome.path("kind").asText(), "any case: " + recorded.body());
    assertEquals("p-7", outcome.path("providerReference").asText());
    assertEquals("d", outcome.path("detail").asText());
  }

  @Test
  void workerIdsReasonsAndTokensHaveTheirBounds() {
    String item = pendingItem("bounds");

    assertRefused(
        api.post(
            item + "/claim", "{\"workerId\":\"" + "w".repeat(201) + "\",\"leaseMillis\":1000}"),
        400,
        "workerId",
        "wwwwwwwwww");
    assertRefused(
        api.post(item + "/claim", "{\"workerId\":\"  \",\"leaseMillis\":1000}"), 400, "workerId");
    assertEquals("PENDING", api.get(item).tree().path("status").asText(), "nothing was claimed");
    String longest = "w".repeat(200);
    ApiTestNode.Answer claimed =
        api.post(item + "/claim", "{\"workerId\":\"" + longest + "\",\"leaseMillis\":600000}");
    assertEquals(200, claimed.status(), claimed.body());
    String holder = "{\"workerId\":\"" + longest + "\",\"token\":" + claimed.tree().path("token");

    assertRefused(api.post(item + "/ambiguous", holder + "}"), 400, "reason");
    assertRefused(
        api.post(item + "/ambiguous", holder + ",\"reason\":\"" + "r".repeat(1001) + "\"}"),
        400,
        "reason");
    assertRefused(
        api.post(
            item + "/renew",
            "{\"workerId\":\"w\",\"token\":9223372036854775808,\"leaseMillis\":1000}"),
        400,
        "token");
    assertRefused(
        api.post(item + "/renew", holder + ",\"leaseMillis\":3600001}"), 400, "leaseMillis");
    assertEquals(
        1, api.get(item + "/audit").tree().path("events").size(), "only the claim was journaled");
  }

  @Test
  void aRetryTakesNoFieldsAndPutsAFailedItemBack() {
    String item = pendingItem("retry");
    long token = claim(item);
    api.post(
        item + "/fail",
        "{\"workerId\":\"w\",\"token\":" + token + ",\"error\":\"x\",\"retryable\":false}");

    assertRefused(api.post(item + "/retry", "{\"force\":true}"), 400, "force");
    assertEquals("FAILED", api.get(item).tree().path("status").asText());
    ApiTestNode.Answer retried = api.post(item + "/retry", "{}");

    assertEquals(200, retried.status(), retried.body());
    assertEquals("PENDING", retried.tree().path("status").asText());
  }

  @Test
  void theAuditIsReadInPagesOfAtMostAThousandFromAGivenEvent() {
    String item = pendingItem("audit");
    claim(item);
    String audit = item + "/audit";

    JsonNode first = api.get(audit + "?limit=1").tree();
    assertEquals(1, first.path("events").size());
    assertEquals(1, first.path("next").asLong(), "a full page says where the next starts");
    assertEquals(0, api.get(audit + "?after=1").tree().path("events").size());
    assertEquals(1, api.get(audit + "?limit=1000").tree().path("events").size());
    assertEquals(
        0, api.get(audit + "?after=9223372036854775806").tree().path("events").size(), "the end");
    assertRefused(api.get(audit + "?limit=1001"), 400, "limit");
    assertRefused(api.get(audit + "?after=-1"), 400, "after");
    assertRefused(api.get(audit + "?after=9223372036854775807"), 400, "after");
    assertRefused(api.get(audit + "?after=" + seg(HOSTILE)), 400, "after", HOSTILE);
    assertRefused(api.get(audit + "?" + seg(HOSTILE) + "=1"), 400, null, HOSTILE);
  }
}
