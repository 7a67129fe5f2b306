package io.fencekeeper.api.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.api.ApiTestNode;
import io.fencekeeper.api.http.ApiAuth;
import io.fencekeeper.api.http.ApiCall;
import io.fencekeeper.api.http.ApiEndpoint;
import io.fencekeeper.api.http.ApiError;
import io.fencekeeper.api.http.ApiResponse;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Test;

/**
 * The dashboard's live feeds: server-sent events of one run and of the run list, at most one event
 * a second, bounded per node, and ended with a {@code closing} event when the node shuts down.
 */
public class RunEventStreamsTest {

  private final ApiTestNode api = ApiTestNode.get();

  /** One server-sent event as read off the wire. */
  public record Event(String name, JsonNode data) {}

  /** Reads events from an open stream; null when the stream ended. */
  public static final class EventReader implements AutoCloseable {
    public final HttpResponse<InputStream> response;
    final BufferedReader lines;

    EventReader(HttpResponse<InputStream> response) {
      this.response = response;
      this.lines =
          new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8));
    }

    public Event next(ApiTestNode api) throws Exception {
      return CompletableFuture.supplyAsync(
              () -> {
                try {
                  String name = null;
                  StringBuilder data = new StringBuilder();
                  for (String line; (line = lines.readLine()) != null; ) {
                    if (line.isEmpty()) {
                      if (data.length() > 0) {
                        return new Event(name, api.json.readTree(data.toString()));
                      }
                      name = null;
                    } else if (line.startsWith("event: ")) {
                      name = line.substring(7);
                    } else if (line.startsWith("data: ")) {
                      data.append(line.substring(6));
                    }
                  }
                  return null;
                } catch (IOException e) {
                  return null;
                }
              })
          .get(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws IOException {
      lines.close();
    }
  }

  public static EventReader open(ApiTestNode api, String path) throws Exception {
    HttpResponse<InputStream> response =
        api.http.send(
            HttpRequest.newBuilder(URI.create(api.base + path))
                .header("Authorization", "Bearer " + ApiTestNode.TOKEN)
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofInputStream());
    return new EventReader(response);
  }

  @Test
  void aRunsStreamStartsWithASnapshotAndEndsAfterTheRunEnded() throws Exception {
    String runId = api.createRun(ApiTestNode.newJob("events"), 2);
    try (EventReader stream = open(api, "/api/runs/" + ApiTestNode.seg(runId) + "/events")) {
      assertEquals(200, stream.response.statusCode());
      assertEquals(
          "text/event-stream", stream.response.headers().firstValue("Content-Type").orElse(""));
      assertEquals(
          "no-cache, no-store", stream.response.headers().firstValue("Cache-Control").orElse(""));
      Event snapshot = stream.next(api);
      assertEquals("snapshot", snapshot.name());
      assertEquals(runId, snapshot.data().path("run").path("runId").asText());
      assertEquals("RUNNING", snapshot.data().path("run").path("state").asText());
      assertTrue(snapshot.data().path("history").path("at").isArray());

      assertEquals(200, api.post("/api/runs/" + ApiTestNode.seg(runId) + "/cancel", null).status());
      Event last = null;
      for (Event event = stream.next(api); event != null; event = stream.next(api)) {
        assertEquals("progress", event.name());
        assertTrue(event.data().path("sample").has("done"), event.data().toString());
        last = event;
      }
      assertEquals("CANCELLED", last.data().path("run").path("state").asText());
    }
  }

  /**
   * A running run whose figures stand still (this node has no workers and a clock that does not
   * move: nothing changes) still sends the second's sample, so its chart moves on.
   */
  @Test
  void aRunningRunWhoseFiguresStandStillStillSendsEachSecondsSample() throws Exception {
    String runId = api.createRun(ApiTestNode.newJob("still"), 2);
    try (EventReader stream = open(api, "/api/runs/" + ApiTestNode.seg(runId) + "/events")) {
      assertEquals("snapshot", stream.next(api).name());
      long before = Long.MIN_VALUE;
      for (int i = 0; i < 3; i++) {
        Event event = stream.next(api);
        assertEquals("progress", event.name());
        assertEquals("RUNNING", event.data().path("run").path("state").asText());
        assertEquals(0, event.data().path("run").path("counts").path("done").asLong());
        long at = event.data().path("sample").path("at").asLong();
        assertTrue(at > before, "a new sample each time: " + event.data());
        before = at;
      }
    } finally {
      api.post("/api/runs/" + ApiTestNode.seg(runId) + "/cancel", null);
    }
  }

  @Test
  void theRunListStreamSendsEveryRun() throws Exception {
    String runId = api.createRun(ApiTestNode.newJob("list-events"), 1);
    try (EventReader stream = open(api, "/api/events/runs")) {
      Event first = stream.next(api);
      assertEquals("runs", first.name());
      boolean listed = false;
      for (JsonNode run : first.data().path("runs")) {
        listed |= run.path("runId").asText().equals(runId);
      }
      assertTrue(listed, first.data().toString());
    }
  }

  @Test
  void anUnknownRunIsA404NotAStream() {
    ApiTestNode.Answer unknown =
        api.get("/api/runs/" + ApiTestNode.seg("nope/2026-11-29") + "/events");
    assertEquals(404, unknown.status());
    assertEquals("unknown_run", unknown.error());
  }

  @Test
  void streamsAreBoundedPerNodeAndEndWithAClosingEvent() throws Exception {
    RunEventStreams streams =
        new RunEventStreams(api.node.system(), api.node.runs(), api.json, view -> view, 1);
    ApiCall call =
        new ApiCall(
            ApiEndpoint.RUN_LIST_EVENTS,
            List.of(),
            Map.of(),
            new byte[0],
            null,
            ApiAuth.Role.ADMIN);
    ApiResponse first = streams.runList(call).toCompletableFuture().get(30, TimeUnit.SECONDS);
    ApiError refused = assertThrows(ApiError.class, () -> streams.runList(call));
    assertEquals(503, refused.status());
    assertEquals("too_many_streams", refused.code());

    CompletableFuture<List<ByteString>> read =
        first.stream().body().runWith(Sink.seq(), api.node.system()).toCompletableFuture();
    streams.close();
    String text =
        String.join(
            "", read.get(30, TimeUnit.SECONDS).stream().map(ByteString::utf8String).toList());
    assertTrue(text.startsWith("retry: 2000\n\nevent: runs\ndata: {\"runs\":"), text);
    assertTrue(text.endsWith("\n\n") && text.contains("event: closing\n"), text);
    ApiTestNode.await(
        streams::openStreams,
        open -> open == 0,
        Duration.ofSeconds(10),
        "the stream to be released");
  }

  @Test
  void theNodesShutdownEndsItsOpenStreams() throws Exception {
    ApiTestNode own = ApiTestNode.fresh();
    try (EventReader stream = open(own, "/api/events/runs")) {
      assertEquals("runs", stream.next(own).name());
      own.node.system().terminate();
      Event event = stream.next(own);
      while (event != null && !"closing".equals(event.name())) {
        event = stream.next(own);
      }
      assertEquals("closing", event == null ? "the stream ended without it" : event.name());
      assertEquals(null, stream.next(own), "the stream ends after the closing event");
    } finally {
      own.node.close();
    }
  }
}
