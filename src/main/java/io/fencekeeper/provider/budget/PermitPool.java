package io.fencekeeper.provider.budget;

import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * One node's permits of one provider (docs/design.md, "Provider budgets"): the block the keeper
 * granted this node, handed to the node's calls one at a time with no round trip. A call may start
 * while fewer than {@code permits} are in flight, fewer than {@code rate} calls hold a rate slot,
 * no Retry-After pauses the node (a throttled answer pauses every caller of the node only when the
 * share of the node's calls throttled over the last seconds says the provider limits it, {@link
 * ThrottleShare}), and the grant's lease leaves room for the call to end: the node stops starting
 * calls {@code callTimeout} before its lease runs out, so every call it made has ended when the
 * keeper hands the permits to someone else.
 *
 * <p>A call holds its rate slot from its start until {@link #RATE_WINDOW} after its end. Whenever
 * it reaches the provider, it is between its start and its end, so any one-second window at the
 * provider sees at most {@code rate} of this node's calls however late each one arrives.
 *
 * <p>Thread-safe and cheap: a lock held for a few field updates, waiters in a queue completed
 * outside it. The {@link PermitLeaser} renews the grant and brings the keeper's changes.
 */
public final class PermitPool implements Permits {

  /** How long after its end a call still counts against the rate: the provider's second. */
  static final Duration RATE_WINDOW = Duration.ofSeconds(1);

  /** A Retry-After pauses this node's callers for at most this long. */
  static final Duration MAX_PAUSE = Duration.ofSeconds(10);

  /** Runs {@code task} after {@code delay}; the answer cancels it. */
  public interface Timer {
    Runnable schedule(Duration delay, Runnable task);
  }

  /**
   * What this node holds and wants, for the keeper ({@link BudgetKeeper.Renew}); it covers every
   * grant up to {@code version} of keeper incarnation {@code epoch}.
   */
  record Report(
      long epoch,
      long version,
      int holding,
      int rateHolding,
      int inFlight,
      int demand,
      long calls,
      int throttled,
      long retryAfterMillis) {}

  private final String provider;
  private final long callTimeout;
  private final long window = RATE_WINDOW.toNanos();
  private final LongSupplier nanos;
  private final Timer timer;
  private volatile Runnable reportWanted = () -> {};

  // guarded by this
  private boolean limited;
  private boolean closed;
  private long epoch;
  private long version = -1;
  private int permits;
  private int rate = -1;
  private boolean leased;
  private long usableUntil;
  private int inFlight;
  // of which low priority ({@link #tryAcquire}): together they count as one in the node's demand
  private int spareInFlight;

  /** When the calls that ended within the last window ended, oldest first. */
  private final ArrayDeque<Long> ends = new ArrayDeque<>();

  private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
  private long pausedUntil;
  private boolean paused;
  private int demandPeak;
  private long calls;
  private int throttled;
  // this node's calls over the last seconds: their throttled share pauses its callers
  private final ThrottleShare.Window recent = new ThrottleShare.Window();
  private long retryAfterMillis;
  private boolean reportRequested;
  private boolean draining;
  private Runnable cancelWakeup;
  private long wakeupAt;

  private static final class Waiter {
    final CompletableFuture<Optional<Permit>> answer = new CompletableFuture<>();
    Runnable cancelTimeout = () -> {};
  }

  /**
   * {@code configured}: the budget this node's configuration gives the provider, in force until the
   * keeper answers (without a budget calls go at once; with one they wait for a grant). {@code
   * callTimeout}: how long one call can last (the provider's request timeout).
   */
  public PermitPool(
      String provider,
      ProviderBudget configured,
      Duration callTimeout,
      LongSupplier nanos,
      Timer timer) {
    this.provider = provider;
    this.limited = configured.limited();
    this.callTimeout = callTimeout.toNanos();
    this.nanos = nanos;
    this.timer = timer;
  }

  public String provider() {
    return provider;
  }

  /** The leaser's hook: the keeper should hear from this pool soon. */
  void onReportWanted(Runnable reportWanted) {
    this.reportWanted = reportWanted;
  }

  @Override
  public CompletionStage<Optional<Permit>> acquire(Duration maxWait) {
    Waiter waiter = new Waiter();
    boolean askKeeper = false;
    synchronized (this) {
      if (closed && limited) {
        return CompletableFuture.failedFuture(stopping());
      }
      long now = nanos.getAsLong();
      if (waiters.isEmpty() && canStart(now)) {
        start(now);
        noteDemand();
        return CompletableFuture.completedFuture(Optional.of(new Held()));
      }
      waiters.addLast(waiter);
      noteDemand();
      if (limited && !reportRequested && inFlight + waiters.size() > permitsNow(now)) {
        // more work than permits: the keeper may have some to spare
        reportRequested = true;
        askKeeper = true;
      }
      waiter.cancelTimeout = timer.schedule(maxWait, () -> timedOut(waiter));
      scheduleWakeup(now);
    }
    if (askKeeper) {
      reportWanted.run();
    }
    return waiter.answer;
  }

  /**
   * A permit now for a call of low priority (a verification's lookup), or empty: only when a call
   * may start and no other caller waits for one, so it never goes ahead of a caller that waits; the
   * caller asks again later. Calls of low priority count as one call in the demand this node
   * reports, however many there are, so the keeper grants them what the others leave and a node
   * whose only calls are of low priority still gets permits (docs/design.md, "Verifying a run").
   */
  public Optional<Permit> tryAcquire() {
    boolean askKeeper = false;
    synchronized (this) {
      if (closed && limited) {
        throw stopping();
      }
      long now = nanos.getAsLong();
      if (waiters.isEmpty() && canStart(now)) {
        start(now);
        spareInFlight++;
        noteDemand();
        return Optional.of(new Held(true));
      }
      demandPeak = Math.max(demandPeak, demand() + (spareInFlight == 0 ? 1 : 0));
      if (limited && !reportRequested && permitsNow(now) == 0) {
        // nothing granted yet: the keeper should hear of this node's wish
        reportRequested = true;
        askKeeper = true;
      }
    }
    if (askKeeper) {
      reportWanted.run();
    }
    return Optional.empty();
  }

  /** The rate this node may use now (calls a second); -1 without a budget or a rate limit. */
  public synchronized int rate() {
    return limited && rate >= 0 ? rateNow(nanos.getAsLong()) : -1;
  }

  /** The permit of one call. */
  private final class Held implements Permit {
    private final AtomicBoolean released = new AtomicBoolean();
    private final boolean spare;

    Held() {
      this(false);
    }

    Held(boolean spare) {
      this.spare = spare;
    }

    @Override
    public void release(ProviderError error) {
      if (released.compareAndSet(false, true)) {
        released(error, spare);
      }
    }
  }

  private void released(ProviderError error) {
    released(error, false);
  }

  private void released(ProviderError error, boolean spare) {
    List<Waiter> ready;
    boolean askKeeper = false;
    synchronized (this) {
      long now = nanos.getAsLong();
      inFlight--;
      if (spare) {
        spareInFlight--;
      }
      calls++;
      ProviderError.Throttled t = error instanceof ProviderError.Throttled th ? th : null;
      if (limited) {
        ends.addLast(now);
        recent.add(now, ThrottleShare.Calls.one(t == null ? null : t.retryAfter()));
      }
      if (t != null) {
        throttled++;
        retryAfterMillis = Math.max(retryAfterMillis, t.retryAfter().toMillis());
        ThrottleShare.Reading reading = limited ? recent.sum(now).reading() : null;
        if (reading == ThrottleShare.Reading.LIMITING) {
          // the provider limits this node's calls: every caller here waits its Retry-After, and
          // the keeper slows the rest; a 429 of the provider's noise is only waited out by its call
          long pause = Math.min(t.retryAfter().toNanos(), MAX_PAUSE.toNanos());
          if (!paused || now + pause - pausedUntil > 0) {
            pausedUntil = now + pause;
            paused = true;
          }
        }
        if (!limited || reading != ThrottleShare.Reading.CLEAR) {
          askKeeper = !reportRequested;
          reportRequested = true;
        }
      }
      ready = drain(now);
      askKeeper |= drained(now);
      scheduleWakeup(now);
    }
    complete(ready);
    if (askKeeper) {
      reportWanted.run();
    }
  }

  /**
   * Whether a grant that shrank has just drained (calls in flight and rate slots within it): the
   * keeper may then give the difference to others, so it should hear at once.
   */
  private boolean drained(long now) {
    if (!draining
        || holdingNow(now) > permitsNow(now)
        || (rate >= 0 && rateSlotsHeld(now) > rateNow(now))) {
      return false;
    }
    draining = false;
    boolean ask = !reportRequested;
    reportRequested = true;
    return ask;
  }

  /** A rate slot drains with time: look again once the window has passed. */
  private void checkDrained() {
    boolean askKeeper;
    synchronized (this) {
      askKeeper = drained(nanos.getAsLong());
    }
    if (askKeeper) {
      reportWanted.run();
    }
  }

  /**
   * The node is stopping: no call of a provider with a budget starts any more (the calls in flight
   * end as they do). A keeper that starts counts on a removed member having stopped its pool.
   */
  public void close() {
    List<Waiter> stopped;
    synchronized (this) {
      closed = true;
      if (!limited) {
        return; // without a budget, calls go as they did before budgets
      }
      stopped = new ArrayList<>(waiters);
      waiters.clear();
      stopped.forEach(waiter -> waiter.cancelTimeout.run());
      cancelWakeupLocked();
    }
    stopped.forEach(waiter -> waiter.answer.completeExceptionally(stopping()));
  }

  private ProviderException stopping() {
    return new ProviderException(
        new ProviderError.Transient(
            "no call made: this node is stopping and gave up its permits of " + provider));
  }

  private void timedOut(Waiter waiter) {
    boolean removed;
    synchronized (this) {
      removed = waiters.remove(waiter);
    }
    if (removed) {
      waiter.answer.complete(Optional.empty());
    }
  }

  private void wakeUp() {
    List<Waiter> ready;
    synchronized (this) {
      long now = nanos.getAsLong();
      cancelWakeup = null;
      ready = drain(now);
      scheduleWakeup(now);
    }
    complete(ready);
  }

  // --- the keeper's side -------------------------------------------------------------------------

  /**
   * A grant from the keeper. {@code sentAt} is when this node sent the renewal it answers (its
   * lease counts from then), or -1 for a pushed change, which never extends the lease. {@code
   * mayGrow} false: the keeper that sent it may not know this node's latest report, so it may only
   * shrink what this node uses (see {@link LeaseRenewals}).
   */
  void apply(BudgetKeeper.Grant grant, long sentAt, boolean mayGrow) {
    List<Waiter> ready;
    boolean askKeeper = false;
    synchronized (this) {
      long now = nanos.getAsLong();
      if (mayGrow) {
        limited = grant.limited();
        permits = grant.permits();
        rate = grant.rate();
        epoch = grant.epoch();
        version = grant.version();
      } else if (grant.limited()) {
        permits = limited ? Math.min(permits, grant.permits()) : grant.permits();
        rate = limited ? lowerRate(rate, grant.rate()) : grant.rate();
        limited = true;
        if (grant.epoch() == epoch) {
          version = Math.max(version, grant.version());
        }
      }
      if (!limited) {
        ends.clear();
      } else if (sentAt >= 0) {
        long until = sentAt + grant.lease().toNanos() - callTimeout;
        if (!leased || until - usableUntil > 0) {
          usableUntil = until;
          leased = true;
        }
      }
      if (limited
          && (holdingNow(now) > permitsNow(now)
              || (rate >= 0 && rateSlotsHeld(now) > rateNow(now)))) {
        draining = true;
        timer.schedule(RATE_WINDOW, this::checkDrained);
      }
      ready = drain(now);
      if (limited && !reportRequested && !waiters.isEmpty()) {
        // still more work than permits: ask again (the leaser spaces the asks)
        reportRequested = true;
        askKeeper = true;
      }
      scheduleWakeup(now);
    }
    complete(ready);
    if (askKeeper) {
      reportWanted.run();
    }
  }

  /** The lower of two rates, -1 being no limit. */
  private static int lowerRate(int a, int b) {
    if (a < 0) {
      return b;
    }
    return b < 0 ? a : Math.min(a, b);
  }

  /** What the keeper should know; resets the figures that count since the last report. */
  synchronized Report report() {
    long now = nanos.getAsLong();
    Report report =
        new Report(
            epoch,
            version,
            holdingNow(now),
            Math.max(rateNow(now), rateSlotsHeld(now)),
            inFlight,
            Math.max(demandPeak, demand()),
            calls,
            throttled,
            retryAfterMillis);
    demandPeak = demand();
    calls = 0;
    throttled = 0;
    retryAfterMillis = 0;
    reportRequested = false;
    return report;
  }

  /** Calls of this provider in flight on this node now. */
  public synchronized int inFlight() {
    return inFlight;
  }

  /** What this node may be using now: its grant while the lease lasts, or more calls in flight. */
  synchronized int mayUse() {
    return holdingNow(nanos.getAsLong());
  }

  /** Rate slots this node may hold now: its grant, or more while a shrunk grant drains. */
  synchronized int mayUseRate() {
    long now = nanos.getAsLong();
    return Math.max(rateNow(now), rateSlotsHeld(now));
  }

  /** Permits this node may use now (its grant while the lease lasts); -1 without a budget. */
  public synchronized int permits() {
    return limited ? permitsNow(nanos.getAsLong()) : -1;
  }

  // --- the rules ---------------------------------------------------------------------------------

  private boolean canStart(long now) {
    if (!limited) {
      return true; // without a budget, calls go as they did before budgets
    }
    if (paused && now - pausedUntil < 0) {
      return false;
    }
    if (inFlight >= permitsNow(now)) {
      return false;
    }
    if (rate >= 0) {
      return rateSlotsHeld(now) < rate;
    }
    return true;
  }

  /** The grant counts only while a call started now would end before the lease runs out. */
  private int permitsNow(long now) {
    return !closed && leased && now - usableUntil < 0 ? permits : 0;
  }

  private int rateNow(long now) {
    return !closed && leased && now - usableUntil < 0 ? Math.max(rate, 0) : 0;
  }

  /** What this node may be using: its grant, or more while a shrunk grant drains. */
  private int holdingNow(long now) {
    return limited ? Math.max(permitsNow(now), inFlight) : inFlight;
  }

  private void start(long now) {
    inFlight++;
  }

  /** Calls in flight, and calls that ended within the last window. */
  private int rateSlotsHeld(long now) {
    evictEnds(now);
    return inFlight + ends.size();
  }

  private void noteDemand() {
    demandPeak = Math.max(demandPeak, demand());
  }

  /** Calls in flight or waiting, the calls of low priority counted as one. */
  private int demand() {
    return inFlight - spareInFlight + waiters.size() + (spareInFlight > 0 ? 1 : 0);
  }

  private void evictEnds(long now) {
    while (!ends.isEmpty() && now - ends.peekFirst() >= window) {
      ends.pollFirst();
    }
  }

  private List<Waiter> drain(long now) {
    List<Waiter> ready = new ArrayList<>();
    while (!waiters.isEmpty() && canStart(now)) {
      Waiter waiter = waiters.pollFirst();
      waiter.cancelTimeout.run();
      start(now);
      ready.add(waiter);
    }
    return ready;
  }

  /**
   * Waiters blocked by time (a pause, the rate window) are woken when it has passed; the others
   * wait for a release or a grant.
   */
  private void scheduleWakeup(long now) {
    long at;
    if (waiters.isEmpty()) {
      cancelWakeupLocked();
      return;
    }
    if (paused && now - pausedUntil < 0) {
      at = pausedUntil;
    } else if (limited && rate >= 0 && inFlight < permitsNow(now) && rateSlotsHeld(now) >= rate) {
      if (ends.isEmpty()) {
        return; // every slot is a call in flight (or rate 0): its end will tell
      }
      at = ends.peekFirst() + window;
    } else {
      return;
    }
    if (cancelWakeup != null && wakeupAt - at <= 0) {
      return; // an earlier wake-up is already due
    }
    cancelWakeupLocked();
    wakeupAt = at;
    cancelWakeup = timer.schedule(Duration.ofNanos(Math.max(0, at - now)), this::wakeUp);
  }

  private void cancelWakeupLocked() {
    if (cancelWakeup != null) {
      cancelWakeup.run();
      cancelWakeup = null;
    }
  }

  private void complete(List<Waiter> ready) {
    for (Waiter waiter : ready) {
      if (!waiter.answer.complete(Optional.of(new Held()))) {
        // timed out in the same instant: the permit it took goes back
        released(null);
      }
    }
  }
}
