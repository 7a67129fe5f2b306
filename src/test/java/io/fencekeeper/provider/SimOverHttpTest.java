package io.fencekeeper.provider;

import io.fencekeeper.provider.http.HttpProvider;
import io.fencekeeper.provider.sim.SimFaults;
import io.fencekeeper.provider.sim.SimProviderServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * For tests of the provider boundary over real HTTP: a fresh simulated provider on a free port (no
 * faults, a fixed seed) and the real client pointed at it, for each test.
 */
public abstract class SimOverHttpTest {

  private final long seed;
  protected SimProviderServer sim;
  protected HttpProvider provider;

  protected SimOverHttpTest(long seed) {
    this.seed = seed;
  }

  @BeforeEach
  protected void startSim() {
    sim = SimProviderServer.start(0, SimFaults.NONE, seed);
    provider = HttpProvider.create(sim.baseUrl(), Duration.ofSeconds(2), Duration.ofSeconds(5));
  }

  @AfterEach
  protected void stopSim() {
    provider.close();
    sim.close();
  }
}
