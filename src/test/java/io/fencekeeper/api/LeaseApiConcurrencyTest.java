package io.fencekeeper.api;

import static io.fencekeeper.api.ApiTestNode.seg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Many external workers racing for the same items over HTTP. */
class LeaseApiConcurrencyTest {

  private final ApiTestNode api = ApiTestNode.get();

  @Test
  void racingClaimsNeverLeaseAnItemToTwoWorkersAndNeverAnswer5xx() throws Exception {
    int threads = 8;
    int attempts = 500;
    int itemCount = 12;
    String runId = api.createRun(ApiTestNode.newJob("race"), itemCount);
    Map<String, String> holders = new ConcurrentHashMap<>();
    List<String> violations = new ArrayList<>();
    AtomicInteger claimed = new AtomicInteger();
    AtomicInteger refused = new AtomicInteger();
    Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<?>> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      String worker = "w-" + t;
      Random random = new Random(t);
      workers.add(
          pool.submit(
              () -> {
                for (int i = 0; i < attempts; i++) {
                  String itemId = ApiTestNode.itemId(runId, 1 + random.nextInt(itemCount));
                  String path = "/api/items/" + seg(itemId);
                  ApiTestNode.Answer claim =
                      api.post(
                          path + "/claim",
                          "{\"workerId\":\"" + worker + "\",\"leaseMillis\":600000}");
                  statuses
                      .computeIfAbsent(claim.status(), s -> new AtomicInteger())
                      .incrementAndGet();
                  if (claim.status() != 200) {
                    refused.incrementAndGet();
                    continue;
                  }
                  claimed.incrementAndGet();
                  String other = holders.putIfAbsent(itemId, worker);
                  if (other != null) {
                    synchronized (violations) {
                      violations.add(
                          itemId + " leased to " + worker + " while " + other + " held it");
                    }
                  }
                  long token = claim.tree().path("token").asLong();
                  holders.remove(itemId, worker);
                  ApiTestNode.Answer release =
                      api.post(
                          path + "/release",
                          "{\"workerId\":\"" + worker + "\",\"token\":" + token + "}");
                  statuses
                      .computeIfAbsent(release.status(), s -> new AtomicInteger())
                      .incrementAndGet();
                }
                return null;
              }));
    }
    for (Future<?> worker : workers) {
      worker.get(5, TimeUnit.MINUTES);
    }
    pool.shutdown();
    assertTrue(violations.isEmpty(), violations.toString());
    for (int status : statuses.keySet()) {
      assertTrue(status < 500, "a request answered " + status + ": " + statuses);
    }
    assertEquals(threads * attempts, claimed.get() + refused.get());
    assertTrue(claimed.get() > itemCount, "claims: " + claimed.get());
  }
}
