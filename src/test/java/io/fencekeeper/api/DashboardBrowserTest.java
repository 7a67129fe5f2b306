package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.http.ApiJson;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.BrowserTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The operator's window in a real browser (headless Debian chromium): the runs page follows a run
 * to SUCCEEDED without a reload, the run page draws its progress and the governor's decisions, an
 * item's story shows a stale command rejected with both tokens, an operator cancels a run from the
 * page with the admin token, and a read-only token cannot. On failure a screenshot is left under
 * target/dashboard/. With {@code -Dfencekeeper.screenshots=docs/img} the README's screenshots are
 * refreshed from this run.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@BrowserTest
class DashboardBrowserTest {

  static final Duration WAIT = Duration.ofSeconds(90);
  static final String DATE = "2026-11-29";

  /** Each item calls the provider, and at most 40 calls a second get past its throttle: 15 s. */
  static final int NIGHTLY_ITEMS = 600;

  private static final AtomicInteger JOBS = new AtomicInteger();

  static DashboardTestNode node;
  static Browser browser;
  static String nightlyRun;
  static final HttpClient http = HttpClient.newHttpClient();
  static final ObjectMapper json = ApiJson.mapper();

  @RegisterExtension
  static final TestWatcher SCREENSHOT_ON_FAILURE = Browser.screenshotOnFailure(() -> browser);

  @BeforeAll
  static void start() throws Exception {
    Browser.assumeInstalled();
    node = new DashboardTestNode();
    browser = Browser.start(1280, 900);
  }

  @AfterAll
  static void stop() {
    if (browser != null) {
      browser.close();
    }
    if (node != null) {
      node.close();
    }
  }

  @Test
  @Order(1)
  void theRunsPageAndTheRunPageFollowARunToSucceededWithoutAReload() {
    browser.driver.get(node.base + "/");
    // the node has a token: the page asks for it once and keeps it for the tab
    WebElement input =
        waitFor().until(ExpectedConditions.visibilityOfElementLocated(By.id("token-input")));
    input.sendKeys(DashboardTestNode.TOKEN);
    browser.driver.findElement(By.cssSelector("#token-form button[value=ok]")).click();
    waitFor()
        .until(
            ExpectedConditions.presenceOfElementLocated(By.cssSelector("#who [data-role=admin]")));
    browser.driver.executeScript("window.sameDocument = true");

    nightlyRun = createRun("nightly", NIGHTLY_ITEMS);
    By row = By.cssSelector("tr[data-run='" + nightlyRun + "']");
    waitFor().until(ExpectedConditions.textToBePresentInElementLocated(row, "RUNNING"));
    waitFor().until(ExpectedConditions.textToBePresentInElementLocated(row, "On track"));
    browser.screenshot("runs-page", docsImages());

    // into the run page by its link: a hash route, the same document
    browser.driver.findElement(row).findElement(By.tagName("a")).click();
    waitFor()
        .until(
            ExpectedConditions.presenceOfElementLocated(
                By.cssSelector(".chart path.series.done-rate")));
    // a few seconds of samples and a governor decision on the timeline
    waitFor()
        .until(
            driver ->
                ((Number)
                            browser.driver.executeScript(
                                "return document.querySelectorAll('.timeline li.event-governor')"
                                    + ".length"))
                        .intValue()
                    >= 2);
    waitFor()
        .until(
            ExpectedConditions.textMatches(
                By.cssSelector(".chart-summary"),
                java.util.regex.Pattern.compile(" (1[5-9]|[2-9]\\d|\\d\\d\\d+) samples")));
    // the top of the page: outlook, figures, charts and the governor's decisions
    browser.viewport(1280, 1500);
    browser.screenshot("run-page", docsImages());
    browser.viewport(375, 1400);
    browser.assertFitsTheWidth();
    browser.screenshot("run-page-phone", docsImages());
    browser.viewport(1280, 900);

    // The run is sized so that, throttled, it outlasts the samples above on the fastest machine;
    // what is left of it only has to end. Throttled, that took another 15 s.
    node.liftThrottle();
    waitFor()
        .until(
            ExpectedConditions.textToBePresentInElementLocated(
                By.cssSelector(".run-head"), "SUCCEEDED"));
    assertTrue(
        browser.driver.findElement(By.cssSelector(".outlook")).getText().contains("Made it"));
    assertEquals(false, browser.driver.findElement(By.id("cancel-run")).isEnabled());

    browser.driver.navigate().back();
    waitFor().until(ExpectedConditions.textToBePresentInElementLocated(row, "SUCCEEDED"));
    String text = browser.driver.findElement(row).getText();
    String done = String.format(java.util.Locale.US, "%,d", NIGHTLY_ITEMS);
    assertTrue(text.contains(done + " / " + done + " done"), text);
    assertEquals(
        Boolean.TRUE,
        browser.driver.executeScript("return window.sameDocument === true"),
        "the pages updated themselves: no reload happened");
    browser.viewport(375, 800);
    browser.assertFitsTheWidth();
    browser.screenshot("runs-page-phone", docsImages());
    browser.viewport(1280, 900);
  }

  @Test
  @Order(2)
  void theItemTableFiltersByStatusAndPages() {
    Assumptions.assumeTrue(nightlyRun != null, "needs the run of the first test");
    browser.driver.get(node.base + "/#/runs/" + seg(nightlyRun));
    By rows = By.cssSelector(".item-table tbody tr");
    waitFor().until(ExpectedConditions.numberOfElementsToBe(rows, 25));
    String first = browser.driver.findElements(rows).get(0).getText();
    browser.driver.findElement(By.xpath("//button[text()='Next page']")).click();
    waitFor()
        .until(
            driver ->
                !driver.findElements(rows).isEmpty()
                    && !driver.findElements(rows).get(0).getText().equals(first));
    assertTrue(browser.driver.findElements(rows).get(0).getText().startsWith("25"));
    new org.openqa.selenium.support.ui.Select(browser.driver.findElement(By.id("item-status")))
        .selectByVisibleText("failed");
    waitFor()
        .until(
            ExpectedConditions.textToBePresentInElementLocated(
                By.cssSelector(".item-table"), "No failed items"));
  }

  @Test
  @Order(3)
  void anItemsStoryShowsTheStaleCommandWithBothTokens() throws Exception {
    String job = job("stale");
    node.held.hold(job);
    String runId = createRun(job, 1);
    String item = "/api/items/" + seg(runId + "/a-1/c-1");
    // worker A claims with a short lease, pauses past it; worker B takes over
    JsonNode a = post(item + "/claim", "{\"workerId\":\"external-a\",\"leaseMillis\":300}").tree();
    Instant expiry = Instant.parse(a.path("leaseExpiresAt").asText());
    Await.until(
        Duration.ofSeconds(10),
        "lease of worker A to expire",
        () -> Instant.now().isAfter(expiry.plusMillis(50)));
    ApiTestNode.Answer b =
        post(item + "/claim", "{\"workerId\":\"external-b\",\"leaseMillis\":60000}");
    assertEquals(200, b.status(), b.body());
    long tokenA = a.path("token").asLong();
    long tokenB = b.tree().path("token").asLong();
    // A wakes up and presents its old token
    ApiTestNode.Answer stale =
        post(item + "/complete", "{\"workerId\":\"external-a\",\"token\":" + tokenA + "}");
    assertEquals(409, stale.status(), stale.body());

    browser.driver.get(node.base + "/#/items/" + seg(runId + "/a-1/c-1"));
    By rejected = By.cssSelector("#story li[data-type=StaleCommandRejected]");
    waitFor().until(ExpectedConditions.presenceOfElementLocated(rejected));
    String story = browser.driver.findElement(rejected).getText();
    assertTrue(story.contains("presented token " + tokenA + ", current token " + tokenB), story);
    String takeover =
        browser
            .driver
            .findElements(By.cssSelector("#story li[data-type=LeaseGranted]"))
            .get(1)
            .getText();
    assertTrue(takeover.contains("Took over from external-a"), takeover);
    waitFor()
        .until(ExpectedConditions.textToBePresentInElementLocated(By.id("lease"), "expires in"));
    assertTrue(browser.driver.findElement(By.id("lease")).getText().contains("token " + tokenB));
    browser.fitHeight(1280);
    browser.screenshot("item-page", docsImages());
    browser.viewport(375, 800);
    browser.assertFitsTheWidth();
    browser.viewport(1280, 900);
    node.held.release(job);
  }

  @Test
  @Order(4)
  void anOperatorCancelsARunFromThePageWithTheAdminToken() throws Exception {
    String job = job("cancel");
    node.held.hold(job);
    String runId = createRun(job, 20);
    browser.driver.get(node.base + "/#/runs/" + seg(runId));
    WebElement cancel =
        waitFor().until(ExpectedConditions.elementToBeClickable(By.id("cancel-run")));
    cancel.click();
    WebElement dialog =
        waitFor().until(ExpectedConditions.visibilityOfElementLocated(By.id("confirm-dialog")));
    assertTrue(
        dialog.getText().contains("closes the 20 items that are not done"), dialog.getText());
    browser.screenshot("cancel-dialog", null);
    dialog.findElement(By.cssSelector("button.danger")).click();
    waitFor()
        .until(
            ExpectedConditions.textToBePresentInElementLocated(
                By.cssSelector(".run-head"), "CANCELLED"));
    assertEquals(
        "CANCELLED",
        get("/api/runs/" + seg(runId), DashboardTestNode.TOKEN).tree().path("state").asText());
    node.held.release(job);
  }

  @Test
  @Order(5)
  void theClusterPageShowsTheCoordinatorAndTheWorkerPool() {
    browser.driver.get(node.base + "/#/cluster");
    By member = By.cssSelector(".cluster-table tbody tr");
    waitFor().until(ExpectedConditions.textToBePresentInElementLocated(member, "run coordinator"));
    waitFor()
        .until(
            ExpectedConditions.textToBePresentInElementLocated(
                member, "of " + DashboardTestNode.WORKERS));
    String text = browser.driver.findElement(member).getText();
    assertTrue(text.contains("this node") && text.contains("Up"), text);
    browser.screenshot("cluster-page", docsImages());
  }

  @Test
  @Order(6)
  void theKeyboardReachesTheContentAndTheOutlookIsComputedInWords() {
    browser.driver.get("about:blank");
    browser.driver.get(node.base + "/");
    waitFor()
        .until(
            ExpectedConditions.presenceOfElementLocated(By.cssSelector("#who [data-role=admin]")));
    browser.driver.findElement(By.tagName("body")).sendKeys(Keys.TAB);
    WebElement focused = browser.driver.switchTo().activeElement();
    assertEquals("Skip to content", focused.getText());
    focused.sendKeys(Keys.ENTER);
    assertEquals("main", browser.driver.switchTo().activeElement().getAttribute("id"));
    @SuppressWarnings("unchecked")
    List<String> levels =
        (List<String>)
            browser.driver.executeAsyncScript(
                "const done = arguments[arguments.length - 1];"
                    + "import(document.querySelector('link[href$=\"format.js\"]').href).then(m => {"
                    + "  const now = Date.parse('2026-11-30T05:00:00Z');"
                    + "  const run = (p) => ({state: 'RUNNING', createdAt: '2026-11-30T01:00:00Z',"
                    + "    deadline: '2026-11-30T06:00:00Z', projectedFinish: p,"
                    + "    counts: {pending: 10, leased: 2}});"
                    + "  done([m.outlook(run('2026-11-30T05:20:00Z'), now).level,"
                    + "        m.outlook(run('2026-11-30T05:40:00Z'), now).level,"
                    + "        m.outlook(run('2026-11-30T06:05:00Z'), now).level]);"
                    + "}, e => done(['error ' + e]));");
    // 40 min of a 5 h window is on track; 20 min (< 10%) is at risk; past the deadline is late
    assertEquals(List.of("ok", "risk", "late"), levels);
  }

  @Test
  @Order(7)
  void firstPaintAndPageWeightOnLoopback() throws Exception {
    browser.driver.executeCdpCommand("Network.enable", Map.of());
    browser.driver.executeCdpCommand("Network.setCacheDisabled", Map.of("cacheDisabled", true));
    List<Double> paints = new java.util.ArrayList<>();
    Map<String, Object> perf = null;
    for (int load = 0; load < 5; load++) {
      browser.driver.get("about:blank");
      browser.driver.get(node.base + "/");
      waitFor().until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("#main h1")));
      @SuppressWarnings("unchecked")
      Map<String, Object> measured =
          (Map<String, Object>)
              browser.driver.executeScript(
                  "const fcp = performance.getEntriesByName('first-contentful-paint')[0];"
                      + "const nav = performance.getEntriesByType('navigation')[0];"
                      + "const assets = performance.getEntriesByType('resource')"
                      + "  .filter(r => r.name.includes('/assets/'));"
                      + "return {fcp: fcp ? fcp.startTime : -1,"
                      + "  bytes: nav.decodedBodySize"
                      + "    + assets.reduce((s, r) => s + r.decodedBodySize, 0),"
                      + "  files: assets.length + 1};");
      perf = measured;
      paints.add(((Number) measured.get("fcp")).doubleValue());
    }
    browser.driver.executeCdpCommand("Network.setCacheDisabled", Map.of("cacheDisabled", false));
    List<Double> sorted = paints.stream().sorted().toList();
    String line =
        String.format(
            java.util.Locale.ROOT,
            "dashboard on loopback, browser cache disabled, 5 loads: first-contentful-paint"
                + " median %.0f ms (min %.0f, max %.0f); %s files, %s bytes%n",
            sorted.get(2),
            sorted.get(0),
            sorted.get(4),
            perf.get("files"),
            perf.get("bytes"));
    System.out.print(line);
    Files.writeString(Browser.OUT.resolve("perf.txt"), line);
    assertTrue(sorted.get(0) > 0, "a first paint was recorded");
    assertTrue(((Number) perf.get("bytes")).longValue() < 200_000, "page weight " + perf);
  }

  /** The read-only token (FENCEKEEPER_API_READ_TOKEN) reads the page; its actions are disabled. */
  @Test
  @Order(8)
  void aReadOnlyTokenSeesActionsDisabledWithTheReason() throws Exception {
    ApiTestNode.Answer whoami = get("/api/whoami", DashboardTestNode.READ_TOKEN);
    assertEquals(200, whoami.status(), whoami.body());
    assertEquals("read", whoami.tree().path("role").asText());
    String job = job("readonly");
    node.held.hold(job);
    String runId = createRun(job, 3);
    ApiTestNode.Answer refused =
        post("/api/runs/" + seg(runId) + "/cancel", null, DashboardTestNode.READ_TOKEN);
    assertEquals(403, refused.status(), refused.body());

    browser.driver.get(node.base + "/");
    browser.driver.executeScript("sessionStorage.clear()");
    browser.driver.navigate().refresh();
    WebElement input =
        waitFor().until(ExpectedConditions.visibilityOfElementLocated(By.id("token-input")));
    input.sendKeys(DashboardTestNode.READ_TOKEN);
    browser.driver.findElement(By.cssSelector("#token-form button[value=ok]")).click();
    waitFor()
        .until(
            ExpectedConditions.presenceOfElementLocated(By.cssSelector("#who [data-role=read]")));
    browser.driver.get(node.base + "/#/runs/" + seg(runId));
    waitFor()
        .until(ExpectedConditions.presenceOfElementLocated(By.cssSelector(".run-head .badge")));
    assertEquals(false, browser.driver.findElement(By.id("cancel-run")).isEnabled());
    assertTrue(
        browser.driver.findElement(By.id("actions-note")).getText().contains("Read-only token"));
    node.held.release(job);
  }

  @Test
  @Order(9)
  void aPageLeftForAnotherClosesItsLiveStreams() {
    // each load of the runs page opens its live stream; the page it replaces may stay in the
    // browser's back/forward cache, and before the dashboard stopped its view on pagehide, its
    // stream stayed open with it for about a minute (six of them took every connection the
    // browser opens to the node, and the next page waited 58 s for one)
    browser.driver.get(node.base + "/");
    browser.driver.executeScript(
        "sessionStorage.setItem(arguments[0], arguments[1])", TOKEN_KEY, DashboardTestNode.TOKEN);
    for (int visit = 1; visit <= 3; visit++) {
      browser.driver.get(node.base + "/?visit=" + visit);
      Await.until(
          Duration.ofSeconds(60),
          "the runs page of visit " + visit + " following its stream",
          () -> openStreams() >= 1);
    }
    // a stream whose client went away is found at the node's next write to it: a keep-alive
    // every 15 s (RunEventStreams.HEARTBEAT), so within two of them; a page kept in the cache
    // held its stream for about a minute
    Await.until(
        Duration.ofSeconds(45),
        "only the page on screen holding a live stream",
        () -> openStreams() == 1,
        () -> "open streams " + openStreams());
  }

  // --- helpers ---------------------------------------------------------------------------------

  /** Where the page keeps its token for the tab (api.js). */
  private static final String TOKEN_KEY = "fencekeeper.token";

  private static final Pattern OPEN_STREAMS =
      Pattern.compile("(?m)^fencekeeper_http_event_streams(?:\\{[^}]*\\})? ([0-9.]+)$");

  /** The node's live streams open now ({@code fencekeeper_http_event_streams} of /metrics). */
  private static int openStreams() {
    ApiTestNode.Answer metrics = get("/metrics", DashboardTestNode.READ_TOKEN);
    assertEquals(200, metrics.status(), metrics.body());
    Matcher gauge = OPEN_STREAMS.matcher(metrics.body());
    assertTrue(gauge.find(), "no fencekeeper_http_event_streams in /metrics");
    return (int) Double.parseDouble(gauge.group(1));
  }

  private static WebDriverWait waitFor() {
    return new WebDriverWait(browser.driver, WAIT);
  }

  private static Path docsImages() {
    String target = System.getProperty("fencekeeper.screenshots");
    return target == null ? null : Path.of(target);
  }

  static String job(String prefix) {
    return prefix + "-" + JOBS.incrementAndGet();
  }

  static String seg(String id) {
    return URLEncoder.encode(id, StandardCharsets.UTF_8);
  }

  /** A run of {@code items} accounts with its deadline an hour ahead; its run id. */
  static String createRun(String prefix, int items) {
    String job = prefix.contains("-") ? prefix : job(prefix);
    StringBuilder accounts = new StringBuilder();
    for (int i = 1; i <= items; i++) {
      accounts
          .append(i > 1 ? "," : "")
          .append("{\"accountId\":\"a-")
          .append(i)
          .append("\",\"cursor\":\"c-1\"}");
    }
    String body =
        "{\"job\":\""
            + job
            + "\",\"businessDate\":\""
            + DATE
            + "\",\"deadline\":\""
            + Instant.now().plus(Duration.ofHours(1))
            + "\",\"scope\":{\"type\":\"inline\",\"accounts\":["
            + accounts
            + "]}}";
    ApiTestNode.Answer created = post("/api/runs", body);
    assertEquals(201, created.status(), created.body());
    return job + "/" + DATE;
  }

  static ApiTestNode.Answer post(String path, String body) {
    return post(path, body, DashboardTestNode.TOKEN);
  }

  static ApiTestNode.Answer post(String path, String body, String token) {
    return send(
        HttpRequest.newBuilder(URI.create(node.base + path))
            .header("Content-Type", "application/json")
            .header("Authorization", "Bearer " + token)
            .POST(
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body)));
  }

  static ApiTestNode.Answer get(String path, String token) {
    return send(
        HttpRequest.newBuilder(URI.create(node.base + path))
            .header("Authorization", "Bearer " + token)
            .GET());
  }

  private static ApiTestNode.Answer send(HttpRequest.Builder request) {
    try {
      HttpResponse<String> response =
          http.send(
              request.timeout(Duration.ofSeconds(30)).build(),
              HttpResponse.BodyHandlers.ofString());
      return new ApiTestNode.Answer(
          response.statusCode(), response.body(), response.headers(), json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
