package io.fencekeeper.sdk.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * An external worker of one Fencekeeper run (docs/external-workers.md): {@code concurrency} slots,
 * each of which claims the run's next item, hands it to the team's {@link ItemHandler} under its
 * lease, and reports the outcome, until the run ends or the worker is closed. The rules it keeps:
 *
 * <ul>
 *   <li>Every claim has a request id; after a transport failure or a 503 the same claim is sent
 *       again with the same id (the node answers it with the same lease), for at most a lease.
 *   <li>The lease is renewed at a third of its length; a renewal refused (409) loses it, and the
 *       client then sends nothing more for the item, and the handler's {@link Lease} says so. A
 *       lease that ran out by this process's clock (a pause) gets one word, {@code ambiguous}: the
 *       only command a lapsed lease takes, which tells the node its holder was alive.
 *   <li>An item whose effect is AMBIGUOUS is looked up ({@link ItemHandler#lookup}) before any new
 *       apply; a recorded effect is completed without calling the handler.
 *   <li>No apply starts with less than a tenth of the lease left (at most 2 s): the item is given
 *       back instead.
 *   <li>The outcome is recorded and the item completed in one call; an apply that threw is marked
 *       ambiguous and given back.
 *   <li>204 (drained): poll every {@code drainedPoll} (a quarantined item an operator retries opens
 *       work again), or stop if {@code stopWhenDrained}; 429 and 503 run_staging: wait their
 *       Retry-After; 409 run_ended / run_cancelled, 410, 404: stop; other refusals (401, 403, 400,
 *       415, 422) stop the worker with the reason, as its configuration is wrong.
 *   <li>{@link #close(Duration)} (a SIGTERM's shutdown hook): no new claim; running handlers finish
 *       and report, their leases renewed meanwhile; past the grace they are interrupted, which
 *       marks their items ambiguous and gives them back. A claim answered after the close is
 *       released unused.
 * </ul>
 *
 * <p>The worker id is {@code name} plus a random suffix, new for every instance: a restarted
 * process is another worker, as the node's count of lost holders needs (a worker id must not speak
 * for a dead process).
 */
public final class FencekeeperWorker implements AutoCloseable {

  /** How a slot's claim loop ended: still running (empty), drained, the run ended, an error. */
  private final AtomicReference<String> stopped = new AtomicReference<>();

  private final Settings settings;
  private final LeaseApi api;
  private final String workerId;
  private final ScheduledExecutorService renewals;
  private final List<Slot> slots = new ArrayList<>();
  private volatile boolean closing;

  private FencekeeperWorker(Settings settings) {
    this.settings = settings;
    this.api = new LeaseApi(settings.node, settings.token, settings.requestTimeout);
    byte[] suffix = new byte[4];
    new SecureRandom().nextBytes(suffix);
    this.workerId = settings.name + "-" + HexFormat.of().formatHex(suffix);
    ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, daemon("renewals"));
    timer.setRemoveOnCancelPolicy(true);
    this.renewals = timer;
  }

  public static Builder builder(URI node, String runId, ItemHandler handler) {
    return new Builder(node, runId, handler);
  }

  /** This worker's id, as the node journals it. */
  public String workerId() {
    return workerId;
  }

  /** Starts the slots; returns at once. */
  public FencekeeperWorker start() {
    for (int i = 0; i < settings.concurrency; i++) {
      Slot slot = new Slot(i);
      slots.add(slot);
      slot.thread.start();
    }
    return this;
  }

  /** Why the worker stopped claiming (drained, the run ended, a refusal), once it has. */
  public Optional<String> stoppedBecause() {
    return Optional.ofNullable(stopped.get());
  }

  /** Waits until every slot has ended (the run ended, or the worker was closed). */
  public boolean awaitStopped(Duration timeout) throws InterruptedException {
    long until = System.nanoTime() + timeout.toNanos();
    for (Slot slot : slots) {
      long left = until - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      slot.thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
      if (slot.thread.isAlive()) {
        return false;
      }
    }
    renewals.shutdownNow();
    return true;
  }

  /** {@link #close(Duration)} with a lease's grace. */
  @Override
  public void close() {
    close(settings.lease);
  }

  /**
   * Stops claiming at once; lets running handlers finish and report for up to {@code grace}, then
   * interrupts them (their items are marked ambiguous and given back while their leases hold).
   * Returns whether every slot ended in time.
   */
  public boolean close(Duration grace) {
    closing = true;
    stopped.compareAndSet(null, "closed");
    for (Slot slot : slots) {
      if (!slot.inHandler) {
        slot.thread.interrupt(); // a slot waiting or backing off stops at once
      }
    }
    try {
      if (awaitStopped(grace)) {
        return true;
      }
      slots.forEach(slot -> slot.thread.interrupt());
      return awaitStopped(Duration.ofSeconds(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      renewals.shutdownNow();
    }
  }

  private void stop(String reason) {
    stopped.compareAndSet(null, reason);
    settings.events.accept("stopped: " + reason);
    closing = true;
    slots.forEach(
        slot -> {
          if (!slot.inHandler && slot.thread != Thread.currentThread()) {
            slot.thread.interrupt();
          }
        });
  }

  /** One claim at a time: claim, work, report, again. */
  private final class Slot implements Runnable {
    final Thread thread;
    volatile boolean inHandler;

    Slot(int n) {
      thread = daemon("slot-" + n).newThread(this);
    }

    @Override
    public void run() {
      while (!closing) {
        try {
          Optional<Claimed> claimed = claimNext();
          if (claimed.isPresent()) {
            work(claimed.get());
          }
        } catch (InterruptedException e) {
          if (!closing) {
            Thread.currentThread().interrupt();
            return;
          }
        } catch (RuntimeException e) {
          settings.events.accept("slot failed: " + e);
          pause(Duration.ofSeconds(1));
        }
      }
    }

    private void pause(Duration wait) {
      try {
        Thread.sleep(Math.max(1, wait.toMillis()));
      } catch (InterruptedException e) {
        // closing: the loop sees it
      }
    }

    /**
     * One claim-next, sent again with the same request id after a transport failure or a 503 (the
     * node may have granted it: the same id gets that lease), for at most a lease. Empty when there
     * is nothing to work on now (after waiting as the node asked) or the worker stops.
     */
    private Optional<Claimed> claimNext() throws InterruptedException {
      String requestId = UUID.randomUUID().toString();
      ObjectNode body =
          LeaseApi.body()
              .put("workerId", workerId)
              .put("leaseMillis", settings.lease.toMillis())
              .put("requestId", requestId);
      long giveUpAt = System.nanoTime() + settings.lease.toNanos();
      Duration backoff = Duration.ofMillis(100);
      while (true) {
        LeaseApi.Answer answer;
        try {
          answer = api.claimNext(settings.runId, body);
        } catch (IOException e) {
          answer = null; // the answer was lost: the same request again
        }
        if (answer != null && answer.status() == 200) {
          Claimed claimed = Claimed.of(answer.body(), System.nanoTime());
          if (closing) {
            release(claimed, "the worker is closing");
            return Optional.empty();
          }
          return Optional.of(claimed);
        }
        boolean unknown =
            answer == null
                || (answer.status() == 503 && !answer.error().equals("run_staging"))
                || answer.status() == 502
                || answer.status() == 504;
        if (unknown) {
          if (System.nanoTime() - giveUpAt > 0) {
            return Optional.empty(); // any lease it was granted has lapsed: a new request
          }
          Thread.sleep(backoff.toMillis());
          backoff = backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : backoff.multipliedBy(2);
          continue;
        }
        if (closing) {
          return Optional.empty();
        }
        switch (answer.status()) {
          case 204 -> {
            if (settings.stopWhenDrained) {
              stop("drained");
            } else {
              Thread.sleep(settings.drainedPoll.toMillis());
            }
          }
          case 429, 503 ->
              Thread.sleep(
                  Optional.ofNullable(answer.retryAfter()).orElse(Duration.ofSeconds(1)).toMillis());
          case 409, 410, 404 -> stop(answer.error().isEmpty() ? "HTTP " + answer.status() : answer.error());
          default -> stop("refused: HTTP " + answer.status() + " " + answer.error() + " " + answer.body().path("message").asText(""));
        }
        return Optional.empty();
      }
    }

    private void work(Claimed claimed) throws InterruptedException {
      Lease lease = claimed.lease();
      long period = Math.max(1, settings.lease.toMillis() / 3);
      ScheduledFuture<?> renewing =
          renewals.scheduleAtFixedRate(
              () -> renew(claimed), period, period, TimeUnit.MILLISECONDS);
      try {
        inHandler = true;
        switch (claimed.firstStep()) {
          case "COMPLETE" -> report(claimed, null); // recorded already: never sent again
          case "LOOKUP" -> {
            // the earlier holder's cleanup may still commit until its deadline: a lookup before
            // then could answer "not found" for an effect that lands after it (renewals go on)
            long wait = claimed.lookupDueNanos() - System.nanoTime();
            if (wait > 0) {
              TimeUnit.NANOSECONDS.sleep(wait);
            }
            Optional<Outcome> found;
            try {
              found = settings.handler.lookup(claimed.item(), lease);
            } catch (Exception e) {
              // the lookup itself failed: nothing was written, the next holder looks again
              report(claimed, new Outcome.Failed("lookup failed: " + e, true, null));
              return;
            }
            if (found.isPresent()) {
              report(claimed, found.get());
            } else {
              applyAndReport(claimed);
            }
          }
          default -> applyAndReport(claimed);
        }
      } finally {
        inHandler = false;
        renewing.cancel(false);
      }
    }

    private void applyAndReport(Claimed claimed) throws InterruptedException {
      Lease lease = claimed.lease();
      if (lease.remaining().compareTo(safetyMargin()) <= 0) {
        release(claimed, "too little of the lease left to apply");
        return;
      }
      Outcome outcome;
      try {
        outcome = settings.handler.apply(claimed.item(), lease);
      } catch (LeaseLostException e) {
        outcome = new Outcome.Ambiguous("the handler stopped: " + e.getMessage());
      } catch (Exception e) {
        // not known whether the write reached the target
        outcome = new Outcome.Ambiguous("the handler failed: " + e);
      }
      report(claimed, Objects.requireNonNull(outcome, "a handler must return an outcome"));
    }
  }

  private static final Duration MAX_BACKOFF = Duration.ofSeconds(2);

  /** A tenth of the lease, at most 2 s: no apply starts with less left. */
  private Duration safetyMargin() {
    Duration tenth = settings.lease.dividedBy(10);
    return tenth.compareTo(Duration.ofSeconds(2)) > 0 ? Duration.ofSeconds(2) : tenth;
  }

  /**
   * The outcome to the node: recorded and completed in one call, or a failure, an ambiguity, a
   * release. Nothing is sent once the lease is lost (the next holder reconciles by the key). A
   * transport failure or a 503 is sent again while the lease holds: a repeat is answered the same.
   */
  private void report(Claimed claimed, Outcome outcome) throws InterruptedException {
    Lease lease = claimed.lease();
    ObjectNode token = LeaseApi.body().put("workerId", workerId).put("token", lease.fencingToken());
    if (lease.isLost()) {
      if (!lease.refused()) {
        // it ran out by this process's clock (a pause, a cut): nothing is recorded, but the one
        // word a lapsed lease still takes is said, so the node knows its holder is alive and the
        // next holder looks the key up (it would anyway)
        settings.events.accept("lease lapsed, said ambiguous: " + claimed.item().itemId());
        send(
            claimed,
            "ambiguous",
            token.deepCopy().put("reason", "the lease lapsed before the outcome was reported"));
      } else {
        settings.events.accept("lease lost, nothing sent: " + claimed.item().itemId());
      }
      return;
    }
    if (outcome == null) {
      send(claimed, "complete", token);
    } else if (outcome instanceof Outcome.Applied a) {
      send(claimed, "complete", withOutcome(token, "APPLIED", a.reference(), a.detail()));
    } else if (outcome instanceof Outcome.Found f) {
      send(claimed, "complete", withOutcome(token, "FOUND_BY_LOOKUP", f.reference(), f.detail()));
    } else if (outcome instanceof Outcome.NothingToDo n) {
      send(claimed, "complete", withOutcome(token, "NOTHING_TO_DO", null, n.detail()));
    } else if (outcome instanceof Outcome.Failed f) {
      ObjectNode body = token.deepCopy().put("error", f.error()).put("retryable", f.retryable());
      if (f.retryAfter() != null) {
        body.put("retryAfterMillis", f.retryAfter().toMillis());
      }
      send(claimed, "fail", body);
    } else if (outcome instanceof Outcome.Ambiguous a) {
      // ambiguous first (the one word a lapsed lease still takes), then the item back at once
      if (send(claimed, "ambiguous", token.deepCopy().put("reason", a.reason()))) {
        send(claimed, "release", token);
      }
    } else {
      send(claimed, "release", token);
    }
  }

  private static ObjectNode withOutcome(ObjectNode token, String kind, String ref, String detail) {
    ObjectNode body = token.deepCopy();
    ObjectNode outcome = body.putObject("outcome").put("kind", kind);
    if (ref != null) {
      outcome.put("providerReference", ref);
    }
    if (detail != null) {
      outcome.put("detail", detail);
    }
    return body;
  }

  /** One holder's command, sent again after a transport failure while the lease holds. */
  private boolean send(Claimed claimed, String command, ObjectNode body)
      throws InterruptedException {
    Lease lease = claimed.lease();
    Duration backoff = Duration.ofMillis(100);
    while (true) {
      try {
        LeaseApi.Answer answer = api.item(claimed.item().itemId(), command, body);
        if (answer.status() == 200) {
          if (!command.equals("ambiguous")) {
            lease.end(); // the attempt is over: no renewal after it
          }
          return true;
        }
        if (answer.status() == 409
            && answer.error().equals("lease_lost")
            && answer.body().path("endedByThisLease").asBoolean(false)
            && !command.equals("renew")) {
          // this lease ended the attempt already (a repeat after a lost answer): done, not lost
          lease.end();
          settings.events.accept(
              command
                  + ": already ended by this lease ("
                  + answer.body().path("status").asText()
                  + "): "
                  + claimed.item().itemId());
          return true;
        }
        if (answer.status() == 409 && answer.error().equals("lease_lost")) {
          lease.lose();
          settings.events.accept(command + ": lease lost: " + claimed.item().itemId());
          return false;
        }
        if (answer.status() < 500) {
          settings.events.accept(
              command + " refused: " + answer.status() + " " + answer.body().path("message"));
          return false;
        }
      } catch (IOException e) {
        // the answer was lost: the same command again (a repeat is answered the same)
      }
      if (lease.isLost() && !command.equals("ambiguous")) {
        return false;
      }
      Thread.sleep(backoff.toMillis());
      backoff = backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : backoff.multipliedBy(2);
      if (command.equals("ambiguous") && lease.remaining().isZero() && backoff.equals(MAX_BACKOFF)) {
        return false; // a lapsed lease: the next holder looks the key up anyway
      }
    }
  }

  /** A renewal at a third of the lease: a refusal loses the lease; a failure waits for the next. */
  private void renew(Claimed claimed) {
    Lease lease = claimed.lease();
    if (lease.refused() || lease.ended()) {
      return;
    }
    // an overdue renewal (a pause) is still sent: refused, it tells the node this holder is alive
    long sent = System.nanoTime();
    try {
      LeaseApi.Answer answer =
          api.item(
              claimed.item().itemId(),
              "renew",
              LeaseApi.body()
                  .put("workerId", workerId)
                  .put("token", lease.fencingToken())
                  .put("leaseMillis", settings.lease.toMillis()));
      if (answer.status() == 200) {
        lease.renewed(sent, settings.lease.toMillis());
      } else if (answer.status() == 409) {
        lease.lose();
        settings.events.accept("renewal refused, lease lost: " + claimed.item().itemId());
      }
    } catch (IOException e) {
      // the next renewal tries again; the lease runs out by its own clock if none gets through
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void release(Claimed claimed, String why) throws InterruptedException {
    settings.events.accept("releasing " + claimed.item().itemId() + ": " + why);
    send(
        claimed,
        "release",
        LeaseApi.body().put("workerId", workerId).put("token", claimed.lease().fencingToken()));
  }

  /**
   * Added to the node's lookupAfter before a lookup, for the clocks of the node and the target
   * (docs/external-workers.md, "Time: the lease, the deadline and lookupAfter"): the node's own
   * workers' default clock-skew allowance.
   */
  static final Duration CLOCK_SKEW_ALLOWANCE = Duration.ofSeconds(1);

  /**
   * A claim answer, read. {@code lookupDueNanos}: by this JVM's clock, when a LOOKUP may be sent:
   * the answer's arrival plus (lookupAfter - nodeTime) plus the allowance, so a target's 404 is
   * final (no cleanup sent under an earlier lease may still commit); the arrival when the answer has
   * no lookupAfter.
   */
  private record Claimed(Item item, Lease lease, String firstStep, long lookupDueNanos) {
    static Claimed of(JsonNode c, long receivedNanos) {
      Item item =
          new Item(
              c.path("itemId").asText(),
              c.path("runId").asText(),
              c.path("accountId").asText(),
              c.path("cursor").asText(),
              c.path("idempotencyKey").asText(),
              c.path("attempt").asInt(),
              c.path("takeover").asBoolean(),
              c.path("effect").asText());
      Lease lease =
          new Lease(
              item.itemId(),
              c.path("token").asLong(),
              item.idempotencyKey(),
              Duration.ofMillis(c.path("leaseMillis").asLong()),
              receivedNanos,
              c.path("leaseMillis").asLong());
      long lookupDue = receivedNanos;
      if (c.hasNonNull("lookupAfter") && c.hasNonNull("nodeTime")) {
        try {
          Duration ahead =
              Duration.between(
                  java.time.Instant.parse(c.path("nodeTime").asText()),
                  java.time.Instant.parse(c.path("lookupAfter").asText()));
          if (!ahead.isNegative()) {
            lookupDue = receivedNanos + ahead.plus(CLOCK_SKEW_ALLOWANCE).toNanos();
          }
        } catch (java.time.format.DateTimeParseException unreadable) {
          // an answer the node did not write; the whole lease is the safe wait
          lookupDue = receivedNanos + lease.length().toNanos();
        }
      }
      return new Claimed(item, lease, c.path("firstStep").asText("APPLY"), lookupDue);
    }
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return runnable -> {
      Thread thread = new Thread(runnable, "fencekeeper-worker-" + name);
      thread.setDaemon(true);
      return thread;
    };
  }

  private record Settings(
      URI node,
      String runId,
      ItemHandler handler,
      String token,
      String name,
      Duration lease,
      int concurrency,
      boolean stopWhenDrained,
      Duration drainedPoll,
      Duration requestTimeout,
      Consumer<String> events) {}

  /** How a worker is set up; every setting but the node, the run and the handler has a default. */
  public static final class Builder {
    private final URI node;
    private final String runId;
    private final ItemHandler handler;
    private String token = System.getenv("FENCEKEEPER_API_TOKEN");
    private String name = "worker";
    private Duration lease = Duration.ofSeconds(30);
    private int concurrency = 1;
    private boolean stopWhenDrained;
    private Duration drainedPoll = Duration.ofSeconds(5);
    private Duration requestTimeout = Duration.ofSeconds(10);
    private Consumer<String> events = event -> {};

    private Builder(URI node, String runId, ItemHandler handler) {
      this.node = Objects.requireNonNull(node, "node");
      this.runId = Objects.requireNonNull(runId, "runId");
      this.handler = Objects.requireNonNull(handler, "handler");
    }

    /** The API token (default: $FENCEKEEPER_API_TOKEN; none for a loopback node without one). */
    public Builder token(String token) {
      this.token = token;
      return this;
    }

    /** The worker's name; its id is the name and a random suffix (letters, digits, ._-). */
    public Builder name(String name) {
      if (!name.matches("[A-Za-z0-9._-]{1,60}")) {
        throw new IllegalArgumentException("name must be 1-60 letters, digits or ._-");
      }
      this.name = name;
      return this;
    }

    /** The lease asked for on every claim (default 30 s; at most the node's max-lease). */
    public Builder lease(Duration lease) {
      if (lease.toMillis() < 300) {
        throw new IllegalArgumentException("a lease under 300 ms leaves no time to renew it");
      }
      this.lease = lease;
      return this;
    }

    /** Items worked at once (default 1). */
    public Builder concurrency(int concurrency) {
      if (concurrency < 1 || concurrency > 256) {
        throw new IllegalArgumentException("concurrency must be 1-256");
      }
      this.concurrency = concurrency;
      return this;
    }

    /** On 204 (drained): stop (true), or poll every {@code drainedPoll} (false, the default). */
    public Builder stopWhenDrained(boolean stop) {
      this.stopWhenDrained = stop;
      return this;
    }

    public Builder drainedPoll(Duration poll) {
      this.drainedPoll = poll;
      return this;
    }

    /** How long one HTTP call may take before it counts as a transport failure (default 10 s). */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = timeout;
      return this;
    }

    /** Where the worker says what it does (lease lost, refusals, stopping); default nowhere. */
    public Builder events(Consumer<String> events) {
      this.events = events;
      return this;
    }

    public FencekeeperWorker build() {
      return new FencekeeperWorker(
          new Settings(
              node,
              runId,
              handler,
              token,
              name,
              lease,
              concurrency,
              stopWhenDrained,
              drainedPoll,
              requestTimeout,
              events));
    }
  }
}
