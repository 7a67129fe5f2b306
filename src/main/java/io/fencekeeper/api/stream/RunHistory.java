package io.fencekeeper.api.stream;

import io.fencekeeper.run.RunView;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * What the dashboard draws a run's "progress over time" from: one sample of each run's figures a
 * second while someone watches (every ten seconds while nobody does), kept by this node from the
 * moment it sees the run; the chart divides by the time between samples. Memory is bounded per run:
 * when a series reaches {@link #MAX_SAMPLES} every other sample is dropped and later ones are kept
 * at half the rate, so a run of any length costs at most that many samples. Ended runs keep their
 * series (the {@link #MAX_ENDED_RUNS} most recent ones), so a run that finished at 05:10 still
 * shows its night at 05:40.
 */
final class RunHistory {

  static final int MAX_SAMPLES = 3600;
  static final int MAX_SNAPSHOT = 600;
  static final int MAX_ENDED_RUNS = 50;

  /**
   * A run's figures at one moment; {@code throttled}, {@code stale} and {@code takeovers} are
   * totals since the run started (the dashboard draws their increase per second).
   */
  record Sample(
      long at,
      long done,
      long failed,
      long closed,
      long leased,
      long pending,
      Integer cap,
      long throttled,
      long stale,
      long takeovers,
      double rate) {

    static Sample of(RunView run, long atMillis) {
      return new Sample(
          atMillis,
          run.counts().done(),
          run.counts().failed(),
          run.counts().closed(),
          run.counts().leased(),
          run.counts().pending(),
          run.governor() == null ? null : run.governor().cap(),
          run.throttledAnswers(),
          run.staleRejections(),
          run.takeovers(),
          Math.round(run.itemsPerSecond() * 100) / 100.0);
    }
  }

  private static final class Series {
    final List<Sample> samples = new ArrayList<>();
    int stride = 1;
    long seen;
    boolean ended;
    java.time.Instant createdAt;
  }

  private final Map<String, Series> series = new HashMap<>();

  /**
   * Takes this second's figures of a run; the sample to push live, or empty when the run had
   * already ended when last seen (nothing new to draw).
   */
  synchronized Optional<Sample> record(RunView run, long atMillis) {
    Series s = series.computeIfAbsent(run.runId(), id -> new Series());
    s.createdAt = run.createdAt();
    boolean ended = run.state().ended();
    if (ended && s.ended) {
      return Optional.empty();
    }
    Sample sample = Sample.of(run, atMillis);
    // the last sample of a run is always kept: it is where the chart ends
    if (s.seen++ % s.stride == 0 || ended) {
      s.samples.add(sample);
      if (s.samples.size() >= MAX_SAMPLES) {
        halve(s.samples);
        s.stride *= 2;
      }
    }
    s.ended = ended;
    return Optional.of(sample);
  }

  private static void halve(List<Sample> samples) {
    List<Sample> kept = new ArrayList<>(samples.size() / 2 + 1);
    for (int i = 0; i < samples.size(); i += 2) {
      kept.add(samples.get(i));
    }
    samples.clear();
    samples.addAll(kept);
  }

  /**
   * Forgets all but the most recent ended runs (the feed sees only the runs that have not ended,
   * and each run once more when it ends).
   */
  synchronized void forgetEnded() {
    List<Map.Entry<String, Series>> ended =
        series.entrySet().stream()
            .filter(e -> e.getValue().ended)
            .sorted(
                Comparator.comparing(
                    (Map.Entry<String, Series> e) -> e.getValue().createdAt,
                    Comparator.nullsFirst(Comparator.naturalOrder())))
            .toList();
    for (int i = 0; i < ended.size() - MAX_ENDED_RUNS; i++) {
      series.remove(ended.get(i).getKey());
    }
  }

  /** How many samples are held for a run (bounded by {@link #MAX_SAMPLES}). */
  synchronized int size(String runId) {
    Series s = series.get(runId);
    return s == null ? 0 : s.samples.size();
  }

  /**
   * A run's series as columns ({@code {"at": [...], "done": [...], ...}}), at most {@link
   * #MAX_SNAPSHOT} points: the chart is a few hundred pixels wide, the first event stays small.
   */
  synchronized Map<String, Object> snapshot(String runId) {
    Series s = series.get(runId);
    List<Sample> all = s == null ? List.of() : s.samples;
    List<Sample> points = new ArrayList<>();
    int step = Math.max(1, (all.size() + MAX_SNAPSHOT - 1) / MAX_SNAPSHOT);
    for (int i = 0; i < all.size(); i += step) {
      points.add(all.get(i));
    }
    if (!all.isEmpty() && points.get(points.size() - 1) != all.get(all.size() - 1)) {
      points.add(all.get(all.size() - 1));
    }
    Map<String, Object> columns = new LinkedHashMap<>();
    column(columns, "at", points, Sample::at);
    column(columns, "done", points, Sample::done);
    column(columns, "failed", points, Sample::failed);
    column(columns, "closed", points, Sample::closed);
    column(columns, "leased", points, Sample::leased);
    column(columns, "pending", points, Sample::pending);
    column(columns, "cap", points, Sample::cap);
    column(columns, "throttled", points, Sample::throttled);
    column(columns, "stale", points, Sample::stale);
    column(columns, "takeovers", points, Sample::takeovers);
    column(columns, "rate", points, Sample::rate);
    return columns;
  }

  private static void column(
      Map<String, Object> columns, String name, List<Sample> points, Function<Sample, ?> field) {
    columns.put(name, points.stream().map(field).toList());
  }
}
