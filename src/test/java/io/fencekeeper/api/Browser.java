package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Debian's chromium, headless, driven through Debian's chromedriver. Paths are explicit so that
 * Selenium Manager never looks for (or downloads) a browser or a driver. Without chromium the
 * browser tests are skipped, unless CI=true: there they must run.
 */
final class Browser implements AutoCloseable {

  static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  static final Path OUT = Path.of("target", "dashboard");

  final ChromeDriver driver;
  private final Path profile;

  private Browser(ChromeDriver driver, Path profile) {
    this.driver = driver;
    this.profile = profile;
  }

  /** Skips the calling test (or fails it when CI=true) when chromium is not installed. */
  static void assumeInstalled() {
    boolean installed = Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER);
    String missing =
        "the dashboard's browser tests need Debian's packages chromium chromium-driver"
            + " (/usr/bin/chromium and /usr/bin/chromedriver): apt-get install -y chromium"
            + " chromium-driver";
    if (!installed && "true".equals(System.getenv("CI"))) {
      fail(missing + "; CI=true, so they must run");
    }
    Assumptions.assumeTrue(installed, missing);
  }

  static Browser start(int width, int height) {
    assumeInstalled();
    // belt and braces: with these set Selenium has nothing to look up
    System.setProperty("webdriver.chrome.driver", CHROMEDRIVER.toString());
    Path profile;
    try {
      profile = Files.createTempDirectory("fk-chromium");
      Files.createDirectories(OUT);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort()
            .withLogFile(OUT.resolve("chromedriver.log").toFile())
            .build();
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments(
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--user-data-dir=" + profile,
        "--window-size=" + width + "," + height);
    ChromeDriver driver = new ChromeDriver(service, options);
    driver.manage().timeouts().scriptTimeout(Duration.ofSeconds(20));
    return new Browser(driver, profile);
  }

  /** Sets the viewport (the CSS width the page lays out for), not just the window. */
  void viewport(int width, int height) {
    driver.manage().window().setSize(new Dimension(width, height));
    @SuppressWarnings("unchecked")
    java.util.List<Number> inner =
        (java.util.List<Number>)
            driver.executeScript("return [window.innerWidth, window.innerHeight]");
    int extraWidth = width - inner.get(0).intValue();
    int extraHeight = height - inner.get(1).intValue();
    if (extraWidth != 0 || extraHeight != 0) {
      driver.manage().window().setSize(new Dimension(width + extraWidth, height + extraHeight));
    }
  }

  /** Fails when the page, at the viewport's width, scrolls sideways (a phone's, say). */
  void assertFitsTheWidth() {
    Object fits =
        driver.executeScript(
            "return document.documentElement.scrollWidth <= window.innerWidth + 1");
    org.junit.jupiter.api.Assertions.assertEquals(
        Boolean.TRUE, fits, "the page scrolls sideways at this width");
  }

  /** A PNG of the whole page under target/dashboard/, also copied to {@code copyTo} if given. */
  Path screenshot(String name, Path copyTo) {
    try {
      Path file = OUT.resolve(name + ".png");
      File shot = driver.getScreenshotAs(OutputType.FILE);
      Files.copy(shot.toPath(), file, StandardCopyOption.REPLACE_EXISTING);
      if (copyTo != null) {
        Files.createDirectories(copyTo);
        Files.copy(file, copyTo.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
      }
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * A JUnit extension that leaves a screenshot of the page under target/dashboard/ when a test
   * fails, and says where.
   */
  static org.junit.jupiter.api.extension.TestWatcher screenshotOnFailure(
      java.util.function.Supplier<Browser> browser) {
    return new org.junit.jupiter.api.extension.TestWatcher() {
      @Override
      public void testFailed(
          org.junit.jupiter.api.extension.ExtensionContext context, Throwable cause) {
        if (browser.get() != null) {
          Path shot = browser.get().screenshot("failure-" + context.getDisplayName(), null);
          System.err.println("dashboard screenshot of the failure: " + shot.toAbsolutePath());
        }
      }
    };
  }

  /** The page's full height, so a screenshot holds all of it. */
  void fitHeight(int width) {
    Number height = (Number) driver.executeScript("return document.documentElement.scrollHeight");
    viewport(width, Math.min(6000, height.intValue() + 20));
  }

  @Override
  public void close() {
    try {
      driver.quit();
    } finally {
      try (var files = Files.walk(profile)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      } catch (IOException e) {
        // a temp profile left behind is harmless
      }
    }
  }
}
