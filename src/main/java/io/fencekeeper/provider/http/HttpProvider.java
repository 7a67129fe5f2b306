package io.fencekeeper.provider.http;

import static io.fencekeeper.provider.http.HttpProtocol.json;
import static io.fencekeeper.provider.http.ProviderAnswers.bodyProblem;
import static io.fencekeeper.provider.http.ProviderAnswers.bodyTooLarge;
import static io.fencekeeper.provider.http.ProviderAnswers.classifyFailure;
import static io.fencekeeper.provider.http.ProviderAnswers.unwrap;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderException;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.http.ProviderAnswers.Answer;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.event.Logging;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.HttpsConnectionContext;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.Query;
import org.apache.pekko.http.javadsl.model.ResponseEntity;
import org.apache.pekko.http.javadsl.model.Uri;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.settings.ConnectionPoolSettings;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.SystemMaterializer;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.util.ByteString;

/**
 * A provider reached over the documented HTTP protocol (docs/provider-protocol.md), on a Pekko HTTP
 * host connection pool ({@code singleRequest} with this provider's pool settings) that runs on the
 * actor system's dispatcher: on a node, the node's own one pool of threads, with no client threads
 * of its own and no timer per request. No call ever blocks the caller's thread, and the caller's
 * continuations run on that dispatcher, never on the common pool.
 *
 * <p>The one rule that matters most: once a mutation may have left this process, a failure is
 * {@link ProviderError.Ambiguous}, never a plain failure, because the provider may have applied it.
 *
 * <p>How a request ends when the provider never answers: the pool's connections have an idle
 * timeout of {@code requestTimeout}. Once a request is written, nothing moves on its connection
 * until the answer comes, so after {@code requestTimeout} of silence Pekko closes the connection
 * and the request fails with a {@code TcpIdleTimeoutException}: "no answer within the request
 * timeout", {@link ProviderError.Ambiguous} on {@code POST /v1/cleanups} and {@link
 * ProviderError.Transient} on a {@code GET}. An answer whose body trickles in is cut off by the
 * same timeout ({@code toStrict}). A pooled connection that is merely idle between requests is
 * retired by the pool's keep-alive timeout (half the request timeout, at most 5 s) before the idle
 * timeout could fire on it, so the idle timeout only ever ends a request that is waiting for its
 * answer. (Pekko checks idleness with one periodic tick per connection on the actor system's
 * scheduler: once a second when the request timeout is longer than that.)
 */
public final class HttpProvider implements Provider {

  /** Connections of a provider started outside a node (tests, the bench): a worker pool's worth. */
  public static final int DEFAULT_MAX_CONNECTIONS = 64;

  /**
   * The most bytes of an answer's body that are read: the protocol's answers are a few hundred
   * bytes; a provider (or a proxy in front of it) answering more is cut off with an error instead
   * of filling the node's memory.
   */
  public static final int MAX_RESPONSE_BYTES = 256 * 1024;

  private static final HttpHeader ACCEPT_JSON = RawHeader.create("Accept", "application/json");
  private static final HttpHeader PROTOCOL_1_1 =
      RawHeader.create(HttpProtocol.PROTOCOL, HttpProtocol.VERSION_1_1);
  private static final Duration MAX_KEEP_ALIVE = Duration.ofSeconds(5);

  private final URI baseUrl;
  private final Uri plans;
  private final Uri cleanups;
  private final Duration requestTimeout;
  private final Http http;
  private final HttpsConnectionContext tls;
  private final ConnectionPoolSettings pool;
  private final LoggingAdapter log;
  private final Materializer materializer;
  private final Executor executor;
  private final ActorSystem ownedSystem;
  private final List<AutoCloseable> ownedResources = new CopyOnWriteArrayList<>();
  private volatile boolean closed;
  // null until the provider first answered
  private volatile String serverProtocol;
  // a 1.1 provider whose plan has something to do and no currency is said once, not per item
  private final AtomicBoolean planWarning = new AtomicBoolean();

  private HttpProvider(
      ClassicActorSystemProvider system,
      URI baseUrl,
      Duration connectTimeout,
      Duration requestTimeout,
      int maxConnections,
      ActorSystem ownedSystem) {
    String url = baseUrl.toString();
    url = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    String scheme = baseUrl.getScheme() == null ? "" : baseUrl.getScheme().toLowerCase();
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw new IllegalArgumentException("the provider's URL must be http or https: " + baseUrl);
    }
    if (maxConnections < 1) {
      throw new IllegalArgumentException(
          "maxConnections must be at least 1, got " + maxConnections);
    }
    this.baseUrl = URI.create(url);
    this.plans = Uri.create(url + HttpProtocol.PLANS_PATH);
    this.cleanups = Uri.create(url + HttpProtocol.CLEANUPS_PATH);
    this.requestTimeout = requestTimeout;
    ActorSystem classic = system.classicSystem();
    this.http = Http.get(classic);
    this.tls = http.defaultClientHttpsContext();
    this.pool =
        poolSettings(classic.settings().config(), maxConnections, connectTimeout, requestTimeout);
    this.log = Logging.getLogger(classic, HttpProvider.class);
    this.materializer = SystemMaterializer.get(classic).materializer();
    this.executor = classic.dispatcher();
    this.ownedSystem = ownedSystem;
  }

  /**
   * The provider of a node: its pool of at most {@code maxConnections} connections runs on {@code
   * system} (the node's), which outlives it.
   */
  public static HttpProvider create(
      ClassicActorSystemProvider system,
      URI baseUrl,
      Duration connectTimeout,
      Duration requestTimeout,
      int maxConnections) {
    return new HttpProvider(system, baseUrl, connectTimeout, requestTimeout, maxConnections, null);
  }

  /**
   * A provider outside a node (tests, the bench), on a small actor system of its own that closing
   * it terminates; {@link #DEFAULT_MAX_CONNECTIONS} connections.
   */
  public static HttpProvider create(URI baseUrl, Duration connectTimeout, Duration requestTimeout) {
    return create(baseUrl, connectTimeout, requestTimeout, DEFAULT_MAX_CONNECTIONS);
  }

  /** As {@link #create(URI, Duration, Duration)}, with at most {@code maxConnections}. */
  public static HttpProvider create(
      URI baseUrl, Duration connectTimeout, Duration requestTimeout, int maxConnections) {
    ActorSystem system = StandaloneSystem.start("fencekeeper-http-provider", 4);
    try {
      return new HttpProvider(
          system, baseUrl, connectTimeout, requestTimeout, maxConnections, system);
    } catch (RuntimeException e) {
      StandaloneSystem.terminate(system);
      throw e;
    }
  }

  /**
   * Also closes {@code resource} (an embedded server) when this provider closes, after the calls
   * are refused and before its own actor system, if it has one, terminates.
   */
  public HttpProvider closing(AutoCloseable resource) {
    ownedResources.add(resource);
    return this;
  }

  public URI baseUrl() {
    return baseUrl;
  }

  /**
   * The pool of one provider: {@code maxConnections}, no retries by Pekko (the worker's rules
   * decide what is retried, and a retried POST could apply twice at a non-idempotent provider),
   * connection attempts backed off for at most the connect timeout (a refused connection fails its
   * request at once, and the next attempt comes soon after the provider is back), and the timeouts
   * of the class comment.
   */
  static ConnectionPoolSettings poolSettings(
      Config systemConfig, int maxConnections, Duration connectTimeout, Duration requestTimeout) {
    Duration keepAlive = requestTimeout.dividedBy(2);
    keepAlive = keepAlive.compareTo(MAX_KEEP_ALIVE) > 0 ? MAX_KEEP_ALIVE : keepAlive;
    long maxBackoffMillis = Math.min(Math.max(connectTimeout.toMillis(), 100), 2000);
    String pool = "pekko.http.host-connection-pool.";
    Config overrides =
        ConfigFactory.parseMap(
            Map.ofEntries(
                Map.entry(pool + "max-connections", maxConnections),
                Map.entry(pool + "min-connections", 0),
                // requests beyond the connections wait in the pool, up to this many in all
                Map.entry(pool + "max-open-requests", queueSize(maxConnections)),
                Map.entry(pool + "max-retries", 0),
                Map.entry(pool + "base-connection-backoff", "100ms"),
                Map.entry(pool + "max-connection-backoff", maxBackoffMillis + "ms"),
                Map.entry(pool + "keep-alive-timeout", millis(keepAlive)),
                Map.entry(pool + "client.connecting-timeout", millis(connectTimeout)),
                Map.entry(pool + "client.idle-timeout", millis(requestTimeout)),
                Map.entry(pool + "client.parsing.max-content-length", MAX_RESPONSE_BYTES)));
    return ConnectionPoolSettings.create(overrides.withFallback(systemConfig));
  }

  /** Pekko wants a power of two: at least 16 waiting requests per connection. */
  static int queueSize(int maxConnections) {
    int wanted = Math.max(32, maxConnections * 16);
    return Integer.highestOneBit(wanted - 1) << 1;
  }

  private static String millis(Duration duration) {
    return Math.max(1, duration.toMillis()) + "ms";
  }

  @Override
  public CompletionStage<Plan> plan(ItemId item) {
    // the item's parts, and (from 1.1) its id and key, so a server can tie the plan to the key
    Uri uri =
        plans.query(
            Query.create(
                Pair.create("job", item.job()),
                Pair.create("businessDate", item.businessDate().toString()),
                Pair.create("accountId", item.accountId()),
                Pair.create("cursor", item.cursor()),
                Pair.create("itemId", item.value()),
                Pair.create("idempotencyKey", item.idempotencyKey())));
    return send(
        get(uri),
        false,
        -1,
        answer -> {
          Plan plan = ProviderAnswers.readPlan(answer);
          if (!plan.nothingToDo()
              && plan.currency() == null
              && !answer.protocol().equals(HttpProtocol.VERSION_1_0)
              && planWarning.compareAndSet(false, true)) {
            // the cleanup then goes without one, as 1.0's body: the provider must accept that
            log.warning(
                "the provider at {} speaks protocol {} but planned a cleanup without a currency;"
                    + " its cleanups are sent without one, as a 1.0 client would send them",
                baseUrl,
                answer.protocol());
          }
          return plan;
        });
  }

  /**
   * {@code POST /v1/cleanups} with the version, key, token and deadline headers; the body is 1.0's
   * with {@code currency} added only when the plan has one (docs/provider-protocol.md,
   * "Compatibility").
   */
  @Override
  public CompletionStage<Receipt> apply(Cleanup cleanup) {
    byte[] body;
    try {
      body =
          json().writeValueAsBytes(HttpProtocol.CleanupRequest.of(cleanup.item(), cleanup.plan()));
    } catch (JsonProcessingException e) {
      // nothing has been sent yet, and a body that cannot be written never will be
      return CompletableFuture.failedFuture(
          new ProviderException(new ProviderError.Permanent("cannot encode cleanup: " + e), e));
    }
    String idempotencyKey = cleanup.idempotencyKey();
    if (!HttpProtocol.isKey(idempotencyKey)) {
      return CompletableFuture.failedFuture(
          new ProviderException(
              new ProviderError.Permanent(
                  "the idempotency key cannot be sent as a header (1-255 visible characters)")));
    }
    HttpRequest request =
        HttpRequest.create()
            .withMethod(HttpMethods.POST)
            .withUri(cleanups)
            .withHeaders(
                List.of(
                    ACCEPT_JSON,
                    PROTOCOL_1_1,
                    RawHeader.create(HttpProtocol.IDEMPOTENCY_KEY, idempotencyKey),
                    RawHeader.create(
                        HttpProtocol.FENCING_TOKEN, Long.toString(cleanup.fencingToken())),
                    RawHeader.create(
                        HttpProtocol.CLEANUP_DEADLINE,
                        HttpProtocol.formatDeadline(cleanup.deadline()))))
            .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, body));
    return send(
        request,
        true,
        cleanup.fencingToken(),
        answer -> ProviderAnswers.readCleanupAnswer(answer, idempotencyKey));
  }

  @Override
  public CompletionStage<Optional<Receipt>> lookup(ItemId item, String idempotencyKey) {
    // one path segment: Pekko percent-encodes whatever the key holds, '/' included
    return send(
        get(cleanups.addPathSegment(idempotencyKey)),
        false,
        -1,
        answer -> ProviderAnswers.readLookup(answer, idempotencyKey));
  }

  /**
   * The protocol version of the provider's last answer that was its own (docs/provider-protocol.md,
   * "Versions"): {@code 1.0} when such answers carry no {@code Fencekeeper-Protocol} header; empty
   * before it gave one. A proxy's or an HTTP stack's answer changes nothing.
   */
  public Optional<String> serverProtocol() {
    return Optional.ofNullable(serverProtocol);
  }

  /** Refuses new calls (Transient: nothing is sent), then closes what it owns. */
  @Override
  public void close() {
    closed = true;
    List<Exception> failures = new ArrayList<>();
    for (AutoCloseable resource : ownedResources) {
      try {
        resource.close();
      } catch (Exception e) {
        failures.add(e);
      }
    }
    if (ownedSystem != null) {
      StandaloneSystem.terminate(ownedSystem);
    }
    if (!failures.isEmpty()) {
      throw new IllegalStateException(
          "closing the provider's embedded resource failed", failures.get(0));
    }
  }

  private static HttpRequest get(Uri uri) {
    return HttpRequest.create().withUri(uri).addHeader(ACCEPT_JSON).addHeader(PROTOCOL_1_1);
  }

  /**
   * Hands the request to the pool and maps what comes back; every step after the pool runs on the
   * system's dispatcher, and so does whatever the caller chains on the stage.
   */
  private <T> CompletionStage<T> send(
      HttpRequest request, boolean mutation, long fencingToken, Function<Answer, T> onAnswer) {
    CompletableFuture<T> result = new CompletableFuture<>();
    if (closed) {
      result.completeExceptionally(
          new ProviderException(
              new ProviderError.Transient("the provider client is closed; nothing was sent")));
      return result;
    }
    CompletionStage<HttpResponse> response;
    try {
      response = http.singleRequest(request, tls, pool, log);
    } catch (RuntimeException e) {
      result.completeExceptionally(
          new ProviderException(
              new ProviderError.Transient(
                  "the connection pool refused the request (nothing was sent): " + e),
              e));
      return result;
    }
    // Pekko's stage would run a plain whenComplete on the common pool: name the executor
    response.whenCompleteAsync(
        (answered, failure) -> {
          if (failure != null) {
            Throwable cause = unwrap(failure);
            result.completeExceptionally(
                new ProviderException(saidOf(classifyFailure(cause, mutation)), cause));
          } else {
            read(answered, mutation, fencingToken, onAnswer, result);
          }
        },
        executor);
    return result;
  }

  /**
   * An ambiguous cleanup at a provider that answers as 1.0 says that its deadline is not promised:
   * the worker waits for it all the same (it cannot know better), and the audit must not suggest
   * more than that.
   */
  private ProviderError saidOf(ProviderError error) {
    if (!(error instanceof ProviderError.Ambiguous ambiguous)
        || ProviderAnswers.speaks11(serverProtocol)) {
      return error;
    }
    return new ProviderError.Ambiguous(
        ambiguous.message()
            + (serverProtocol == null
                ? " (the provider has not yet answered as protocol 1.1, so it is not known to"
                    + " commit nothing after the cleanup's deadline)"
                : " (the provider answers as protocol 1.0, which does not promise to commit"
                    + " nothing after the cleanup's deadline)"));
  }

  /**
   * Reads the body, at most {@link #MAX_RESPONSE_BYTES}: at once when it came with the headers (the
   * usual case), otherwise within the request timeout.
   */
  private <T> void read(
      HttpResponse response,
      boolean mutation,
      long fencingToken,
      Function<Answer, T> onAnswer,
      CompletableFuture<T> result) {
    ResponseEntity entity = response.entity();
    if (entity.isStrict()) {
      ByteString data = ((HttpEntity.Strict) entity).getData();
      boolean tooLarge = data.size() > MAX_RESPONSE_BYTES;
      finish(
          Answer.of(
              response,
              tooLarge ? null : data,
              tooLarge ? bodyTooLarge() : null,
              fencingToken,
              serverProtocol),
          mutation,
          onAnswer,
          result);
      return;
    }
    if (entity.getContentLengthOption().orElse(0) > MAX_RESPONSE_BYTES) {
      // announced as too large: not a byte of it is read, and the pool closes the connection
      entity.getDataBytes().runWith(Sink.cancelled(), materializer);
      finish(
          Answer.of(response, null, bodyTooLarge(), fencingToken, serverProtocol),
          mutation,
          onAnswer,
          result);
      return;
    }
    entity
        .toStrict(requestTimeout.toMillis(), MAX_RESPONSE_BYTES, materializer)
        .whenCompleteAsync(
            (strict, failure) ->
                finish(
                    failure == null
                        ? Answer.of(response, strict.getData(), null, fencingToken, serverProtocol)
                        : Answer.of(
                            response,
                            null,
                            bodyProblem(unwrap(failure)),
                            fencingToken,
                            serverProtocol),
                    mutation,
                    onAnswer,
                    result),
            executor);
  }

  private <T> void finish(
      Answer answer, boolean mutation, Function<Answer, T> onAnswer, CompletableFuture<T> result) {
    ProviderAnswers.versionAfter(answer).ifPresent(version -> serverProtocol = version);
    try {
      result.complete(onAnswer.apply(answer));
    } catch (ProviderException e) {
      ProviderError said = saidOf(e.error());
      result.completeExceptionally(said == e.error() ? e : new ProviderException(said, e));
    } catch (RuntimeException e) {
      // a ProviderException from the mapping, or a bug: ProviderError.from makes the latter
      // ambiguous, which is always safe
      result.completeExceptionally(e);
    }
  }
}
