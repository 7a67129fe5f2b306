package io.fencekeeper;

/**
 * Marker for every message, event and snapshot that crosses the wire or lands in the journal. Bound
 * to Jackson CBOR in {@code conf/}; Java serialization is switched off, so a type that forgets this
 * marker fails loudly instead of silently falling back.
 */
public interface CborSerializable {}
