package io.fencekeeper.cli;

import io.fencekeeper.verify.VerificationKeeper;
import io.fencekeeper.verify.VerificationView;
import io.fencekeeper.verify.Verifications;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The verdict line of the {@code run} report when the run verifies itself when it ends ({@code
 * --verify}, {@code fencekeeper.verify.when-run-ends}): the verification the run's end requested,
 * or one asked for here if the keeper has not requested it yet (the same rows: it is joined, never
 * done twice at once), followed to its end. Its exit code is {@code verify}'s: 0 AGREE, 4
 * DISCREPANCIES, 5 INCOMPLETE (a verification that could not start is one that could not complete).
 */
final class RunVerdict {

  private RunVerdict() {}

  static int print(PrintStream out, Verifications verifications, String runId) throws Exception {
    Optional<VerificationView> latest =
        verifications.get(runId, 0).toCompletableFuture().get(30, TimeUnit.SECONDS);
    int number;
    if (latest.isPresent() && latest.get().auto()) {
      number = latest.get().number();
    } else {
      VerificationKeeper.StartReply reply =
          verifications
              .start(runId, 0, OptionalLong.empty())
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      if (reply instanceof VerificationKeeper.Accepted accepted) {
        number = accepted.view().number();
      } else if (reply instanceof VerificationKeeper.AlreadyRunning running) {
        number = running.view().number();
      } else {
        out.println(
            "  verification      not started: " + ((VerificationKeeper.Refused) reply).message());
        return VerifyCommand.INCOMPLETE;
      }
    }
    VerificationView view = null;
    while (view == null || view.status() == VerificationView.Status.RUNNING) {
      if (view != null) {
        LockSupport.parkNanos(Duration.ofMillis(500).toNanos());
      }
      view =
          verifications
              .get(runId, number)
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS)
              .orElseThrow();
    }
    var t = view.tally();
    out.printf(
        "  verification      %s: %d of %d items checked at the provider; missing %d, different %d,"
            + " unexpected effect %d, resolved %d%s%n",
        view.verdict(),
        view.checked(),
        view.toCheck(),
        t.missing(),
        t.different(),
        t.unexpectedEffect(),
        t.resolved(),
        view.reason() == null ? "" : " (" + view.reason() + ")");
    return switch (view.verdict()) {
      case "AGREE" -> VerifyCommand.AGREE;
      case "DISCREPANCIES" -> VerifyCommand.DISCREPANCIES;
      default -> VerifyCommand.INCOMPLETE;
    };
  }
}
