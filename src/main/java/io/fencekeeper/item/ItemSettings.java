package io.fencekeeper.item;

import java.time.Duration;

/**
 * The work item's limits, which protect it from absurd requests, and how many holders in a row may
 * vanish before an item is quarantined ({@code fencekeeper.item.quarantine-after-losses}; 0:
 * never).
 */
public record ItemSettings(Duration maxLease, int quarantineAfterLosses) {
  public ItemSettings {
    if (quarantineAfterLosses < 0 || quarantineAfterLosses > 1000) {
      throw new IllegalArgumentException(
          "quarantine-after-losses must be between 0 and 1000, got " + quarantineAfterLosses);
    }
  }

  public static ItemSettings defaults() {
    return new ItemSettings(Duration.ofHours(1), 2);
  }
}
