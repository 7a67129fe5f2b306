package io.fencekeeper.api.stream;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.http.ApiCall;
import io.fencekeeper.api.http.ApiError;
import io.fencekeeper.api.http.ApiErrors;
import io.fencekeeper.api.http.ApiResponse;
import io.fencekeeper.api.http.ApiStream;
import io.fencekeeper.run.RunFilter;
import io.fencekeeper.run.RunService;
import io.fencekeeper.run.RunView;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.stream.BoundedSourceQueue;
import org.apache.pekko.stream.QueueOfferResult;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dashboard's live feeds as server-sent events: {@code GET /api/events/runs} (the first page of
 * the run list, then each run that changed: a run that has not ended, or one that just ended) and
 * {@code GET /api/runs/{runId}/events} (one run: a snapshot with its history first, then its
 * progress). One poll a second of the runs that have not ended serves every stream of the node, so
 * an open dashboard costs the cluster nothing per viewer and nothing grows with history. While
 * nobody watches, the poll comes every tenth second only, run or no run: it still feeds {@link
 * RunHistory}, so the chart starts at the run's start, but a node with a run in flight does not ask
 * the coordinator and read the staging table every second for no one (docs/bench.md, "A run that
 * waits"). The node's {@link StreamSlots} bound the streams open at once, per node, per token and
 * per remote address (503 {@code too_many_streams} beyond); a slot comes back however its stream
 * ends, including a client that resets the connection before the stream starts. The node's shutdown
 * ends every stream with a {@code closing} event.
 */
public final class RunEventStreams implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(RunEventStreams.class);

  public static final int DEFAULT_MAX_STREAMS = 32;
  static final Duration TICK = Duration.ofSeconds(1);

  /** With nobody watching, the coordinator is asked every tenth tick only. */
  static final int IDLE_TICKS = 10;

  static final Duration HEARTBEAT = Duration.ofSeconds(15);

  /**
   * An answer whose body has not started this long after it was made never will: its client reset
   * the connection before pekko wrote it. Its slot comes back then (and a body that starts later
   * after all ends at once; the browser reconnects).
   */
  static final Duration START_WITHIN = Duration.ofSeconds(10);

  private static final int QUEUE = 16;
  private static final Map<String, String> SSE_HEADERS =
      Map.of("Cache-Control", "no-cache, no-store", "X-Accel-Buffering", "no");

  private final ActorSystem<?> system;
  private final RunService runs;
  private final ObjectMapper mapper;
  private final Function<RunView, Object> view;
  private final StreamSlots slots;
  private final RunHistory history = new RunHistory();
  private final Set<Subscriber> subscribers = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean polling = new AtomicBoolean();
  private final AtomicLong ticks = new AtomicLong();
  // the runs that had not ended at the last poll
  private volatile Set<String> lastActive = Set.of();
  private volatile boolean closed;
  private Cancellable ticker;

  RunEventStreams(
      ActorSystem<?> system,
      RunService runs,
      ObjectMapper mapper,
      Function<RunView, Object> view,
      int maxStreams) {
    this(system, runs, mapper, view, new StreamSlots(maxStreams, 0, 0));
  }

  public RunEventStreams(
      ActorSystem<?> system,
      RunService runs,
      ObjectMapper mapper,
      Function<RunView, Object> view,
      StreamSlots slots) {
    this.system = system;
    this.runs = runs;
    this.mapper = mapper;
    this.view = view;
    this.slots = slots;
  }

  /** Starts polling the coordinator once a second. */
  public RunEventStreams start() {
    ticker =
        system
            .scheduler()
            .scheduleAtFixedRate(Duration.ZERO, TICK, this::tick, system.executionContext());
    return this;
  }

  public int openStreams() {
    return slots.open();
  }

  RunHistory history() {
    return history;
  }

  // --- endpoints -------------------------------------------------------------------------------

  public CompletionStage<ApiResponse> runList(ApiCall call) {
    StreamSlots.Slot slot = reserve(call);
    return runs.list(RunFilter.all(RunFilter.DEFAULT_LIMIT))
        .handle(
            (page, failure) -> {
              if (failure != null) {
                slot.release();
                throw ApiErrors.unwrap(failure) instanceof RuntimeException e
                    ? e
                    : new IllegalStateException(failure);
              }
              Subscriber subscriber = new Subscriber(null);
              page.runs().forEach(run -> subscriber.sentRuns.put(run.runId(), runData(run)));
              Map<String, Object> first = new LinkedHashMap<>();
              first.put("runs", page.runs().stream().map(view).toList());
              first.put("next", page.next().map(RunFilter.Cursor::token).orElse(null));
              return stream(slot, subscriber, event("runs", json(first)), false);
            });
  }

  public CompletionStage<ApiResponse> run(ApiCall call, CompletionStage<RunView> found) {
    StreamSlots.Slot slot = reserve(call);
    return found.handle(
        (run, failure) -> {
          if (failure != null) {
            slot.release();
            throw ApiErrors.unwrap(failure) instanceof RuntimeException e
                ? e
                : new IllegalStateException(failure);
          }
          history.record(run, System.currentTimeMillis());
          Subscriber subscriber = new Subscriber(run.runId());
          subscriber.lastData = json(Map.of("run", view.apply(run)));
          Map<String, Object> snapshot = new LinkedHashMap<>();
          snapshot.put("run", view.apply(run));
          snapshot.put("history", history.snapshot(run.runId()));
          // an ended run has nothing more to say: one snapshot, then the stream ends
          return stream(slot, subscriber, event("snapshot", json(snapshot)), run.state().ended());
        });
  }

  /** A slot for the caller's stream: one per node, token and remote address within the caps. */
  private StreamSlots.Slot reserve(ApiCall call) {
    if (closed) {
      throw new ApiError(503, "unavailable", "the node is shutting down");
    }
    return slots.reserve(call.role().name(), call.remoteAddress());
  }

  private ApiResponse stream(
      StreamSlots.Slot slot, Subscriber subscriber, ByteString first, boolean endAfterFirst) {
    Source<ByteString, NotUsed> source =
        Source.<ByteString>queue(QUEUE)
            .mapMaterializedValue(
                queue -> {
                  if (!slot.start()) {
                    queue.complete(); // its slot came back already: it started too late
                    return NotUsed.getInstance();
                  }
                  subscriber.queue = queue;
                  subscriber.lastSent = System.currentTimeMillis();
                  queue.offer(ByteString.fromString("retry: 2000\n\n"));
                  queue.offer(first);
                  if (endAfterFirst || closed) {
                    if (closed) {
                      queue.offer(closingEvent());
                    }
                    queue.complete();
                  } else {
                    subscribers.add(subscriber);
                  }
                  return NotUsed.getInstance();
                })
            .watchTermination(
                (mat, done) -> {
                  done.whenComplete(
                      (ok, failure) -> {
                        subscribers.remove(subscriber);
                        slot.release();
                      });
                  return mat;
                });
    // a client that reset the connection before the answer was written never starts the body
    system
        .scheduler()
        .scheduleOnce(START_WITHIN, slot::releaseIfUnstarted, system.executionContext());
    return ApiResponse.stream(new ApiStream("text/event-stream", SSE_HEADERS, source));
  }

  // --- the feed --------------------------------------------------------------------------------

  private void tick() {
    if (closed) {
      return;
    }
    long n = ticks.incrementAndGet();
    if (subscribers.isEmpty() && n % IDLE_TICKS != 0) {
      return;
    }
    if (!polling.compareAndSet(false, true)) {
      return; // the last poll has not answered yet: never pile asks up on the coordinator
    }
    runs.active()
        .thenCompose(active -> withFinals(active))
        .whenComplete(
            (all, failure) -> {
              try {
                if (failure == null) {
                  publish(all, System.currentTimeMillis());
                } else {
                  log.debug("run feed: the coordinator did not answer: {}", failure.toString());
                }
              } catch (RuntimeException e) {
                log.warn("run feed: could not publish", e);
              } finally {
                polling.set(false);
              }
            });
  }

  /**
   * The runs that have not ended, and the final view of each run that was among them a second ago
   * or that a stream follows, and is not any more (it ended, and the coordinator filed it): every
   * stream sees how it ended.
   */
  private CompletionStage<List<RunView>> withFinals(List<RunView> active) {
    Set<String> gone = new java.util.HashSet<>(lastActive);
    // a run followed by a stream that ended between two polls was never seen among them
    subscribers.forEach(
        subscriber -> {
          if (subscriber.runId != null) {
            gone.add(subscriber.runId);
          }
        });
    active.forEach(run -> gone.remove(run.runId()));
    lastActive = active.stream().map(RunView::runId).collect(java.util.stream.Collectors.toSet());
    List<java.util.concurrent.CompletableFuture<java.util.Optional<RunView>>> finals =
        gone.stream().map(id -> runs.get(id).toCompletableFuture()).toList();
    return java.util.concurrent.CompletableFuture.allOf(
            finals.toArray(java.util.concurrent.CompletableFuture[]::new))
        .handle(
            (done, failure) -> {
              List<RunView> all = new java.util.ArrayList<>(active);
              for (var f : finals) {
                if (!f.isCompletedExceptionally()) {
                  f.join().ifPresent(all::add);
                }
              }
              return all;
            });
  }

  /**
   * One second's update: record the samples, then tell every subscriber what changed: the list's
   * subscribers each run whose view changed, a run's subscribers its progress (every second while
   * it runs: the second's sample).
   */
  synchronized void publish(List<RunView> all, long now) {
    Map<String, RunView> byId = new HashMap<>();
    Map<String, RunHistory.Sample> samples = new HashMap<>();
    for (RunView run : all) {
      byId.put(run.runId(), run);
      history.record(run, now).ifPresent(sample -> samples.put(run.runId(), sample));
    }
    history.forgetEnded();
    Map<String, String> data = new HashMap<>();
    for (Subscriber subscriber : subscribers) {
      if (subscriber.runId == null) {
        boolean sent = false;
        for (RunView run : all) {
          String runData = data.computeIfAbsent(run.runId(), id -> runData(run));
          if (!runData.equals(subscriber.sentRuns.put(run.runId(), runData))) {
            subscriber.offer(event("run", runData), now);
            sent = true;
          }
        }
        if (!sent) {
          subscriber.heartbeat(now);
        }
        continue;
      }
      RunView run = byId.get(subscriber.runId);
      if (run == null) {
        subscriber.heartbeat(now);
        continue;
      }
      String runData = data.computeIfAbsent(run.runId(), id -> runData(run));
      RunHistory.Sample sample = samples.get(run.runId());
      subscriber.send(
          runData,
          () -> {
            Map<String, Object> progress = new LinkedHashMap<>();
            progress.put("run", view.apply(run));
            progress.put("sample", sample);
            return event("progress", json(progress));
          },
          now,
          run.state().ended(),
          // a running run's chart moves on every second even when its figures stand still (its
          // items wait on a slow provider): the second's sample goes out to whoever watches
          sample != null && !run.state().ended());
    }
  }

  private String runData(RunView run) {
    return json(Map.of("run", view.apply(run)));
  }

  /** Ends every stream with a {@code closing} event; the node is going away. */
  @Override
  public void close() {
    closed = true;
    if (ticker != null) {
      ticker.cancel();
    }
    for (Subscriber subscriber : subscribers) {
      if (subscriber.queue != null) {
        subscriber.queue.offer(closingEvent());
        subscriber.queue.complete();
      }
    }
    subscribers.clear();
  }

  private static ByteString closingEvent() {
    return event(
        "closing",
        "{\"reason\":\"the node is shutting down: reconnect to it or to another node\"}");
  }

  static ByteString event(String name, String data) {
    // data is compact JSON: one line, so one data: field
    return ByteString.fromString(
        "event: " + name + "\ndata: " + data + "\n\n", StandardCharsets.UTF_8);
  }

  private String json(Object body) {
    try {
      return mapper.writeValueAsString(body);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("could not write an event", e);
    }
  }

  /** One open stream: the list of runs ({@code runId} null) or one run. */
  private final class Subscriber {
    final String runId;
    // the list's streams: what each run looked like when last sent
    final Map<String, String> sentRuns = new HashMap<>();
    volatile BoundedSourceQueue<ByteString> queue;
    String lastData;
    long lastSent;

    Subscriber(String runId) {
      this.runId = runId;
    }

    /**
     * Sends when {@code data} differs from what was last sent or {@code newSample} (a second's
     * sample of a running run), a heartbeat otherwise.
     */
    void send(
        String data,
        java.util.function.Supplier<ByteString> event,
        long now,
        boolean thenEnd,
        boolean newSample) {
      if (queue == null) {
        return;
      }
      if (!data.equals(lastData) || newSample) {
        lastData = data;
        offer(event.get(), now);
        if (thenEnd) {
          queue.complete();
          subscribers.remove(this);
        }
      } else {
        heartbeat(now);
      }
    }

    void heartbeat(long now) {
      if (queue != null && now - lastSent >= HEARTBEAT.toMillis()) {
        offer(ByteString.fromString(": keep-alive\n\n"), now);
      }
    }

    void offer(ByteString bytes, long now) {
      QueueOfferResult result = queue.offer(bytes);
      if (result.isEnqueued()) {
        lastSent = now;
      } else if (result != QueueOfferResult.dropped()) {
        subscribers.remove(this); // closed: the client went away
      }
    }
  }
}
