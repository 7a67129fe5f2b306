package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.api.metrics.ApiMetrics;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.BrowserTest;
import io.fencekeeper.testing.TestDatabases;
import io.fencekeeper.verify.VerifyFixture;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The run page's verification in a real browser (headless Debian chromium): an operator with the
 * admin token verifies an ended run from the page; the tile and the table then show the verdict and
 * each finding with both sides (the journal's effect and the provider's answer), as the sim's
 * ledger really was: one effect lost, one written by someone else.
 */
@BrowserTest
class VerifyPanelBrowserTest {

  static final String TOKEN = "verify-panel-token-0123456789";
  static final Duration WAIT = Duration.ofSeconds(90);

  static VerifyFixture f;
  static Browser browser;
  static String base;

  @RegisterExtension
  static final TestWatcher SCREENSHOT_ON_FAILURE = Browser.screenshotOnFailure(() -> browser);

  @BeforeAll
  static void start() throws Exception {
    Browser.assumeInstalled();
    f = new VerifyFixture(TestDatabases::h2File, 31);
    f.startNode(4, Map.of());
    base = f.startApi(TOKEN, new ApiMetrics());
    browser = Browser.start(1280, 900);
  }

  @AfterAll
  static void stop() {
    if (browser != null) {
      browser.close();
    }
    if (f != null) {
      f.close();
    }
  }

  static WebDriverWait waitFor() {
    return new WebDriverWait(browser.driver, WAIT);
  }

  @Test
  void anOperatorVerifiesAnEndedRunFromItsPageAndSeesEachFindingWithBothSides() throws Exception {
    List<AccountCursor> accounts = VerifyFixture.accounts(40);
    RunView run = f.awaitEnded(f.create("panel", accounts).runId());
    ItemId lost = null;
    ItemId foreign = null;
    for (AccountCursor account : accounts) {
      ItemId id = ItemId.of("panel", VerifyFixture.DATE, account.accountId(), account.cursor());
      WorkItem.EffectOutcome outcome =
          ((WorkItem.Accepted) f.node.items().get(id).toCompletableFuture().join())
              .item()
              .effectOutcome();
      if (outcome.kind() == WorkItem.OutcomeKind.APPLIED && lost == null) {
        lost = id;
      } else if (outcome.kind() == WorkItem.OutcomeKind.NOTHING_TO_DO && foreign == null) {
        foreign = id;
      }
    }
    f.sim.loseEffect(lost.idempotencyKey());
    String written = f.sim.writeForeignEffect(foreign.idempotencyKey()).effectId();

    browser.driver.get(base + "/#/runs/" + URLEncoder.encode(run.runId(), StandardCharsets.UTF_8));
    waitFor()
        .until(ExpectedConditions.visibilityOfElementLocated(By.id("token-input")))
        .sendKeys(TOKEN);
    browser.driver.findElement(By.cssSelector("#token-form button[value=ok]")).click();
    waitFor()
        .until(
            ExpectedConditions.textToBePresentInElementLocated(
                By.id("verification-tile"), "not verified"));
    waitFor().until(ExpectedConditions.elementToBeClickable(By.id("verify-run"))).click();
    WebElement dialog =
        waitFor().until(ExpectedConditions.visibilityOfElementLocated(By.id("confirm-dialog")));
    assertTrue(dialog.getText().contains("Every item (40)"), dialog.getText());
    assertTrue(dialog.getText().contains("changes nothing"), dialog.getText());
    dialog.findElement(By.cssSelector("button.primary")).click();

    waitFor()
        .until(
            ExpectedConditions.textToBePresentInElementLocated(
                By.id("verification-verdict"), "DISCREPANCIES"));
    String tile = browser.driver.findElement(By.id("verification-tile")).getText();
    assertTrue(tile.contains("2 discrepancies in 40"), tile);
    List<WebElement> rows =
        browser.driver.findElements(By.cssSelector("#verification-findings tbody tr"));
    assertEquals(2, rows.size());
    String table = browser.driver.findElement(By.id("verification-findings")).getText();
    assertTrue(table.contains("MISSING"), table);
    assertTrue(table.contains("nothing under the key (404)"), table);
    assertTrue(table.contains("UNEXPECTED EFFECT"), table);
    assertTrue(table.contains(written), "the provider's side: " + table);
    assertTrue(table.contains(lost.idempotencyKey()), table);
    String counts = browser.driver.findElement(By.id("verification-counts")).getText();
    assertTrue(counts.contains("missing: 1") && counts.contains("unexpected effect: 1"), counts);
    assertTrue(browser.driver.findElement(By.id("findings-csv")).isDisplayed());
    browser.fitHeight(1280);
    browser.screenshot("run-verification", docsImages());
    browser.viewport(375, 1400);
    Object fits =
        browser.driver.executeScript(
            "return document.documentElement.scrollWidth <= window.innerWidth + 1");
    assertEquals(Boolean.TRUE, fits, "the page scrolls sideways on a phone");
  }

  private static Path docsImages() {
    String target = System.getProperty("fencekeeper.screenshots");
    return target == null ? null : Path.of(target);
  }
}
