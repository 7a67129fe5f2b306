package io.fencekeeper.verify;

import io.fencekeeper.item.ItemGateway;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.run.RunItemStore;
import io.fencekeeper.run.RunView;
import io.fencekeeper.worker.ItemAttempt.AttemptListener;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What the verifications of a node use, passed in by the node (the composition root).
 *
 * @param providers the node's provider of a name (built for verification on a node without workers)
 * @param permits the node's spare permits of a provider's budget
 * @param later runs a task after a delay (the node's scheduler)
 * @param listener sees every lookup (metrics)
 * @param runs every run, for verifying runs when they end
 */
public record VerifyDependencies(
    ItemGateway items,
    RunItemStore store,
    Executor blocking,
    Function<String, Optional<Provider>> providers,
    Function<String, Optional<SparePermits>> permits,
    BiConsumer<Duration, Runnable> later,
    Clock clock,
    VerifySettings settings,
    AttemptListener listener,
    Supplier<CompletionStage<List<RunView>>> runs) {}
