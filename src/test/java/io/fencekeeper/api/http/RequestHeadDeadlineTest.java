package io.fencekeeper.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.testing.Await;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.BoundedSourceQueue;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The request head deadline as a stage between a connection's requests and its answers: it ends the
 * connection when no request comes in time, and never while an answer is still being written.
 */
class RequestHeadDeadlineTest {

  static final ActorTestKit KIT = ActorTestKit.create("head-deadline");
  static final Duration DEADLINE = Duration.ofMillis(300);

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  /** A connection: requests offered by the test, answers made by {@code handler}. */
  record Connection(BoundedSourceQueue<HttpRequest> requests, CompletionStage<Done> ended) {}

  static Connection connect(
      Flow<HttpRequest, HttpResponse, ?> handler, CopyOnWriteArrayList<HttpResponse> answers) {
    Pair<BoundedSourceQueue<HttpRequest>, CompletionStage<Done>> mat =
        Source.<HttpRequest>queue(8)
            .via(BidiFlow.fromGraph(new RequestHeadDeadline(DEADLINE)).join(handler))
            .toMat(
                Sink.foreach(
                    answer -> {
                      answers.add(answer);
                      answer.entity().getDataBytes().runWith(Sink.ignore(), KIT.system());
                    }),
                Keep.both())
            .run(KIT.system());
    return new Connection(mat.first(), mat.second());
  }

  @Test
  void aConnectionWithoutARequestEndsAtTheDeadline() throws Exception {
    // taken before the connection opens: the deadline runs from its opening, and on a loaded
    // machine connect() may return well after that (a CI run with a busy core measured the end
    // from after it and saw it come "before the deadline")
    long started = System.nanoTime();
    Connection silent =
        connect(
            Flow.of(HttpRequest.class).map(r -> HttpResponse.create()),
            new CopyOnWriteArrayList<>());
    silent.ended().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertTrue(System.nanoTime() - started >= DEADLINE.toNanos(), "not before the deadline");
  }

  @Test
  void aStreamedAnswerHoldsTheDeadlineOffUntilItsBodyEnds() throws Exception {
    CompletableFuture<Void> bodyMayEnd = new CompletableFuture<>();
    Flow<HttpRequest, HttpResponse, ?> streaming =
        Flow.of(HttpRequest.class)
            .map(
                r ->
                    HttpResponse.create()
                        .withEntity(
                            HttpEntities.createChunked(
                                ContentTypes.TEXT_PLAIN_UTF8,
                                Source.completionStage(
                                    bodyMayEnd.thenApply(v -> ByteString.fromString("end"))))));
    CopyOnWriteArrayList<HttpResponse> answers = new CopyOnWriteArrayList<>();
    Connection connection = connect(streaming, answers);
    connection.requests().offer(HttpRequest.GET("/api/events/runs"));
    Await.until(Duration.ofSeconds(10), "the streamed answer", () -> answers.size() == 1);
    // three deadlines pass while the body is still being written: the connection stays
    long until = System.nanoTime() + 3 * DEADLINE.toNanos();
    Await.until(Duration.ofSeconds(10), "three deadlines to pass", () -> System.nanoTime() > until);
    assertFalse(connection.ended().toCompletableFuture().isDone(), "ended while answering");
    bodyMayEnd.complete(null);
    connection.ended().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals(1, answers.size());
  }

  @Test
  void requestsInTimeKeepTheConnection() throws Exception {
    CopyOnWriteArrayList<HttpResponse> answers = new CopyOnWriteArrayList<>();
    Connection connection =
        connect(Flow.of(HttpRequest.class).map(r -> HttpResponse.create()), answers);
    for (int i = 1; i <= 3; i++) {
      connection.requests().offer(HttpRequest.GET("/api/runs"));
      int n = i;
      Await.until(Duration.ofSeconds(10), "answer " + i, () -> answers.size() == n);
    }
    assertFalse(connection.ended().toCompletableFuture().isDone());
    connection.ended().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }
}
