package io.fencekeeper.run.scope;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

final class ScopeDigests {

  private ScopeDigests() {}

  static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}
