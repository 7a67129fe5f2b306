package io.fencekeeper.run.scope;

import io.fencekeeper.CborSerializable;

/**
 * What a complete read of a scope produced: the number of accounts and a SHA-256 (hex) over the
 * accounts in order. The digest depends only on the accounts, not on where they came from, so the
 * same accounts inline or in a CSV file digest the same, and a changed file digests differently:
 * run creation compares digests to tell "same run again" from "same id, different scope".
 */
public record ScopeSummary(long count, String digest) implements CborSerializable {}
