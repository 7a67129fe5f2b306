package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.api.http.ApiJson;
import io.fencekeeper.testing.BrowserTest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;
import org.openqa.selenium.By;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.FluentWait;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The fleet's signal in a real browser (headless Debian chromium; issue 39), read with the
 * read-only token: the cluster page's tile shows the nodes dispatching now against the nodes
 * wanted, the reason and why, as {@code GET /api/fleet} answers them; a running run's page shows
 * the run's own need beside the governor and draws the nodes on the rate chart against an axis of
 * their own. The runs' job is held, so they stay RUNNING with nothing completed: their need is
 * known (no completion rate yet) and stays.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@BrowserTest
class FleetTileBrowserTest {

  static final Duration WAIT = Duration.ofSeconds(60);

  static final String JOB = "fleet-held";
  static final AtomicInteger DATES = new AtomicInteger();

  static DashboardTestNode node;
  static Browser browser;
  static final HttpClient HTTP = HttpClient.newHttpClient();

  @RegisterExtension
  static final TestWatcher SCREENSHOT_ON_FAILURE = Browser.screenshotOnFailure(() -> browser);

  @BeforeAll
  static void start() throws Exception {
    Browser.assumeInstalled();
    // a fleet of at least two: a node of its own is below the minimum, so wanted differs from now
    node = new DashboardTestNode(Map.of("fencekeeper.fleet.min-nodes", 2));
    node.held.hold(JOB);
    browser = Browser.start(1280, 900);
  }

  @AfterAll
  static void stop() {
    // closed in reverse order, the browser first; a resource that never started is skipped
    try (DashboardTestNode started = node;
        Browser open = browser) {
      // nothing else to do
    }
  }

  @Test
  @Order(1)
  void theClusterPageShowsTheNodesNowAgainstTheNodesWantedAndWhy() {
    JsonNode fleet = read("/api/fleet");
    assertEquals("IDLE", fleet.path("reason").asText(), fleet.toString());
    browser.driver.get(node.base + "/#/cluster");
    waitFor()
        .until(ExpectedConditions.visibilityOfElementLocated(By.id("token-input")))
        .sendKeys(DashboardTestNode.READ_TOKEN);
    browser.driver.findElement(By.cssSelector("#token-form button[value=ok]")).click();
    By tile = By.id("fleet-tile");
    waitFor().until(ExpectedConditions.textToBePresentInElementLocated(tile, "IDLE"));
    String text = browser.driver.findElement(tile).getText();
    assertTrue(text.contains("Nodes now / wanted\n1 / 2"), text);
    assertTrue(text.contains(fleet.path("nodes").asInt() + " / " + fleet.path("wanted").asInt()));
    assertTrue(text.contains(fleet.path("detail").asText()), text);
    assertTrue(
        text.contains("kept between 2 and 10 nodes of " + DashboardTestNode.WORKERS + " workers"),
        text);

    String runId = createRun(1);
    // the run's line in the tile says what the API says of it (its need moves as its items are
    // handed out: compared with the answer of the moment)
    awaitShown(
        tile,
        () -> {
          JsonNode need = read("/api/fleet").path("runs").path(0);
          return runId
              + ": "
              + need.path("inFlight").asInt()
              + " in flight, "
              + need.path("reason").asText().replace('_', ' ')
              + ": "
              + need.path("detail").asText();
        });
    // nothing completed yet: the run holds what it has, and the fleet its minimum
    awaitShown(tile, () -> "1 / 2 ✓ ON TRACK\n" + read("/api/fleet").path("detail").asText());
    browser.viewport(375, 900);
    browser.assertFitsTheWidth();
    browser.viewport(1280, 900);
    browser.screenshot("cluster-fleet", null);

    // the run's link in the tile leads to its page (found again if a redraw took it)
    waitFor()
        .until(
            driver -> {
              driver.findElement(By.linkText(runId)).click();
              return true;
            });
    waitFor().until(ExpectedConditions.presenceOfElementLocated(By.id("fleet-need")));
  }

  @Test
  @Order(2)
  void aRunningRunsPageShowsItsNeedAndTheNodesOnTheRateChart() {
    // more items than the governor's cap: those left waiting age, so the run's figures change
    // every second and so does its live feed, which brings the chart a sample a second
    String runId = createRun(20);
    browser.driver.get(node.base + "/#/runs/" + ApiTestNode.seg(runId));
    awaitShown(
        By.id("fleet-need"),
        () -> {
          JsonNode need = read("/api/runs/" + ApiTestNode.seg(runId)).path("fleet");
          return need.isObject()
              ? "Fleet need\n"
                  + need.path("inFlight").asInt()
                  + " in flight\n✓ "
                  + need.path("reason").asText().replace('_', ' ')
                  + " "
                  + need.path("detail").asText()
              : "the run's need, once computed";
        });
    String legend = browser.driver.findElement(By.cssSelector("#chart-title ~ .legend")).getText();
    assertTrue(legend.contains("nodes dispatching now (right axis)"), legend);
    assertTrue(legend.contains("nodes wanted (right axis)"), legend);

    // a few samples with the fleet read beside them: both lines drawn (not a lone point), the
    // nodes wanted (2, the minimum) above the one node dispatching, on an axis of nodes
    waitFor()
        .until(
            driver ->
                Boolean.TRUE.equals(
                    browser.driver.executeScript(
                        "const drawn = (cls) => {"
                            + "  const p = document.querySelector('.chart path.series.' + cls);"
                            + "  return p !== null && p.getBBox().width > 20; };"
                            + "return drawn('fleet-nodes') && drawn('fleet-wanted');")));
    Object wantedAbove =
        browser.driver.executeScript(
            "const y = (cls) => document.querySelector('.chart path.series.' + cls).getBBox().y;"
                + "return y('fleet-wanted') < y('fleet-nodes');");
    assertEquals(Boolean.TRUE, wantedAbove, "2 nodes wanted drawn above 1 dispatching");
    // read in one script: the chart is redrawn with every sample, and an element found before a
    // redraw is stale after it
    Object units =
        browser.driver.executeScript(
            "return Array.from(document.querySelectorAll('.chart text.axis-unit'))"
                + ".map(t => t.textContent);");
    assertTrue(
        units instanceof List<?> list && list.contains("nodes"),
        "the nodes have an axis of their own: " + units);
    awaitShown(
        By.cssSelector(".chart-summary"),
        () -> {
          JsonNode fleet = read("/api/fleet");
          return "nodes: "
              + fleet.path("nodes").asInt()
              + " dispatching, "
              + fleet.path("wanted").asInt()
              + " wanted";
        });
    browser.viewport(1280, 1300);
    browser.screenshot("run-page-fleet", null);
    browser.viewport(1280, 900);
  }

  /**
   * AT_RISK stands out as a run at risk of its deadline does: the outlook's amber with its "!"
   * mark. A node with no workers cannot make a run need more, so the tile is drawn here from an
   * answer of that shape, by the page's own module, with the page's own styles.
   */
  @Test
  @Order(3)
  void anAtRiskFleetIsMarkedLikeARunAtRisk() {
    browser.driver.get(node.base + "/#/cluster");
    waitFor()
        .until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("#fleet-tile .outlook")));
    @SuppressWarnings("unchecked")
    List<String> seen =
        (List<String>)
            browser.driver.executeAsyncScript(
                "const done = arguments[arguments.length - 1];"
                    + "import(document.querySelector('link[href$=\"/fleet.js\"]').href).then(m => {"
                    + "  const tile = document.getElementById('fleet-tile');"
                    + "  m.renderFleetTile(tile, {nodes: 2, wanted: 5, reason: 'AT_RISK',"
                    + "    detail: '38 items in flight needed at 8 workers a node', minNodes: 1,"
                    + "    maxNodes: 10, workersPerNode: 8, runs: []});"
                    + "  const risk = document.createElement('span');"
                    + "  risk.className = 'outlook level-risk';"
                    + "  document.body.append(risk);"
                    + "  const badge = tile.querySelector('.outlook');"
                    + "  done([tile.innerText, getComputedStyle(badge).backgroundColor,"
                    + "        getComputedStyle(risk).backgroundColor]);"
                    + "}, e => done(['error ' + e]));");
    assertTrue(seen.get(0).contains("2 / 5"), seen.get(0));
    assertTrue(seen.get(0).contains("! AT RISK"), seen.get(0));
    assertEquals(seen.get(2), seen.get(1), "the amber of a run at risk");
  }

  /** A run of the held job, its deadline an hour ahead: RUNNING until the test ends. */
  private static String createRun(int accounts) {
    String date = LocalDate.of(2026, 11, 1).plusDays(DATES.incrementAndGet()).toString();
    StringBuilder scope = new StringBuilder();
    for (int i = 1; i <= accounts; i++) {
      scope.append(i > 1 ? "," : "").append("{\"accountId\":\"a-").append(i);
      scope.append("\",\"cursor\":\"c-1\"}");
    }
    String body =
        "{\"job\":\""
            + JOB
            + "\",\"businessDate\":\""
            + date
            + "\",\"deadline\":\""
            + Instant.now().plus(Duration.ofHours(1))
            + "\",\"scope\":{\"type\":\"inline\",\"accounts\":["
            + scope
            + "]}}";
    ApiTestNode.Answer created =
        send(
            HttpRequest.newBuilder(URI.create(node.base + "/api/runs"))
                .header("Authorization", "Bearer " + DashboardTestNode.TOKEN)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)));
    assertEquals(201, created.status(), created.body());
    return JOB + "/" + date;
  }

  /** A read with the read-only token, as a monitoring client reads the fleet. */
  private static JsonNode read(String path) {
    ApiTestNode.Answer answer =
        send(
            HttpRequest.newBuilder(URI.create(node.base + path))
                .header("Authorization", "Bearer " + DashboardTestNode.READ_TOKEN));
    assertEquals(200, answer.status(), answer.body());
    return answer.tree();
  }

  private static ApiTestNode.Answer send(HttpRequest.Builder request) {
    return ApiTestNode.exchange(HTTP, request, ApiJson.mapper());
  }

  /** Waits until {@code element}'s text holds what {@code expected} makes of the API now. */
  private static void awaitShown(By element, Supplier<String> expected) {
    String[] last = {""};
    waitFor()
        .withMessage(() -> "the page to show \"" + last[0] + "\"")
        .until(
            driver -> {
              last[0] = expected.get();
              return driver.findElement(element).getText().contains(last[0]);
            });
  }

  /**
   * The tiles are drawn again with every second's sample: an element found just before a redraw is
   * stale by the next call on it, and the wait finds it again.
   */
  private static FluentWait<WebDriver> waitFor() {
    return new WebDriverWait(browser.driver, WAIT).ignoring(StaleElementReferenceException.class);
  }
}
