package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.BrowserTest;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The run page of a run retention archived, in a real browser: it says the run is archived, when,
 * as which file and on which node, that its items are in the archive (and how to read them), and
 * offers no resume and no report. The node runs on H2: retention end to end on the embedded
 * database too.
 */
@BrowserTest
class ArchivedRunPageBrowserTest {

  @Test
  void theRunPageOfAnArchivedRunSaysWhereItWent() throws Exception {
    Browser.assumeInstalled();
    try (ApiTestNode node = ApiTestNode.fresh();
        Browser browser = Browser.start(1280, 900)) {
      String runId = node.createRun(ApiTestNode.newJob("archived"), 5);
      assertEquals(
          200, node.post("/api/runs/" + ApiTestNode.seg(runId) + "/cancel", null).status());
      // filed once it has ended (a dry run shows it; a real pass started before that would prune
      // it while answering total 0); then pruned on an operator's demand
      Await.until(
          Duration.ofSeconds(60),
          runId + " filed, so planned for archiving",
          () ->
              node.post("/api/archive/prune", "{\"endedBefore\":\"2026-12-01\",\"dryRun\":true}")
                  .tree(),
          answer -> answer.path("total").asInt() == 1);
      ApiTestNode.Answer plan =
          Await.until(
              Duration.ofSeconds(60),
              "the prune accepted once the dry run's pass has ended",
              () -> node.post("/api/archive/prune", "{\"endedBefore\":\"2026-12-01\"}"),
              answer -> answer.status() != 409); // 409: the dry run's pass has not ended
      assertEquals(202, plan.status(), plan.body());
      assertEquals(1, plan.tree().path("total").asInt(), plan.body());
      assertEquals("ARCHIVE", plan.tree().path("runs").get(0).path("action").asText(), plan.body());
      JsonNode archive =
          Await.until(
                  Duration.ofSeconds(60),
                  runId + " pruned",
                  () -> node.get("/api/runs/" + ApiTestNode.seg(runId)).tree(),
                  run -> run.path("archive").hasNonNull("prunedAt"))
              .path("archive");
      String file = archive.path("file").asText();

      browser.driver.get(node.base + "/#/runs/" + ApiTestNode.seg(runId));
      WebDriverWait wait = new WebDriverWait(browser.driver, Duration.ofSeconds(60));
      WebElement input =
          wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("token-input")));
      input.sendKeys(ApiTestNode.TOKEN);
      browser.driver.findElement(By.cssSelector("#token-form button[value=ok]")).click();
      WebElement line =
          wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("archive-line")));
      assertTrue(
          line.getText().contains(" as " + file + " in the archive directory of "), line.getText());
      assertTrue(line.getText().contains("5 items"), line.getText());
      assertTrue(line.getText().contains("rows deleted from the database"), line.getText());
      WebElement items =
          wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("items-archived")));
      assertTrue(
          items.getText().contains("fencekeeper archive show " + runId + " --report"),
          items.getText());
      assertFalse(browser.driver.findElement(By.id("resume-run")).isEnabled(), "no resume");
      assertFalse(browser.driver.findElement(By.id("report-csv")).isEnabled(), "no live report");
      assertTrue(
          browser.driver.findElement(By.id("actions-note")).getText().startsWith("Archived:"),
          browser.driver.findElement(By.id("actions-note")).getText());
      browser.fitHeight(1280);
      browser.screenshot("archived-run-page", null);
    }
  }
}
