package io.fencekeeper.sdk.worker;

/**
 * The item a worker holds a lease on, as the claim answered it: what to clean up ({@code runId},
 * {@code accountId}, {@code cursor}) and the idempotency key every write of it carries to the
 * target. {@code effect} is what the node knows of the effect: {@code NONE}, {@code RECORDED} or
 * {@code AMBIGUOUS}.
 */
public record Item(
    String itemId,
    String runId,
    String accountId,
    String cursor,
    String idempotencyKey,
    int attempt,
    boolean takeover,
    String effect) {}
