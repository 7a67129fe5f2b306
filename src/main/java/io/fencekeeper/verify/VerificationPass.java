package io.fencekeeper.verify;

import io.fencekeeper.run.RunItemStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.UniqueKillSwitch;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;

/**
 * A verification's walk over its run's scope (a stream, in scope order): rows paged from {@code
 * run_item}, the sample's choice for each, up to {@code parallelism} items checked at once, and the
 * results handed back in scope order in groups (at most {@code checkpointEvery} rows, or what a
 * second brought) for the verification to journal. Because groups are contiguous and journaled in
 * order, a verification that restarts from its last checkpoint checks again only the rows after it:
 * no item is looked up more than once before a crash and once after it.
 */
final class VerificationPass {

  static final int PAGE = 500;

  /** One row of the scope: its check, or null when the sample passed it over. */
  record Step(int seq, Finding finding) {}

  /** A pass under way: stop it, or learn how it ended. */
  record Running(UniqueKillSwitch stop, CompletionStage<Done> done) {}

  /** Where a pass starts: the next row, the rows passed so far and how many the sample chose. */
  record From(int seq, long scanned, long chosen) {}

  private VerificationPass() {}

  static Running start(
      ActorSystem<?> system,
      VerificationPlan plan,
      From from,
      RunItemStore store,
      Executor blocking,
      ItemCheck check,
      int parallelism,
      int checkpointEvery,
      Function<List<Step>, CompletionStage<Done>> checkpoint) {
    Sampling sampling = plan.sampling();
    // the stage runs its function one row at a time: the position needs no lock
    long[] position = {from.scanned(), from.chosen()};
    Pair<UniqueKillSwitch, CompletionStage<Done>> running =
        rows(store, plan.scopeId(), from.seq(), blocking)
            .mapAsync(
                parallelism,
                row -> {
                  boolean chosen = sampling.selects(position[0], position[1]);
                  position[0]++;
                  if (!chosen) {
                    return CompletableFuture.completedFuture(new Step(row.seq(), null));
                  }
                  position[1]++;
                  return check
                      .check(row.seq(), plan.itemId(row.accountId(), row.cursor()))
                      .thenApply(finding -> new Step(row.seq(), finding));
                })
            .groupedWithin(checkpointEvery, Duration.ofSeconds(1))
            .mapAsync(1, checkpoint::apply)
            .viaMat(KillSwitches.single(), Keep.right())
            .toMat(Sink.ignore(), Keep.both())
            .run(system);
    return new Running(running.first(), running.second());
  }

  /** The scope's rows from {@code fromSeq} on, a page at a time, read on the blocking executor. */
  private static Source<RunItemStore.Row, ?> rows(
      RunItemStore store, String scopeId, int fromSeq, Executor blocking) {
    return Source.unfoldAsync(
            fromSeq,
            seq ->
                CompletableFuture.supplyAsync(
                    () -> {
                      List<RunItemStore.Row> page = store.page(scopeId, seq, PAGE);
                      return page.isEmpty()
                          ? Optional.<Pair<Integer, List<RunItemStore.Row>>>empty()
                          : Optional.of(Pair.create(page.get(page.size() - 1).seq() + 1, page));
                    },
                    blocking))
        .mapConcat(page -> page);
  }
}
