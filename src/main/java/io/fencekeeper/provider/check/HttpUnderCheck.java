package io.fencekeeper.provider.check;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.provider.http.HttpProtocol;
import io.fencekeeper.provider.plugin.SdkMapping;
import io.fencekeeper.sdk.provider.Cleanup;
import io.fencekeeper.sdk.provider.Guarantees;
import io.fencekeeper.sdk.provider.Item;
import io.fencekeeper.sdk.provider.Plan;
import io.fencekeeper.sdk.provider.ProviderFailure;
import io.fencekeeper.sdk.provider.Receipt;
import io.fencekeeper.sdk.provider.check.AmbiguousAnswer;
import io.fencekeeper.sdk.provider.check.ProviderUnderCheck;
import io.fencekeeper.sdk.provider.check.UnreadableAnswer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLSocketFactory;

/**
 * An http provider as the checks call it: protocol 1.1 over plain sockets, one connection per call
 * ({@code Connection: close}), so that a cleanup can be cut off after its send (the request
 * written, the connection closed before the answer) and every answer is read as bytes, not
 * forgiven: a 2xx whose body is not what the protocol says is an {@link UnreadableAnswer}. What it
 * claims comes from {@code GET /v1/guarantees} (docs/provider-protocol.md, "Guarantees"); a server
 * without it is taken at its protocol version's word.
 */
public final class HttpUnderCheck implements ProviderUnderCheck {

  private static final String GUARANTEES_PATH = HttpProtocol.GUARANTEES_PATH;

  static final int MAX_HEAD_BYTES = 64 * 1024;
  static final int MAX_BODY_BYTES = 256 * 1024;

  private final URI base;
  private final Duration connectTimeout;
  private final Duration patience;
  private final Guarantees claims;
  private final String claimsSource;
  private final boolean speaks11;

  private HttpUnderCheck(
      URI base,
      Duration connectTimeout,
      Duration patience,
      Guarantees claims,
      String claimsSource,
      boolean speaks11) {
    this.base = base;
    this.connectTimeout = connectTimeout;
    this.patience = patience;
    this.claims = claims;
    this.claimsSource = claimsSource;
    this.speaks11 = speaks11;
  }

  /**
   * Asks {@code base} what it claims. Throws {@link UnreadableAnswer} when the discovery document
   * cannot be read, {@link AmbiguousAnswer} or a {@link ProviderFailure} when the provider gives no
   * usable answer.
   */
  public static HttpUnderCheck open(URI base, Duration connectTimeout, Duration patience) {
    String scheme = base.getScheme() == null ? "" : base.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https") || base.getHost() == null) {
      throw new IllegalArgumentException("the provider's URL must be http:// or https://host...");
    }
    HttpUnderCheck probe =
        new HttpUnderCheck(base, connectTimeout, patience, Guarantees.NONE, "", false);
    Response answer = probe.exchange("GET", GUARANTEES_PATH, Map.of(), null, false);
    boolean speaks11 = answer.speaks11();
    if (answer.status() == 200) {
      JsonNode document = answer.json("GET " + GUARANTEES_PATH);
      if (!document.isObject()) {
        throw new UnreadableAnswer(
            200, "GET " + GUARANTEES_PATH + " answered 200 with a body that is not an object");
      }
      return new HttpUnderCheck(
          base,
          connectTimeout,
          patience,
          new Guarantees(
              document.path("fences").asBoolean(false),
              document.path("keepsKeys").asBoolean(false),
              document.path("honoursDeadline").asBoolean(false)),
          "GET " + GUARANTEES_PATH,
          speaks11);
    }
    if (answer.status() == 404 || answer.status() == 405 || answer.status() == 501) {
      // no document: what the protocol requires of every server of its version (keys and
      // fencing are optional in both, the deadline a must of 1.1)
      return speaks11
          ? new HttpUnderCheck(
              base,
              connectTimeout,
              patience,
              new Guarantees(false, false, true),
              "protocol 1.1 without " + GUARANTEES_PATH + ": the deadline only",
              true)
          : new HttpUnderCheck(
              base,
              connectTimeout,
              patience,
              Guarantees.NONE,
              "protocol 1.0, no " + GUARANTEES_PATH + ": nothing beyond answering",
              false);
    }
    throw failure(answer, "GET " + GUARANTEES_PATH, false);
  }

  @Override
  public String description() {
    return "http provider " + base + " (protocol " + (speaks11 ? "1.1" : "1.0") + ")";
  }

  @Override
  public Guarantees claims() {
    return claims;
  }

  @Override
  public String claimsSource() {
    return claimsSource;
  }

  @Override
  public boolean comparesIdentityOnly() {
    return speaks11;
  }

  @Override
  public Plan plan(Item item) {
    String call = "GET " + HttpProtocol.PLANS_PATH;
    Response answer =
        exchange("GET", HttpProtocol.planPath(SdkMapping.itemId(item)), Map.of(), null, false);
    if (answer.status() != 200) {
      throw failure(answer, call, false);
    }
    JsonNode plan = answer.json(call);
    try {
      boolean nothing = bool(plan, "nothingToDo");
      return new Plan(
          nothing,
          nothing && !plan.path("action").isTextual() ? "none" : text(plan, "action"),
          plan.path("amountMinor").asLong(0),
          plan.path("currency").isTextual() ? plan.get("currency").asText() : null,
          plan.path("description").asText(""));
    } catch (IllegalArgumentException e) {
      throw new UnreadableAnswer(200, call + " answered 200 with a plan that " + e.getMessage());
    }
  }

  @Override
  public Receipt apply(Cleanup cleanup) {
    String call = "POST " + HttpProtocol.CLEANUPS_PATH;
    Response answer =
        exchange("POST", HttpProtocol.CLEANUPS_PATH, headers(cleanup), body(cleanup), false);
    if (answer.status() != 200 && answer.status() != 201) {
      throw failure(answer, call, true);
    }
    return receipt(answer, call, cleanup.idempotencyKey(), answer.status() == 200);
  }

  @Override
  public Optional<Receipt> lookup(Item item, String idempotencyKey) {
    String call = "GET " + HttpProtocol.CLEANUPS_PATH + "/{key}";
    Response answer =
        exchange(
            "GET",
            HttpProtocol.CLEANUPS_PATH + "/" + pathSegment(idempotencyKey),
            Map.of(),
            null,
            false);
    if (answer.status() == 404) {
      return Optional.empty();
    }
    if (answer.status() != 200) {
      throw failure(answer, call, false);
    }
    return Optional.of(receipt(answer, call, idempotencyKey, false));
  }

  /** Writes the request and closes the connection before a byte of the answer is read. */
  @Override
  public Optional<CompletableFuture<Receipt>> applyAndAbandon(Cleanup cleanup) {
    exchange("POST", HttpProtocol.CLEANUPS_PATH, headers(cleanup), body(cleanup), true);
    return Optional.empty();
  }

  private static Map<String, String> headers(Cleanup cleanup) {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put(HttpProtocol.IDEMPOTENCY_KEY, cleanup.idempotencyKey());
    headers.put(HttpProtocol.FENCING_TOKEN, Long.toString(cleanup.fencingToken()));
    headers.put(HttpProtocol.CLEANUP_DEADLINE, HttpProtocol.formatDeadline(cleanup.deadline()));
    headers.put("Content-Type", "application/json");
    return headers;
  }

  /** The body Fencekeeper's client sends (currency left out when the plan has none). */
  private static byte[] body(Cleanup cleanup) {
    try {
      return HttpProtocol.json()
          .writeValueAsBytes(
              HttpProtocol.CleanupRequest.of(
                  SdkMapping.itemId(cleanup.item()), SdkMapping.plan(cleanup.plan())));
    } catch (IOException e) {
      throw new IllegalStateException("a cleanup body is always JSON", e);
    }
  }

  private static Receipt receipt(Response answer, String call, String key, boolean replayed) {
    JsonNode body = answer.json(call);
    String effectId = body.path("effectId").asText("");
    if (effectId.isEmpty() || effectId.length() > 255) {
      throw new UnreadableAnswer(
          answer.status(),
          call + " answered " + answer.status() + " with a receipt without an effectId");
    }
    if (body.hasNonNull("idempotencyKey") && !key.equals(body.get("idempotencyKey").asText())) {
      throw new UnreadableAnswer(
          answer.status(),
          call + " answered " + answer.status() + " with a receipt for another key");
    }
    Instant appliedAt;
    try {
      appliedAt = Instant.parse(body.path("appliedAt").asText(""));
    } catch (DateTimeException e) {
      throw new UnreadableAnswer(
          answer.status(),
          call + " answered " + answer.status() + " with a receipt whose appliedAt is no instant");
    }
    return new Receipt(effectId, appliedAt, replayed);
  }

  /** What a status other than the protocol's success says, as protocol 1.1 lists them. */
  private static RuntimeException failure(Response answer, String call, boolean mutation) {
    int status = answer.status();
    String said = call + " answered " + status + answer.envelope().map(e -> " " + e).orElse("");
    if (status == 429) {
      return new ProviderFailure.Throttled(answer.retryAfter(call), said);
    }
    if (status == 409) {
      String code = answer.code().orElse("");
      if (code.equals(HttpProtocol.STALE_TOKEN)) {
        JsonNode body = answer.jsonOrNull();
        return new ProviderFailure.StaleToken(
            body == null ? -1 : body.path("presentedToken").asLong(-1),
            body == null ? -1 : body.path("highestToken").asLong(-1));
      }
      if (code.equals(HttpProtocol.KEY_IN_USE)) {
        return new ProviderFailure.KeyInUse(said);
      }
      if (code.equals(HttpProtocol.DEADLINE_PASSED)) {
        return new ProviderFailure.DeadlinePassed(said);
      }
      return new ProviderFailure.Transient(said);
    }
    if (status == 422) {
      return new ProviderFailure.KeyReused(said);
    }
    if (status == 408) {
      return new ProviderFailure.Transient(said);
    }
    if (status >= 500) {
      return mutation ? new AmbiguousAnswer(said) : new ProviderFailure.Transient(said);
    }
    return new ProviderFailure.Permanent(said);
  }

  // --- the wire ----------------------------------------------------------------------------------

  private Response exchange(
      String method, String path, Map<String, String> headers, byte[] body, boolean abandon) {
    int port = base.getPort() >= 0 ? base.getPort() : base.getScheme().equals("https") ? 443 : 80;
    String prefix = base.getRawPath() == null ? "" : base.getRawPath();
    if (prefix.endsWith("/")) {
      prefix = prefix.substring(0, prefix.length() - 1);
    }
    StringBuilder head = new StringBuilder();
    head.append(method).append(' ').append(prefix).append(path).append(" HTTP/1.1\r\n");
    head.append("Host: ").append(base.getHost()).append(':').append(port).append("\r\n");
    head.append("Connection: close\r\nAccept: application/json\r\n");
    head.append(HttpProtocol.PROTOCOL).append(": ").append(HttpProtocol.VERSION_1_1);
    head.append("\r\n");
    headers.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
    if (body != null) {
      head.append("Content-Length: ").append(body.length).append("\r\n");
    }
    head.append("\r\n");
    boolean sent = false;
    try (Socket socket =
        base.getScheme().equalsIgnoreCase("https")
            ? SSLSocketFactory.getDefault().createSocket()
            : new Socket()) {
      socket.connect(new InetSocketAddress(base.getHost(), port), (int) connectTimeout.toMillis());
      socket.setSoTimeout((int) patience.toMillis());
      OutputStream out = socket.getOutputStream();
      out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
      if (body != null) {
        out.write(body);
      }
      out.flush();
      sent = true;
      if (abandon) {
        return null; // closed here, before the answer
      }
      return Response.read(socket.getInputStream(), method + " " + path);
    } catch (SocketTimeoutException e) {
      if (!sent) {
        throw new ProviderFailure.Transient(method + " " + path + ": no connection: " + e);
      }
      throw new AmbiguousAnswer(
          method + " " + path + " gave no answer within " + patience.toMillis() + " ms");
    } catch (IOException e) {
      if (!sent) {
        throw new ProviderFailure.Transient(method + " " + path + ": no connection: " + e);
      }
      throw new AmbiguousAnswer(method + " " + path + ": the connection failed: " + e);
    }
  }

  /** An answer as bytes: its status, its headers (lower-case names), its body. */
  record Response(int status, Map<String, String> headers, byte[] body) {

    static Response read(InputStream in, String call) throws IOException {
      String statusLine = line(in, call);
      String[] parts = statusLine.split(" ", 3);
      int status;
      try {
        status =
            parts.length >= 2 && parts[0].startsWith("HTTP/") ? Integer.parseInt(parts[1]) : -1;
      } catch (NumberFormatException e) {
        status = -1;
      }
      if (status < 100 || status > 599) {
        throw new UnreadableAnswer(0, call + " answered with no HTTP status line");
      }
      Map<String, String> headers = new LinkedHashMap<>();
      int headBytes = statusLine.length();
      for (String header = line(in, call); !header.isEmpty(); header = line(in, call)) {
        headBytes += header.length();
        if (headBytes > MAX_HEAD_BYTES) {
          throw new UnreadableAnswer(status, call + " answered a head of more than 64 KiB");
        }
        int colon = header.indexOf(':');
        if (colon > 0) {
          headers.put(
              header.substring(0, colon).trim().toLowerCase(Locale.ROOT),
              header.substring(colon + 1).trim());
        }
      }
      byte[] body;
      if ("chunked".equalsIgnoreCase(headers.getOrDefault("transfer-encoding", ""))) {
        body = chunked(in, status, call);
      } else if (headers.containsKey("content-length")) {
        long length;
        try {
          length = Long.parseLong(headers.get("content-length"));
        } catch (NumberFormatException e) {
          throw new UnreadableAnswer(status, call + " answered an unreadable Content-Length");
        }
        if (length > MAX_BODY_BYTES || length < 0) {
          throw new UnreadableAnswer(status, call + " answered a body of more than 256 KiB");
        }
        body = in.readNBytes((int) length);
      } else {
        body = in.readNBytes(MAX_BODY_BYTES + 1);
        if (body.length > MAX_BODY_BYTES) {
          throw new UnreadableAnswer(status, call + " answered a body of more than 256 KiB");
        }
      }
      return new Response(status, headers, body);
    }

    private static byte[] chunked(InputStream in, int status, String call) throws IOException {
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      while (true) {
        String size = line(in, call);
        int semicolon = size.indexOf(';');
        int length;
        try {
          length =
              Integer.parseInt((semicolon >= 0 ? size.substring(0, semicolon) : size).trim(), 16);
        } catch (NumberFormatException e) {
          throw new UnreadableAnswer(status, call + " answered an unreadable chunk");
        }
        if (length == 0) {
          while (!line(in, call).isEmpty()) {
            // trailers: not read
          }
          return body.toByteArray();
        }
        if (body.size() + length > MAX_BODY_BYTES) {
          throw new UnreadableAnswer(status, call + " answered a body of more than 256 KiB");
        }
        body.write(in.readNBytes(length));
        line(in, call);
      }
    }

    private static String line(InputStream in, String call) throws IOException {
      StringBuilder line = new StringBuilder();
      while (true) {
        int b = in.read();
        if (b < 0) {
          if (line.length() == 0) {
            throw new IOException("the connection closed before the answer ended");
          }
          return line.toString();
        }
        if (b == '\n') {
          int end = line.length();
          return end > 0 && line.charAt(end - 1) == '\r'
              ? line.substring(0, end - 1)
              : line.toString();
        }
        if (line.length() > MAX_HEAD_BYTES) {
          throw new UnreadableAnswer(0, call + " answered a line of more than 64 KiB");
        }
        line.append((char) b);
      }
    }

    boolean speaks11() {
      String version = headers.get(HttpProtocol.PROTOCOL.toLowerCase(Locale.ROOT));
      return version != null && version.trim().startsWith("1.") && !version.trim().equals("1.0");
    }

    JsonNode json(String call) {
      JsonNode node = jsonOrNull();
      if (node == null || !node.isObject()) {
        throw new UnreadableAnswer(
            status, call + " answered " + status + " with a body that is not a JSON object");
      }
      return node;
    }

    JsonNode jsonOrNull() {
      try {
        return body.length == 0 ? null : HttpProtocol.json().readTree(body);
      } catch (IOException e) {
        return null;
      }
    }

    /** The error envelope's code, when the body is the envelope. */
    Optional<String> code() {
      JsonNode body = jsonOrNull();
      return body != null && body.path("error").isTextual()
          ? Optional.of(body.get("error").asText())
          : Optional.empty();
    }

    Optional<String> envelope() {
      return code().map(code -> "(" + code + ")");
    }

    /**
     * {@code Retry-After-Ms}, else {@code Retry-After} in seconds or as an HTTP date, else 1 s; one
     * present that is none of these is unreadable.
     */
    Duration retryAfter(String call) {
      String millis = headers.get(HttpProtocol.RETRY_AFTER_MS.toLowerCase(Locale.ROOT));
      String seconds = headers.get(HttpProtocol.RETRY_AFTER.toLowerCase(Locale.ROOT));
      try {
        if (millis != null) {
          return Duration.ofMillis(Math.max(0, Long.parseLong(millis.trim())));
        }
        if (seconds == null) {
          return Duration.ofSeconds(1);
        }
        if (seconds.trim().chars().allMatch(Character::isDigit)) {
          return Duration.ofSeconds(Long.parseLong(seconds.trim()));
        }
        Instant at =
            ZonedDateTime.parse(seconds.trim(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
        Duration until = Duration.between(Instant.now(), at);
        return until.isNegative() ? Duration.ZERO : until;
      } catch (NumberFormatException | DateTimeException e) {
        throw new UnreadableAnswer(
            429, call + " answered 429 with a Retry-After that is neither seconds nor a date");
      }
    }
  }

  /**
   * A key as one percent-encoded path segment ({@code /} included), as the http client sends it.
   */
  static String pathSegment(String value) {
    return java.net.URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
  }

  private static boolean bool(JsonNode node, String field) {
    if (!node.path(field).isBoolean()) {
      throw new IllegalArgumentException("has no boolean " + field);
    }
    return node.get(field).asBoolean();
  }

  private static String text(JsonNode node, String field) {
    if (!node.path(field).isTextual()) {
      throw new IllegalArgumentException("has no " + field);
    }
    return node.get(field).asText();
  }
}
