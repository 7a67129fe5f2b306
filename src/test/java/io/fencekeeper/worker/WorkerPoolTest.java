package io.fencekeeper.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.item.WorkItem.EffectStatus;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderName;
import io.fencekeeper.provider.budget.ThrottleShare;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ManualClock;
import io.fencekeeper.testing.ScriptedItems;
import io.fencekeeper.worker.WorkProtocol.PoolLeaving;
import io.fencekeeper.worker.WorkProtocol.RequestWork;
import io.fencekeeper.worker.WorkProtocol.Settled;
import io.fencekeeper.worker.WorkProtocol.ToDispatcher;
import io.fencekeeper.worker.WorkProtocol.WorkBatch;
import io.fencekeeper.worker.WorkProtocol.WorkOffer;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A node's worker pool between the dispatchers: it asks the ones on its node for its free capacity,
 * steals from the others only once every local one is dry (one at a time, and less often from one
 * that gave nothing), settles each attempt with the dispatcher that offered it, and drains when its
 * node leaves. The dispatchers are stubs registered with the receptionist (as real ones are), so
 * the pool finds them through its own subscription; which of them are on "this node" the test
 * decides.
 */
class WorkerPoolTest {

  static final String RUN = "payment-reconciliation/2026-11-29";
  static final Duration LEASE = Duration.ofSeconds(30);
  static final Duration WITHIN = Duration.ofSeconds(10);

  /** What a stub dispatcher heard, and when. */
  record Heard(
      String name, ActorRef<ToDispatcher> dispatcher, ToDispatcher message, long atNanos) {}

  /** How a stub answers a request by itself; MANUAL: the test answers. */
  enum Answer {
    MANUAL,
    DRY,
    NOTHING
  }

  ActorTestKit testKit;
  final ManualClock clock = ManualClock.at("2026-11-30T02:00:00Z");
  final ScriptedItems items = new ScriptedItems();
  final List<Heard> heard = new CopyOnWriteArrayList<>();
  final Set<ActorRef<?>> local = ConcurrentHashMap.newKeySet();
  // what the dispatchers on other nodes hear, as it comes
  TestProbe<Heard> remote;
  final Map<ItemId, CompletableFuture<WorkItem.Reply>> heldClaims = new ConcurrentHashMap<>();

  @BeforeEach
  void start() {
    // a system per test: the receptionist's listing is the pool's, and starts empty
    testKit = ActorTestKit.create();
    remote = testKit.createTestProbe();
    items.answer(
        ScriptedItems.CLAIM,
        item ->
            heldClaims.containsKey(item)
                ? heldClaims.get(item)
                : CompletableFuture.completedFuture(
                    new WorkItem.NotClaimable(
                        item.accountId().startsWith("closed")
                            ? WorkItem.Status.CLOSED
                            : WorkItem.Status.DONE,
                        null,
                        null)));
  }

  @AfterEach
  void stop() {
    heldClaims
        .values()
        .forEach(
            claim -> claim.complete(new WorkItem.NotClaimable(WorkItem.Status.DONE, null, null)));
    testKit.shutdownTestKit();
  }

  static ItemId item(String account) {
    return ItemId.of("payment-reconciliation", LocalDate.parse("2026-11-29"), account, "c-1");
  }

  /** The item's claim waits until the test answers it. */
  CompletableFuture<WorkItem.Reply> holdClaim(ItemId item) {
    return heldClaims.computeIfAbsent(item, i -> new CompletableFuture<>());
  }

  ActorRef<ToDispatcher> dispatcher(String name, boolean onThisNode, Answer answer) {
    ActorRef<ToDispatcher> ref =
        testKit.spawn(stub(name, answer, onThisNode ? null : remote.getRef()), name);
    if (onThisNode) {
      local.add(ref);
    }
    TestProbe<Receptionist.Registered> registered = testKit.createTestProbe();
    testKit
        .system()
        .receptionist()
        .tell(Receptionist.register(WorkProtocol.SERVICE_KEY, ref, registered.getRef()));
    registered.expectMessageClass(Receptionist.Registered.class);
    return ref;
  }

  /** {@code also}: where what it hears goes too, if anywhere. */
  Behavior<ToDispatcher> stub(String name, Answer answer, ActorRef<Heard> also) {
    return Behaviors.setup(
        ctx ->
            Behaviors.receiveMessage(
                message -> {
                  Heard it = new Heard(name, ctx.getSelf(), message, System.nanoTime());
                  heard.add(it);
                  if (also != null) {
                    also.tell(it);
                  }
                  if (message instanceof RequestWork request && answer != Answer.MANUAL) {
                    request
                        .replyTo()
                        .tell(
                            new WorkBatch(
                                RUN, List.of(), false, ctx.getSelf(), answer == Answer.DRY));
                  }
                  return Behaviors.same();
                }));
  }

  ActorRef<WorkerPool.Command> pool(int capacity) {
    return pool(capacity, new ScriptedProvider());
  }

  ActorRef<WorkerPool.Command> pool(int capacity, ScriptedProvider provider) {
    ItemAttempt.Context attempts =
        ItemAttemptTest.context(items, provider, clock, testKit.system());
    return testKit.spawn(
        WorkerPool.create(
            capacity, "node-1", Map.of(ProviderName.DEFAULT, attempts), local::contains));
  }

  List<Heard> heardBy(String name) {
    return heard.stream().filter(h -> h.name().equals(name)).toList();
  }

  List<Heard> requestsTo(String name) {
    return heardBy(name).stream().filter(h -> h.message() instanceof RequestWork).toList();
  }

  List<Heard> steals() {
    return heard.stream().filter(h -> h.message() instanceof RequestWork r && r.steal()).toList();
  }

  List<Heard> awaitRequests(String name, int count) {
    return Await.until(
        WITHIN, count + " requests to " + name, () -> requestsTo(name), l -> l.size() >= count);
  }

  static RequestWork request(Heard heard) {
    return (RequestWork) heard.message();
  }

  static void answer(Heard request, boolean dry, WorkOffer... offers) {
    request(request)
        .replyTo()
        .tell(new WorkBatch(RUN, List.of(offers), false, request.dispatcher(), dry));
  }

  static WorkOffer offer(int seq, ItemId item) {
    return new WorkOffer(seq, item, 3, LEASE);
  }

  /** What the stub heard settled: one by one, or (a stolen item's) together. */
  List<Settled> settledAt(String name) {
    return heardBy(name).stream()
        .flatMap(
            h ->
                h.message() instanceof Settled one
                    ? java.util.stream.Stream.of(one)
                    : h.message() instanceof WorkProtocol.SettledAll all
                        ? all.settled().stream()
                        : java.util.stream.Stream.empty())
        .toList();
  }

  @Test
  void asksTheDispatchersOnItsNodeForItsFreeCapacity() {
    dispatcher("local-1", true, Answer.MANUAL);
    dispatcher("local-2", true, Answer.MANUAL);
    pool(4);

    Heard first = awaitRequests("local-1", 1).get(0);
    Heard second = awaitRequests("local-2", 1).get(0);
    assertEquals(new RequestWork(2, false, false, request(first).replyTo()), request(first));
    assertEquals(2, request(second).max(), "the free capacity shared between them");

    // one item is taken and its claim waits: 3 slots free, 2 of them asked of local-2
    holdClaim(item("a-1"));
    answer(first, false, offer(0, item("a-1")));

    Heard again = awaitRequests("local-1", 2).get(1);
    assertEquals(1, request(again).max());
    assertFalse(request(again).steal());
  }

  @Test
  void neverStealsWhileADispatcherOnItsNodeHoldsItsRequest() {
    dispatcher("local", true, Answer.MANUAL);
    // asked again at every recount: each of its requests shows the pool looked for work
    dispatcher("local-dry", true, Answer.DRY);
    dispatcher("remote", false, Answer.MANUAL);
    pool(4);

    awaitRequests("local", 1);
    awaitRequests("local-dry", 4);

    assertEquals(List.of(), heardBy("remote"), "its own node's items come first");
    assertEquals(1, requestsTo("local").size(), "an open request is not asked again");
  }

  @Test
  void stealsFromOneRemoteDispatcherAtATimeOnceEveryLocalOneIsDry() {
    dispatcher("local", true, Answer.DRY);
    dispatcher("remote-1", false, Answer.MANUAL);
    dispatcher("remote-2", false, Answer.MANUAL);
    pool(4);

    Heard steal = remote.expectMessageClass(Heard.class, WITHIN);
    assertEquals(RequestWork.steal(4, request(steal).replyTo()), request(steal));
    // a steal asks for all that is free: nothing more is asked until it is answered
    remote.expectNoMessage(Duration.ofMillis(1200)); // two recounts

    answer(steal, false);

    Heard next = remote.expectMessageClass(Heard.class, WITHIN);
    assertTrue(request(next).steal());
    assertNotEquals(steal.name(), next.name(), "the other remote dispatcher");
  }

  @Test
  void asksARemoteDispatcherThatGaveNothingLessAndLessOften() {
    dispatcher("local", true, Answer.DRY);
    dispatcher("remote", false, Answer.NOTHING);
    pool(4);

    List<Heard> steals =
        Await.until(Duration.ofSeconds(20), "three steals", this::steals, l -> l.size() >= 3);

    long first = TimeUnit.NANOSECONDS.toMillis(steals.get(1).atNanos() - steals.get(0).atNanos());
    long second = TimeUnit.NANOSECONDS.toMillis(steals.get(2).atNanos() - steals.get(1).atNanos());
    // asked at every recount (500 ms) while it gives something; after nothing, twice as long
    assertTrue(first >= 1000, "asked again after " + first + " ms");
    assertTrue(second >= 2000, "then after " + second + " ms");
  }

  @Test
  void settlesEachAttemptWithTheDispatcherThatOfferedIt() {
    dispatcher("local", true, Answer.MANUAL);
    dispatcher("remote", false, Answer.MANUAL);
    pool(2);

    answer(awaitRequests("local", 1).get(0), false, offer(1, item("done-1")));
    Await.until(WITHIN, "local's item settled", () -> settledAt("local"), l -> !l.isEmpty());
    answer(awaitRequests("local", 2).get(1), true);
    Heard steal = Await.until(WITHIN, "a steal", this::steals, l -> !l.isEmpty()).get(0);
    answer(steal, false, offer(2, item("closed-2")));

    Await.until(WITHIN, "the stolen item settled", () -> settledAt("remote"), l -> !l.isEmpty());
    assertEquals(List.of(new Settled(1, new AttemptResult.Done())), settledAt("local"));
    assertEquals(List.of(new Settled(2, new AttemptResult.Closed())), settledAt("remote"));
    assertTrue(
        heardBy("remote").stream().anyMatch(h -> h.message() instanceof WorkProtocol.SettledAll),
        "a stolen item's ending goes back with the others of its node, not alone");
  }

  /** What the pool told a stub of the provider calls made for its items, added up. */
  ThrottleShare.Calls callsMadeFor(String name) {
    return heardBy(name).stream()
        .filter(h -> h.message() instanceof WorkProtocol.CallsMade)
        .map(h -> ((WorkProtocol.CallsMade) h.message()).calls())
        .reduce(ThrottleShare.Calls.NONE, ThrottleShare.Calls::plus);
  }

  @Test
  void tellsEachDispatcherTheProviderCallsMadeForItsItemsAndHowManyWereThrottled() {
    dispatcher("local", true, Answer.MANUAL);
    dispatcher("other-run", true, Answer.DRY);
    ScriptedProvider provider =
        new ScriptedProvider()
            .applies(
                () ->
                    ScriptedProvider.failing(
                        new ProviderError.Throttled(Duration.ofMillis(20), "429")))
            .applies(
                () ->
                    CompletableFuture.completedFuture(
                        ScriptedProvider.receipt(item("paid-1"), "eff-1")));
    items.answer(
        ScriptedItems.CLAIM,
        item ->
            CompletableFuture.completedFuture(ScriptedItems.claimed(item, 3, EffectStatus.NONE)));
    pool(1, provider);

    answer(awaitRequests("local", 1).get(0), false, offer(0, item("paid-1")));

    // plan, a throttled apply, the apply again: sent at the next recount
    ThrottleShare.Calls made =
        Await.until(WITHIN, "the calls reported", () -> callsMadeFor("local"), c -> c.calls() == 3);
    assertEquals(new ThrottleShare.Calls(3, 1, 20), made);
    assertEquals(List.of(new Settled(0, new AttemptResult.Done())), settledAt("local"));
    assertEquals(ThrottleShare.Calls.NONE, callsMadeFor("other-run"), "nothing made for it");
  }

  @Test
  void aLeavingPoolSaysSoHandsLateOffersBackUnclaimedAndAnswersOnceNothingIsInFlight() {
    dispatcher("local", true, Answer.MANUAL);
    ActorRef<WorkerPool.Command> pool = pool(2);
    ItemId held = item("held-1");
    CompletableFuture<WorkItem.Reply> claim = holdClaim(held);
    answer(awaitRequests("local", 1).get(0), false, offer(0, held));
    Heard open = awaitRequests("local", 2).get(1);

    TestProbe<Done> left = testKit.createTestProbe();
    pool.tell(new WorkerPool.Leave(left.getRef()));

    Heard leaving =
        Await.until(
                WITHIN,
                "the pool to say it leaves",
                () -> heardBy("local"),
                l -> l.stream().anyMatch(h -> h.message() instanceof PoolLeaving))
            .stream()
            .filter(h -> h.message() instanceof PoolLeaving)
            .findFirst()
            .orElseThrow();
    assertEquals(new PoolLeaving(request(open).replyTo()), leaving.message());

    // an offer that crossed the PoolLeaving: handed back at once, never claimed
    answer(open, false, offer(5, item("late-5")));
    Await.until(WITHIN, "the late offer back", () -> settledAt("local"), l -> !l.isEmpty());
    assertEquals(
        List.of(new Settled(5, new AttemptResult.RetryAt(clock.instant()))), settledAt("local"));
    assertEquals(List.of(), items.commandsTo(item("late-5")));
    left.expectNoMessage(Duration.ofMillis(300)); // its attempt is still in flight

    claim.complete(ScriptedItems.claimed(held, 3, EffectStatus.NONE));

    left.expectMessage(WITHIN, Done.getInstance());
    assertEquals(
        new Settled(0, new AttemptResult.RetryAt(clock.instant())), settledAt("local").get(1));
    assertEquals(
        List.of(ScriptedItems.CLAIM, ScriptedItems.RELEASE),
        items.commandsTo(held).stream().map(ScriptedItems.Command::name).toList(),
        "the lease is handed back, the provider never called");
    int leftAt = heardBy("local").indexOf(leaving);
    assertTrue(
        heardBy("local").stream().skip(leftAt).noneMatch(h -> h.message() instanceof RequestWork),
        "nothing asked after it said it leaves");
  }
}
