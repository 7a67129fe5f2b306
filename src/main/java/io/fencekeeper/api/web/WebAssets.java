package io.fencekeeper.api.web;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.reject;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The operator's dashboard: {@code GET /} answers the page, {@code GET /assets/{version}/{file}}
 * its scripts and styles, straight from the jar (no CDN, no build step, works with no network).
 * Every other path is left to the API.
 *
 * <p>Only the files named in {@link #FILES} are ever served, looked up by exact name in memory:
 * there is no file-system path to traverse, so {@code ..}, encoded slashes and absolute paths
 * cannot reach anything else (they answer 404). The version in asset paths is a digest of every
 * file, so assets are cached for a year ({@code immutable}) and a new jar changes every URL; the
 * page itself is revalidated on every load ({@code no-cache} with an ETag).
 */
public final class WebAssets {

  static final String FOLDER = "/io/fencekeeper/web/";

  /** The whole dashboard. A file not listed here is not served (and a test fails). */
  public static final List<String> FILES =
      List.of(
          "index.html",
          "app.css",
          "app.js",
          "api.js",
          "dom.js",
          "format.js",
          "charts.js",
          "runs-view.js",
          "run-view.js",
          "verify-panel.js",
          "item-view.js",
          "cluster-view.js",
          "fleet.js",
          "fleet-samples.js",
          "favicon.svg");

  static final String IMMUTABLE = "public, max-age=31536000, immutable";

  /**
   * The page runs only its own scripts and styles and talks only to its own node; nothing may frame
   * it (clickjacking of the cancel button).
   */
  static final String CONTENT_SECURITY_POLICY =
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
          + " connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

  static final String NOT_FOUND =
      "{\"error\":\"not_found\",\"message\":\"no such dashboard file; reload the page at / for"
          + " the current version\"}";

  private record Asset(byte[] bytes, String contentType, String etag) {}

  private final Map<String, Asset> assets = new LinkedHashMap<>();
  private final Asset index;
  private final String version;

  private WebAssets() {
    Map<String, byte[]> files = new LinkedHashMap<>();
    MessageDigest all = sha256();
    for (String name : FILES) {
      byte[] bytes = read(name);
      files.put(name, bytes);
      all.update(name.getBytes(StandardCharsets.UTF_8));
      all.update(bytes);
    }
    this.version = HexFormat.of().formatHex(all.digest(), 0, 6);
    for (Map.Entry<String, byte[]> file : files.entrySet()) {
      if (!file.getKey().equals("index.html")) {
        assets.put(file.getKey(), asset(file.getKey(), file.getValue()));
      }
    }
    String page =
        new String(files.get("index.html"), StandardCharsets.UTF_8)
            .replace("{{assets}}", "/assets/" + version);
    this.index = asset("index.html", page.getBytes(StandardCharsets.UTF_8));
  }

  /** Reads every file of the dashboard from the class path; fails at start-up if one is missing. */
  public static WebAssets load() {
    return new WebAssets();
  }

  /** The digest that versions the asset paths. */
  public String version() {
    return version;
  }

  /** Total bytes of the page and its assets, as a browser loads them. */
  public long pageWeight() {
    return index.bytes().length + assets.values().stream().mapToLong(a -> a.bytes().length).sum();
  }

  /** The page and its assets; any other request is rejected so the API's routes answer it. */
  public Route route() {
    return extractRequest(
        request -> respond(request).map(response -> complete(response)).orElseGet(() -> reject()));
  }

  /** The answer for a dashboard path, or empty when the path is not the dashboard's. */
  Optional<HttpResponse> respond(HttpRequest request) {
    if (!request.method().equals(HttpMethods.GET) && !request.method().equals(HttpMethods.HEAD)) {
      return Optional.empty();
    }
    List<String> segments = new ArrayList<>();
    request.getUri().pathSegments().forEach(segments::add);
    if (request.getUri().path().equals("/")) {
      return Optional.of(answer(request, index, "no-cache", true));
    }
    if (segments.isEmpty() || !segments.get(0).equals("assets")) {
      return Optional.empty();
    }
    // exact names only: a decoded segment holding '/', '..' or a drive letter never matches
    Asset asset =
        segments.size() == 3 && segments.get(1).equals(version)
            ? assets.get(segments.get(2))
            : null;
    if (asset == null) {
      // the API's error envelope, like every other refusal of the node (docs/design.md, "HTTP API")
      return Optional.of(
          HttpResponse.create()
              .withStatus(StatusCodes.NOT_FOUND)
              .addHeader(RawHeader.create("Cache-Control", "no-store"))
              .addHeader(RawHeader.create("X-Content-Type-Options", "nosniff"))
              .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, NOT_FOUND)));
    }
    return Optional.of(answer(request, asset, IMMUTABLE, false));
  }

  private static HttpResponse answer(
      HttpRequest request, Asset asset, String cacheControl, boolean page) {
    HttpResponse response =
        HttpResponse.create()
            .addHeader(RawHeader.create("Cache-Control", cacheControl))
            .addHeader(RawHeader.create("ETag", asset.etag()))
            .addHeader(RawHeader.create("X-Content-Type-Options", "nosniff"));
    if (page) {
      response =
          response
              .addHeader(RawHeader.create("Content-Security-Policy", CONTENT_SECURITY_POLICY))
              .addHeader(RawHeader.create("Referrer-Policy", "no-referrer"));
    }
    boolean unchanged =
        request
            .getHeader("If-None-Match")
            .map(header -> header.value().contains(asset.etag()))
            .orElse(false);
    if (unchanged) {
      return response.withStatus(StatusCodes.NOT_MODIFIED);
    }
    return response.withEntity(
        HttpEntities.create(ContentTypes.parse(asset.contentType()), asset.bytes()));
  }

  private static Asset asset(String name, byte[] bytes) {
    String etag = "\"" + HexFormat.of().formatHex(sha256().digest(bytes), 0, 8) + "\"";
    return new Asset(bytes, contentType(name), etag);
  }

  static String contentType(String name) {
    String extension = name.substring(name.lastIndexOf('.') + 1);
    return switch (extension) {
      case "html" -> "text/html; charset=UTF-8";
      case "css" -> "text/css; charset=UTF-8";
      case "js" -> "text/javascript; charset=UTF-8";
      case "svg" -> "image/svg+xml";
      default -> throw new IllegalStateException("no content type for " + name);
    };
  }

  private static byte[] read(String name) {
    try (InputStream in = WebAssets.class.getResourceAsStream(FOLDER + name)) {
      if (in == null) {
        throw new IllegalStateException(FOLDER + name + " is missing from the jar");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}
