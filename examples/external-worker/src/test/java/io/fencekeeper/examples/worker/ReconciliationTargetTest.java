package io.fencekeeper.examples.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fencekeeper.sdk.worker.Item;
import io.fencekeeper.sdk.worker.Lease;
import io.fencekeeper.sdk.worker.LeaseLostException;
import io.fencekeeper.sdk.worker.Outcome;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The target keeps its side of the contract: one effect per idempotency key, a lower token fenced
 * off before anything is written, no write the lease may not outlive (H2 in PostgreSQL mode here;
 * the repository's own suite runs this worker against PostgreSQL and a Fencekeeper cluster).
 */
class ReconciliationTargetTest {

  static final Duration MARGIN = Duration.ofMillis(200);

  String url;
  ReconciliationTarget target;
  final Item item =
      new Item("job/2026-11-29/a-1/c-1", "job/2026-11-29", "a-1", "c-1", "fk-1", 1, false, "NONE");

  @BeforeEach
  void database() throws Exception {
    url = "jdbc:h2:mem:" + UUID.randomUUID() + ";MODE=PostgreSQL;DB_CLOSE_DELAY=-1";
    target = new ReconciliationTarget(url, "sa", "");
    target.createTables();
  }

  static Lease lease(long token) {
    return Lease.of("job/2026-11-29/a-1/c-1", token, "fk-1", Duration.ofSeconds(30));
  }

  long balance() throws Exception {
    try (Connection c = DriverManager.getConnection(url, "sa", "");
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT balance_minor FROM account_balance WHERE account_id = 'a-1'")) {
      return rs.next() ? rs.getLong(1) : 0;
    }
  }

  @Test
  void aRepeatUnderTheSameKeyFindsTheFirstEffectAndAppliesNothing() throws Exception {
    Outcome first = target.apply(item, lease(1), MARGIN);
    Outcome again = target.apply(item, lease(2), MARGIN);
    String effect = assertInstanceOf(Outcome.Applied.class, first).reference();
    assertEquals(effect, assertInstanceOf(Outcome.Found.class, again).reference());
    assertEquals(-ReconciliationTarget.DUPLICATE_CAPTURE_MINOR, balance(), "debited once");
    assertEquals(Optional.of(Outcome.found(effect)), target.lookup("fk-1"));
  }

  @Test
  void aLowerTokenIsFencedOffBeforeAnythingIsWritten() throws Exception {
    target.apply(item, lease(5), MARGIN);
    Item other = new Item(item.itemId(), item.runId(), "a-1", "c-1", "fk-1", 1, false, "NONE");
    assertInstanceOf(Outcome.Failed.class, target.apply(other, lease(4), MARGIN));
    assertEquals(-ReconciliationTarget.DUPLICATE_CAPTURE_MINOR, balance());
  }

  @Test
  void noWriteStartsThatTheLeaseMayNotOutlive() throws Exception {
    Lease almostOver = Lease.of(item.itemId(), 1, "fk-1", Duration.ofMillis(100));
    assertThrows(LeaseLostException.class, () -> target.apply(item, almostOver, MARGIN));
    assertEquals(0, balance());
    assertEquals(Optional.empty(), target.lookup("fk-1"));
  }
}
