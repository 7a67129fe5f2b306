package io.fencekeeper.verify;

import com.typesafe.config.Config;

/**
 * {@code fencekeeper.verify}: how verifications run on a node.
 *
 * @param maxInFlight lookups of verifications at once on a node (with a provider budget, at most
 *     half of the node's permits as well)
 * @param checkpointEvery rows checked between two journaled checkpoints (or a second)
 * @param whenRunEnds a run verifies itself when it ends (docs/design.md, "Verifying a run")
 * @param whenRunEndsSample 0: such a verification checks every item; else a sample of this many
 */
public record VerifySettings(
    int maxInFlight, int checkpointEvery, boolean whenRunEnds, long whenRunEndsSample) {

  public VerifySettings {
    if (maxInFlight < 1 || maxInFlight > 10_000) {
      throw new IllegalArgumentException(
          "fencekeeper.verify.max-in-flight must be between 1 and 10000, got " + maxInFlight);
    }
    if (checkpointEvery < 1 || checkpointEvery > 100_000) {
      throw new IllegalArgumentException(
          "fencekeeper.verify.checkpoint-every must be between 1 and 100000, got "
              + checkpointEvery);
    }
    if (whenRunEndsSample < 0) {
      throw new IllegalArgumentException(
          "fencekeeper.verify.when-run-ends-sample must be >= 0, got " + whenRunEndsSample);
    }
  }

  public static VerifySettings defaults() {
    return new VerifySettings(32, 500, false, 0);
  }

  public static VerifySettings fromConfig(Config root) {
    String path = "fencekeeper.verify";
    if (!root.hasPath(path)) {
      return defaults();
    }
    Config c = root.getConfig(path);
    VerifySettings d = defaults();
    return new VerifySettings(
        c.hasPath("max-in-flight") ? c.getInt("max-in-flight") : d.maxInFlight(),
        c.hasPath("checkpoint-every") ? c.getInt("checkpoint-every") : d.checkpointEvery(),
        c.hasPath("when-run-ends") ? c.getBoolean("when-run-ends") : d.whenRunEnds(),
        c.hasPath("when-run-ends-sample")
            ? c.getLong("when-run-ends-sample")
            : d.whenRunEndsSample());
  }
}
