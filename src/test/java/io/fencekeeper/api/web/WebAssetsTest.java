package io.fencekeeper.api.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.api.ApiTestNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The dashboard's files are served by every node from the jar, with the right types and caching,
 * and nothing else is: traversal attempts answer 404 and never a byte of another file.
 */
class WebAssetsTest {

  private final ApiTestNode api = ApiTestNode.get();

  private String version() {
    Matcher m = Pattern.compile("/assets/([0-9a-f]{12})/app\\.css").matcher(api.get("/").body());
    assertTrue(m.find(), "the page links its versioned assets");
    return m.group(1);
  }

  @Test
  void thePageIsServedAtTheRootAndRevalidatedOnEveryLoad() {
    ApiTestNode.Answer page = api.get("/");
    assertEquals(200, page.status());
    assertEquals("text/html; charset=UTF-8", page.headers().firstValue("Content-Type").orElse(""));
    assertEquals("no-cache", page.headers().firstValue("Cache-Control").orElse(""));
    assertEquals("nosniff", page.headers().firstValue("X-Content-Type-Options").orElse(""));
    assertTrue(
        page.headers()
            .firstValue("Content-Security-Policy")
            .orElse("")
            .contains("script-src 'self'"));
    assertTrue(page.body().contains("<main id=\"main\""));
    assertFalse(page.body().contains("{{assets}}"), "asset paths are filled in");
    String etag = page.headers().firstValue("ETag").orElseThrow();
    ApiTestNode.Answer again =
        api.send(
            HttpRequest.newBuilder(URI.create(api.base + "/")).header("If-None-Match", etag), null);
    assertEquals(304, again.status());
    assertEquals("", again.body());
  }

  @Test
  void assetsHaveTheirContentTypeAndAreCachedForAYear() {
    String v = version();
    for (String[] file :
        List.of(
            new String[] {"app.js", "text/javascript; charset=UTF-8"},
            new String[] {"app.css", "text/css; charset=UTF-8"},
            new String[] {"favicon.svg", "image/svg+xml"})) {
      ApiTestNode.Answer asset = api.get("/assets/" + v + "/" + file[0]);
      assertEquals(200, asset.status(), file[0]);
      assertEquals(file[1], asset.headers().firstValue("Content-Type").orElse(""), file[0]);
      assertEquals(
          "public, max-age=31536000, immutable",
          asset.headers().firstValue("Cache-Control").orElse(""));
    }
    // another version's path is not served from this jar (its URL would be cached for a year)
    ApiTestNode.Answer stale = api.get("/assets/000000000000/app.js");
    assertEquals(404, stale.status());
    assertEquals("no-store", stale.headers().firstValue("Cache-Control").orElse(""));
  }

  /** Issue 25, item 5: a dashboard file that is not there is the API's JSON 404, not plain text. */
  @Test
  void aMissingDashboardFileIsTheJsonErrorEnvelope() {
    ApiTestNode.Answer missing = api.get("/assets/x/app.js");
    assertEquals(404, missing.status());
    assertEquals("application/json", missing.headers().firstValue("Content-Type").orElse(""));
    assertEquals("not_found", missing.error());
    assertTrue(missing.tree().path("message").asText().contains("reload the page"));
    assertEquals("nosniff", missing.headers().firstValue("X-Content-Type-Options").orElse(""));
    ApiTestNode.Answer unknownFile = api.get("/assets/" + version() + "/evil.js");
    assertEquals(404, unknownFile.status());
    assertEquals("not_found", unknownFile.error());
    // the API keeps its own 404 for paths that are not the dashboard's
    ApiTestNode.Answer other = api.get("/index.html");
    assertEquals(404, other.status());
    assertEquals("not_found", other.error());
  }

  @Test
  void traversalEncodedSlashesAndAbsolutePathsAnswer404AndNeverAnotherFile() throws IOException {
    String v = version();
    List<String> attempts =
        List.of(
            "/../pom.xml",
            "/../../../../etc/passwd",
            "/%2e%2e/%2e%2e/etc/passwd",
            "/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
            "//etc/passwd",
            "/assets/../pom.xml",
            "/assets/%2e%2e/%2e%2e/pom.xml",
            "/assets/" + v + "/../../pom.xml",
            "/assets/" + v + "/..%2f..%2fpom.xml",
            "/assets/" + v + "/%2e%2e%2fapi%2fopenapi.yaml",
            "/assets/" + v + "/%2Fetc%2Fpasswd",
            "/assets/" + v + "//etc/passwd",
            "/assets/" + v + "/%2F%2Fetc%2Fpasswd",
            "/assets/" + v + "/C:%5Cwindows%5Cwin.ini",
            "/assets/" + v + "/..%5C..%5Cpom.xml",
            "/assets/" + v + "/app.js%00.html",
            "/assets/" + v + "/index.html",
            "/assets/" + v + "/APP.JS",
            "/assets/" + v + "/%2e%2e/%2e%2e/io/fencekeeper/api/openapi.yaml",
            "/assets/" + v + "/io/fencekeeper/api/web/WebAssets.class",
            "/assets/" + v + "/file:%2F%2F%2Fetc%2Fpasswd",
            "/io/fencekeeper/web/app.js",
            "/assets/" + v,
            "/assets/");
    for (String target : attempts) {
      String response = raw("GET " + target + " HTTP/1.1");
      String status = response.substring(0, response.indexOf("\r\n"));
      assertTrue(
          status.contains(" 404 ") || status.contains(" 400 "), target + " answered " + status);
      for (String leak :
          List.of(
              "<project", "root:", "openapi:", "[fonts]", "import {", "\u00ca\u00fe\u00ba\u00be")) {
        assertFalse(response.contains(leak), target + " leaked " + leak + ":\n" + response);
      }
    }
    // the same file by its one right name is served
    String app = raw("GET /assets/" + v + "/app.js HTTP/1.1");
    assertTrue(app.startsWith("HTTP/1.1 200 "));
    // dot segments are resolved (RFC 3986 5.2.4) before routing: a path that climbs and comes
    // back into the folder is the same URL as the file's own; nothing climbs above "/"
    String back = raw("GET /assets/" + v + "/../" + v + "/app.js HTTP/1.1");
    assertEquals(app.substring(app.indexOf("\r\n\r\n")), back.substring(back.indexOf("\r\n\r\n")));
  }

  @Test
  void everyFileOfTheWebFolderIsListedAndThePageWeighsUnder200Kb() throws IOException {
    Path folder = Path.of("src/main/resources/io/fencekeeper/web");
    Set<String> onDisk;
    try (Stream<Path> files = Files.list(folder)) {
      onDisk =
          files.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
    }
    assertEquals(onDisk, new TreeSet<>(WebAssets.FILES), "WebAssets.FILES is the web folder");
    long weight = WebAssets.load().pageWeight();
    System.out.printf("dashboard page weight: %,d bytes in %d files%n", weight, onDisk.size());
    assertTrue(weight < 200_000, "the dashboard's assets weigh " + weight + " bytes");
  }

  @Test
  void headAnswersWithoutABodyAndOtherMethodsAreTheApis() {
    ApiTestNode.Answer head =
        api.send(
            HttpRequest.newBuilder(URI.create(api.base + "/"))
                .method("HEAD", HttpRequest.BodyPublishers.noBody()),
            null);
    assertEquals(200, head.status());
    assertEquals("", head.body());
    ApiTestNode.Answer post = api.post("/", "{}");
    assertEquals(404, post.status());
    assertEquals("not_found", post.error());
  }

  /** Sends the request line exactly as written: no client normalises the path first. */
  private String raw(String requestLine) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", api.port)) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(
          (requestLine + "\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream response = new ByteArrayOutputStream();
      in.transferTo(response);
      return response.toString(StandardCharsets.ISO_8859_1);
    }
  }
}
