package io.fencekeeper.api.client;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A small client of a node's HTTP API for the {@code status}, {@code audit}, {@code report}, {@code
 * run}, {@code verify} and {@code archive prune} commands.
 */
public final class ApiClient {

  /** One answer: the status and the body as text. */
  public record Answer(int status, String body) {}

  private final URI base;
  private final String token;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  public ApiClient(URI base, String token) {
    String text = base.toString();
    this.base = URI.create(text.endsWith("/") ? text.substring(0, text.length() - 1) : text);
    this.token = token == null ? "" : token;
  }

  /** An id with '/' as one percent-encoded path segment. */
  public static String segment(String id) {
    return URLEncoder.encode(id, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /**
   * Uploads a file as the body ({@code POST}), streamed from disk; no request timeout, because the
   * node answers once it has staged the whole file.
   */
  public Answer upload(String pathAndQuery, String contentType, Path file)
      throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(base + pathAndQuery))
            .header("Content-Type", contentType)
            .POST(HttpRequest.BodyPublishers.ofFile(file));
    if (!token.isEmpty()) {
      request.header("Authorization", "Bearer " + token);
    }
    HttpResponse<String> response =
        http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    return new Answer(response.statusCode(), response.body());
  }

  /** A query parameter value, percent-encoded. */
  public static String param(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  /**
   * A GET whose body is read as it arrives: an event stream, a report of a million lines. The
   * timeout covers the wait for the answer's headers, not the reading.
   */
  public HttpResponse<InputStream> open(String path, String accept)
      throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(Duration.ofSeconds(30))
            .header("Accept", accept)
            .GET();
    if (!token.isEmpty()) {
      request.header("Authorization", "Bearer " + token);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
  }

  /** A POST of a JSON body ({@code Content-Type: application/json}, as every change needs). */
  public Answer post(String path, String json) throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
    if (!token.isEmpty()) {
      request.header("Authorization", "Bearer " + token);
    }
    HttpResponse<String> response =
        http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    return new Answer(response.statusCode(), response.body());
  }

  public Answer get(String path) throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30)).GET();
    if (!token.isEmpty()) {
      request.header("Authorization", "Bearer " + token);
    }
    HttpResponse<String> response =
        http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    return new Answer(response.statusCode(), response.body());
  }
}
