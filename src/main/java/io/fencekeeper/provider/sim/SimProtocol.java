package io.fencekeeper.provider.sim;

import io.fencekeeper.provider.http.HttpProtocol;

/**
 * The protocol version the sim answers as (docs/provider-protocol.md, "Compatibility"): 1.1 in
 * full, or a 1.0 server, for testing the two versions against each other for real. As 1.0 it sends
 * no {@code Fencekeeper-Protocol} header, ignores {@code Cleanup-Deadline}, plans without a
 * currency, and compares a repeated key's whole body rather than the effect's identity.
 */
public enum SimProtocol {
  V1_0(HttpProtocol.VERSION_1_0),
  V1_1(HttpProtocol.VERSION_1_1);

  private final String version;

  SimProtocol(String version) {
    this.version = version;
  }

  /** {@code 1.0} or {@code 1.1}. */
  public String version() {
    return version;
  }

  /** {@code 1.0} or {@code 1.1}; anything else is refused, naming what is accepted. */
  public static SimProtocol parse(String value) {
    for (SimProtocol protocol : values()) {
      if (protocol.version.equals(value == null ? null : value.trim())) {
        return protocol;
      }
    }
    throw new IllegalArgumentException("protocol must be 1.0 or 1.1");
  }
}
