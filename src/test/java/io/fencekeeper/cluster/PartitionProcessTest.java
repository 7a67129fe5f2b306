package io.fencekeeper.cluster;

import static io.fencekeeper.cluster.ClusterFixture.accounts;
import static io.fencekeeper.cluster.ClusterFixture.assertOneEffectPerKey;
import static io.fencekeeper.cluster.ClusterFixture.awaitDone;
import static io.fencekeeper.cluster.ClusterFixture.awaitEnded;
import static io.fencekeeper.cluster.ClusterFixture.createRun;
import static io.fencekeeper.cluster.ClusterFixture.item;
import static io.fencekeeper.cluster.ClusterFixture.nodeOf;
import static io.fencekeeper.provider.ProviderTestSupport.cleanup;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.client.ApiClient;
import io.fencekeeper.cli.NodeExit;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.item.ItemShards;
import io.fencekeeper.item.WorkItem;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.run.RunState;
import io.fencekeeper.run.RunView;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.testing.Await;
import io.fencekeeper.testing.ProcessTest;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;

/**
 * A network partition, not a crash: node 3 is cut from the cluster ports of nodes 1 and 2 and of
 * the client (iptables on loopback, {@link LoopbackPartition}) but still reaches the database and
 * the provider. Keep-majority downs it on both sides: it stops itself, the majority takes its
 * shards and leases over, the run succeeds with one effect per key and no interleaved writers.
 *
 * <p>What the minority commits after the cut is measured from the journal: only on its own shards,
 * and only before the majority takes any of its leases over. A straggler of the minority (a worker
 * that claimed through node 3's lease API before the cut, played by the test) that comes back after
 * the takeover is refused by token twice: by the provider ({@code stale_token}) and by the item
 * (LeaseLost, journaled as a stale rejection in the audit).
 */
@ProcessTest
class PartitionProcessTest {

  private static final int MINORITY = 3;

  /**
   * The removal margin is what absorbs the two sides deciding at different times: the minority must
   * have decided (and so stopped writing) before the majority starts its shards. With the shared
   * test timings it is 2 s (stable-after); on a loaded 2-core machine the minority's resolver once
   * decided at least 1.7 s after the majority's (a CI run: the majority's first takeover in the
   * minority's shards at +5.0 s, which needs its decision plus the margin; the minority's decision
   * and its last commit at +5.2 s). Production gives the margin 10 s (stable-after) of a 26 s
   * decision, 30 s lease; here 4 s, and the lease grows with it to keep the partition inequality:
   * 3.5 s detection + 2 s decision + 4 s margin < 12 s.
   */
  private static final Duration REMOVAL_MARGIN = Duration.ofSeconds(4);

  private static final Duration LEASE = Duration.ofSeconds(12);

  @Test
  void minorityCutFromTheClusterIsDownedItsStragglerIsRefusedByTokenAndTheRunSucceeds()
      throws Exception {
    boolean ci = "true".equals(System.getenv("CI"));
    assumeTrue(
        ci || LoopbackPartition.available(), "iptables and setpriv (as root) make the partition");
    LoopbackPartition.removeLeftovers();
    try (LoopbackPartition partition = new LoopbackPartition();
        ProcessCluster cluster =
            new ProcessCluster(
                4,
                // at the default quarantine setting (K = 2): the straggler, a lease API worker,
                // counts as lost when silent (docs/design.md, "Lost holders count"), so its item is
                // one whose shard the majority hosts, where no minority worker can follow it as a
                // second silent holder once the cut is made
                Map.of(
                    "pekko.cluster.down-removal-margin",
                    REMOVAL_MARGIN.toMillis() + "ms",
                    "fencekeeper.lease",
                    LEASE.toMillis() + "ms"),
                ProcessCluster.Launch.forNode(
                    MINORITY,
                    new ProcessCluster.Launch(LoopbackPartition.minorityPrefix(), Map.of())),
                "--latency-ms",
                "100",
                "--jitter-ms",
                "40",
                "--seed",
                "9")) {
      String job = "partition";
      List<AccountCursor> accounts = accounts(600);
      RunView created = createRun(cluster.client, job, accounts);
      awaitDone(
          cluster.client, created.runId(), 150, Duration.ofSeconds(90), "a quarter of the run");
      ProcessCluster.NodeProcess minority = cluster.nodes.get(MINORITY - 1);
      HttpProvider provider =
          HttpProvider.create(cluster.simUrl, Duration.ofSeconds(2), Duration.ofSeconds(10));

      // a straggler: a worker of the minority holding a lease on an item that needs an effect, in
      // a shard of the majority; its id looks like the minority's own workers' and borrows
      // nothing from it (the lease API's claims name no node)
      String straggler = minority.address() + "/w-straggler";
      // the sim slowed while the straggler looks for its item: on a loaded machine the majority
      // had worked all but 48 of its items before the look (the minority's node had done few of
      // its own: 232 of the 280 pending), and those 48 were DONE by the time the look reached
      // them
      VerifyProcessTest.setSimFaults(cluster, Map.of("latencyMs", 1500));
      Set<String> majorityShards = shardsHostedBy(cluster, List.of(0, 1));
      Map.Entry<ItemId, JsonNode> claimed =
          claimAnOpenItem(cluster, minority, provider, created.runId(), majorityShards, straggler);
      VerifyProcessTest.setSimFaults(cluster, Map.of("latencyMs", 100));
      ItemId stragglerItem = claimed.getKey();
      Plan stragglerPlan = provider.plan(stragglerItem).toCompletableFuture().get();
      long stragglerToken = claimed.getValue().get("token").asLong();

      List<Integer> others =
          List.of(
              cluster.nodes.get(0).remotePort(),
              cluster.nodes.get(1).remotePort(),
              Cluster.get(cluster.client.system()).selfMember().address().getPort().orElseThrow());
      Instant cutAt = Instant.now();
      partition.cut(minority.remotePort(), others);
      System.out.println("PARTITION rules:\n" + partition.rules());

      // keep-majority on both sides: the minority downs itself and exits, the majority removes it
      Instant[] exitedAndRemoved = new Instant[2];
      Await.until(
          Duration.ofSeconds(90),
          "node " + MINORITY + " stopped by itself and removed by the majority",
          () -> {
            if (exitedAndRemoved[0] == null && !minority.process().isAlive()) {
              exitedAndRemoved[0] = Instant.now();
            }
            if (exitedAndRemoved[1] == null && !cluster.isMember(minority.address())) {
              exitedAndRemoved[1] = Instant.now();
            }
            return exitedAndRemoved[0] != null && exitedAndRemoved[1] != null;
          },
          () ->
              "exited at "
                  + exitedAndRemoved[0]
                  + ", removed at "
                  + exitedAndRemoved[1]
                  + " (cut at "
                  + cutAt
                  + "); "
                  + cluster.snapshot());
      Instant minorityExited = exitedAndRemoved[0];
      Instant removed = exitedAndRemoved[1];
      String minorityDecision = sbrDecision(minority.log());
      String majorityDecision = sbrDecision(cluster.nodes.get(0).log());

      RunView ended = awaitEnded(cluster.client, created.runId(), Duration.ofSeconds(180));
      assertEquals(RunState.SUCCEEDED, ended.state(), ended.toString());
      Map<Integer, Integer> histogram =
          assertOneEffectPerKey(cluster.client, job, accounts, cluster.ledger());
      assertEquals(Map.of(), cluster.interleavedWriters(), "A, B, A writers per persistence id");

      // the straggler comes back after the majority took its item over and finished it
      assertEquals(WorkItem.Status.DONE, item(cluster.client, stragglerItem).status());
      ProviderError atProvider =
          providerError(
              () ->
                  provider
                      .apply(
                          cleanup(
                              stragglerItem,
                              stragglerPlan,
                              stragglerItem.idempotencyKey(),
                              stragglerToken))
                      .toCompletableFuture()
                      .join());
      assertInstanceOf(ProviderError.StaleToken.class, atProvider, "the provider's answer");
      WorkItem.Reply atItem =
          cluster
              .client
              .items()
              .recordEffectAndComplete(
                  stragglerItem,
                  straggler,
                  stragglerToken,
                  new WorkItem.EffectOutcome(WorkItem.OutcomeKind.APPLIED, "late", "late"),
                  0)
              .toCompletableFuture()
              .get(20, TimeUnit.SECONDS);
      WorkItem.LeaseLost lost = assertInstanceOf(WorkItem.LeaseLost.class, atItem);
      assertEquals(
          Map.of(), effectsAbove(cluster.ledger(), 1), "the straggler added no effect at all");

      JournalTimeline journal = JournalTimeline.read(cluster, job);
      List<JournalTimeline.Row> refusals =
          journal.all(WorkItem.StaleCommandRejected.class).stream()
              .filter(
                  r ->
                      nodeOf(((WorkItem.StaleCommandRejected) r.event()).workerId())
                          .equals(minority.address()))
              .toList();
      assertTrue(
          refusals.stream()
              .anyMatch(
                  r ->
                      r.event() instanceof WorkItem.StaleCommandRejected s
                          && s.workerId().equals(straggler)
                          && s.presentedToken() == stragglerToken),
          "the audit keeps the straggler's refused write: " + refusals);

      // the minority's own commits after the cut: on its shards only
      List<JournalTimeline.Row> minorityCommits =
          journal.all(WorkItem.ItemCompleted.class).stream()
              .filter(r -> r.dbTime().isAfter(cutAt))
              .filter(r -> holder(journal, r).map(minority.address()::equals).orElse(false))
              .toList();
      List<JournalTimeline.Row> takeovers =
          journal.all(WorkItem.LeaseGranted.class).stream()
              .filter(r -> r.dbTime().isAfter(cutAt))
              .filter(
                  r ->
                      r.event() instanceof WorkItem.LeaseGranted g
                          && g.previousOwner() != null
                          && nodeOf(g.previousOwner()).equals(minority.address()))
              .toList();
      Optional<Instant> lastMinorityCommit =
          minorityCommits.stream().map(JournalTimeline.Row::dbTime).max(Comparator.naturalOrder());
      Optional<Instant> firstTakeover =
          takeovers.stream().map(JournalTimeline.Row::dbTime).min(Comparator.naturalOrder());
      Optional<Instant> lastTakeover =
          takeovers.stream().map(JournalTimeline.Row::dbTime).max(Comparator.naturalOrder());
      System.out.printf(
          "PARTITION node %d cut from the cluster at %s (+0 s; lease %ds): SBR on the minority"
              + " %s, on the majority %s; the minority's last commit +%s (%d commits after the"
              + " cut); it stopped itself +%.1f s (exit %d); the majority no longer lists it"
              + " +%.1f s; first takeover of its leases +%s, last +%s (%d takeovers); refused"
              + " writes of the minority in the audit: %d (the straggler's: presented token %d,"
              + " current %d, \"%s\"), the provider answered the straggler %s; run %s in %.1f s,"
              + " stale rejections %d, takeovers %d, effects-per-key %s%n",
          MINORITY,
          LocalTime.ofInstant(cutAt, ZoneId.systemDefault()),
          LEASE.toSeconds(),
          minorityDecision,
          majorityDecision,
          lastMinorityCommit.map(t -> seconds(cutAt, t)).orElse("none"),
          minorityCommits.size(),
          Duration.between(cutAt, minorityExited).toMillis() / 1000.0,
          minority.process().exitValue(),
          Duration.between(cutAt, removed).toMillis() / 1000.0,
          firstTakeover.map(t -> seconds(cutAt, t)).orElse("none"),
          lastTakeover.map(t -> seconds(cutAt, t)).orElse("none"),
          takeovers.size(),
          refusals.size(),
          lost.presentedToken(),
          lost.currentToken(),
          lost.reason(),
          atProvider.getClass().getSimpleName(),
          ended.state(),
          Duration.between(ended.createdAt(), ended.endedAt()).toMillis() / 1000.0,
          ended.staleRejections(),
          ended.takeovers(),
          histogram);
      // the minority goes on with the shards it hosts (docs/design.md, "Dispatch on every node")
      // until it is downed; the majority starts those shards only once it has removed it: no
      // lease of an item in a shard the minority was still committing in is taken over before
      // the minority's last commit (a lease of an item elsewhere, one it took before the cut, ends
      // at its own time)
      ItemShards shards = new ItemShards(100);
      Set<String> minorityShards = new HashSet<>();
      minorityCommits.forEach(r -> minorityShards.add(shards.shardOf(ItemId.parse(r.itemId()))));
      Optional<Instant> firstTakeoverInItsShards =
          takeovers.stream()
              .filter(r -> minorityShards.contains(shards.shardOf(ItemId.parse(r.itemId()))))
              .map(JournalTimeline.Row::dbTime)
              .min(Comparator.naturalOrder());
      if (lastMinorityCommit.isPresent() && firstTakeoverInItsShards.isPresent()) {
        assertTrue(
            lastMinorityCommit.get().isBefore(firstTakeoverInItsShards.get()),
            "the minority committed at "
                + lastMinorityCommit.get()
                + ", after the majority began taking over leases in its shards at "
                + firstTakeoverInItsShards.get());
      }
      // and per item, whatever its shard: a holder cut off never commits after its takeover
      for (JournalTimeline.Row takeover : takeovers) {
        for (JournalTimeline.Row commit : minorityCommits) {
          if (commit.itemId().equals(takeover.itemId())) {
            assertTrue(
                commit.seq() < takeover.seq(),
                "item " + commit.itemId() + ": the minority committed after the takeover");
          }
        }
      }
      // downed is not a clean stop: a supervisor's restart-on-failure brings the node back
      assertEquals(
          NodeExit.DOWNED,
          minority.process().exitValue(),
          "the downed minority ran its shutdown and exited: "
              + ProcessCluster.tail(minority.log()));
    }
  }

  /** The node whose worker held the lease an ItemCompleted row completed. */
  private static Optional<String> holder(JournalTimeline journal, JournalTimeline.Row completed) {
    long token = ((WorkItem.ItemCompleted) completed.event()).token();
    return journal
        .grantOf(completed.itemId(), token)
        .map(g -> nodeOf(((WorkItem.LeaseGranted) g.event()).workerId()));
  }

  /** The scope's last item whose plan has something to apply (one in ten has nothing). */
  /**
   * Claims, for {@code workerId} through {@code node}'s API, an item that needs an effect and is
   * not claimed nor done yet, from the last pending one back. The pending items are read in one
   * page of the run's items ({@code GET /api/runs/{runId}/items?status=pending}): looking at each
   * of the run's items one by one took longer on a loaded machine than the cluster took to finish
   * them all. One may still be claimed by its dispatcher between the look and the claim (409: the
   * next one is tried).
   */
  private static Map.Entry<ItemId, JsonNode> claimAnOpenItem(
      ProcessCluster cluster,
      ProcessCluster.NodeProcess node,
      HttpProvider provider,
      String runId,
      Set<String> inShards,
      String workerId)
      throws Exception {
    ItemShards shards = new ItemShards(100);
    List<ItemId> pending = pendingItems(node, runId);
    // why each pending item was passed over, for the failure's message
    Map<String, Integer> passedOver = new TreeMap<>();
    List<String> refusals = new ArrayList<>();
    for (int i = pending.size() - 1; i >= 0; i--) {
      ItemId id = pending.get(i);
      if (!inShards.contains(shards.shardOf(id))) {
        passedOver.merge("in a minority shard", 1, Integer::sum);
        continue;
      }
      WorkItem.Status status = item(cluster.client, id).status();
      if (status != WorkItem.Status.PENDING) {
        passedOver.merge(status + " by now", 1, Integer::sum);
        continue;
      }
      if (provider.plan(id).toCompletableFuture().get().nothingToDo()) {
        passedOver.merge("nothing to do", 1, Integer::sum);
        continue;
      }
      // a 503 (the item's shard did not answer the claim in time: a loaded machine) may have
      // granted the lease: the same request id again gets that lease, or the refusal, not a second
      String requestId = "straggler-" + i;
      HttpResponse<String> response = postClaim(node, id, workerId, requestId);
      for (int resend = 0; response.statusCode() == 503 && resend < 10; resend++) {
        response = postClaim(node, id, workerId, requestId);
      }
      if (response.statusCode() == 409) {
        passedOver.merge("409", 1, Integer::sum);
        if (refusals.size() < 3) {
          refusals.add(response.body());
        }
        continue;
      }
      assertEquals(200, response.statusCode(), response.body());
      return Map.entry(id, new ObjectMapper().readTree(response.body()));
    }
    throw new AssertionError(
        "no open item needs an effect among "
            + pending.size()
            + " pending: passed over "
            + passedOver
            + ", refusals "
            + refusals);
  }

  /** The run's PENDING items in scope order, as one page of the node's items API answers them. */
  private static List<ItemId> pendingItems(ProcessCluster.NodeProcess node, String runId)
      throws Exception {
    JsonNode page =
        getJson(
            node.httpPort(),
            "/api/runs/" + ApiClient.segment(runId) + "/items?status=pending&limit=500");
    List<ItemId> pending = new ArrayList<>();
    for (JsonNode entry : page.path("items")) {
      pending.add(ItemId.parse(entry.path("item").path("itemId").asText()));
    }
    return pending;
  }

  /**
   * The item shards that the nodes at {@code indexes} host now, each as its Pekko Management
   * answers {@code GET /cluster/shards/{entity type}} (its own shard region's shards).
   */
  private static Set<String> shardsHostedBy(ProcessCluster cluster, List<Integer> indexes)
      throws Exception {
    Set<String> hosted = new HashSet<>();
    for (int index : indexes) {
      ProcessCluster.NodeProcess node = cluster.nodes.get(index);
      JsonNode shards =
          getJson(node.managementPort(), "/cluster/shards/" + WorkItem.ENTITY_TYPE_KEY.name());
      for (JsonNode region : shards.path("regions")) {
        hosted.add(region.path("shardId").asText());
      }
    }
    assertFalse(hosted.isEmpty(), "the majority hosts shards");
    return hosted;
  }

  /** GET {@code path} on loopback at {@code port}, answered 200, as JSON. */
  private static JsonNode getJson(int port, String path) throws Exception {
    HttpResponse<String> answer =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(Duration.ofSeconds(20))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertEquals(200, answer.statusCode(), answer.body());
    return new ObjectMapper().readTree(answer.body());
  }

  /** POST /api/items/{itemId}/claim on the node's own HTTP API (loopback, no token), retryable. */
  private static HttpResponse<String> postClaim(
      ProcessCluster.NodeProcess node, ItemId item, String workerId, String requestId)
      throws Exception {
    String body =
        "{\"workerId\": \""
            + workerId
            + "\", \"leaseMillis\": "
            + LEASE.toMillis()
            + ", \"requestId\": \""
            + requestId
            + "\"}";
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(
                    URI.create(
                        "http://127.0.0.1:"
                            + node.httpPort()
                            + "/api/items/"
                            + ApiClient.segment(item.value())
                            + "/claim"))
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(20))
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
  }

  /** The Split Brain Resolver's decision as the node logged it (WARN), with its time. */
  private static String sbrDecision(Path log) throws IOException {
    Matcher m =
        Pattern.compile("(\\d\\d:\\d\\d:\\d\\d\\.\\d{3}) WARN .*SBR took decision (\\w+)")
            .matcher(Files.readString(log));
    return m.find() ? m.group(2) + " at " + m.group(1) : "(no decision logged)";
  }

  private static ProviderError providerError(Runnable call) {
    try {
      call.run();
    } catch (CompletionException e) {
      return ProviderError.from(e);
    }
    throw new AssertionError("the provider accepted the straggler's apply");
  }

  private static Map<String, Integer> effectsAbove(Map<String, Integer> ledger, int limit) {
    return ledger.entrySet().stream()
        .filter(e -> e.getValue() > limit)
        .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
  }

  private static String seconds(Instant from, Instant to) {
    return String.format("%.1f s", Duration.between(from, to).toMillis() / 1000.0);
  }
}
