package io.fencekeeper.api.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Reads server-sent events (text/event-stream) off a stream, one event at a time: what {@code
 * fencekeeper status --follow} does with {@code GET /api/runs/{runId}/events}.
 */
public final class EventStreamReader implements AutoCloseable {

  /** One event: its name ({@code message} when unnamed) and its data lines joined by '\n'. */
  public record Event(String name, String data) {}

  private final BufferedReader lines;

  public EventStreamReader(InputStream body) {
    this.lines = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8));
  }

  /** The next event; empty when the stream ended. Comments (keep-alives) are skipped. */
  public Optional<Event> next() throws IOException {
    String name = "message";
    StringBuilder data = null;
    for (String line; (line = lines.readLine()) != null; ) {
      if (line.isEmpty()) {
        if (data != null) {
          return Optional.of(new Event(name, data.toString()));
        }
        name = "message";
      } else if (!line.startsWith(":")) {
        int colon = line.indexOf(':');
        String field = colon < 0 ? line : line.substring(0, colon);
        String value = colon < 0 ? "" : line.substring(colon + 1);
        if (value.startsWith(" ")) {
          value = value.substring(1);
        }
        if (field.equals("event")) {
          name = value;
        } else if (field.equals("data")) {
          data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
        }
      }
    }
    return Optional.empty();
  }

  @Override
  public void close() throws IOException {
    lines.close();
  }
}
