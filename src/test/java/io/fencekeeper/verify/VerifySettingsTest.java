package io.fencekeeper.verify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.fencekeeper.node.FencekeeperNode;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code fencekeeper.verify}: the bundled defaults, and a refusal that names the setting. */
class VerifySettingsTest {

  @Test
  void theBundledConfigurationIsTheDefaults() {
    assertEquals(
        VerifySettings.defaults(), VerifySettings.fromConfig(FencekeeperNode.config(Map.of())));
    assertEquals(new VerifySettings(32, 500, false, 0), VerifySettings.defaults());
  }

  @Test
  void aRunVerifiesItselfWhenTheOperatorSaysSo() {
    VerifySettings settings =
        VerifySettings.fromConfig(
            FencekeeperNode.config(
                Map.of(
                    "fencekeeper.verify.when-run-ends",
                    true,
                    "fencekeeper.verify.when-run-ends-sample",
                    1000)));

    assertTrue(settings.whenRunEnds());
    assertEquals(1000, settings.whenRunEndsSample());
  }

  @Test
  void aValueOutOfBoundsIsRefusedNamingTheSetting() {
    IllegalArgumentException zero =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                VerifySettings.fromConfig(
                    ConfigFactory.parseMap(Map.of("fencekeeper.verify.max-in-flight", 0))));
    assertTrue(zero.getMessage().contains("fencekeeper.verify.max-in-flight"), zero.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () ->
            VerifySettings.fromConfig(
                ConfigFactory.parseMap(Map.of("fencekeeper.verify.checkpoint-every", 0))));
  }
}
