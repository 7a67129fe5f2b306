package io.fencekeeper.verify;

import io.fencekeeper.CborSerializable;

/** Items checked, by outcome. {@code resolved} splits into applied and none for the report. */
public record Tally(
    long agree,
    long missing,
    long different,
    long unexpectedEffect,
    long resolvedApplied,
    long resolvedNone)
    implements CborSerializable {

  public static final Tally NONE = new Tally(0, 0, 0, 0, 0, 0);

  public Tally plus(Tally other) {
    return new Tally(
        agree + other.agree,
        missing + other.missing,
        different + other.different,
        unexpectedEffect + other.unexpectedEffect,
        resolvedApplied + other.resolvedApplied,
        resolvedNone + other.resolvedNone);
  }

  /** This tally and one more item. */
  public Tally plus(Finding finding) {
    return plus(
        switch (finding.outcome()) {
          case AGREE -> new Tally(1, 0, 0, 0, 0, 0);
          case MISSING -> new Tally(0, 1, 0, 0, 0, 0);
          case DIFFERENT -> new Tally(0, 0, 1, 0, 0, 0);
          case UNEXPECTED_EFFECT -> new Tally(0, 0, 0, 1, 0, 0);
          case RESOLVED ->
              finding.providerFound() ? new Tally(0, 0, 0, 0, 1, 0) : new Tally(0, 0, 0, 0, 0, 1);
        });
  }

  public long resolved() {
    return resolvedApplied + resolvedNone;
  }

  /** Items where the journal and the provider disagree. */
  public long discrepancies() {
    return missing + different + unexpectedEffect;
  }

  public long checked() {
    return agree + discrepancies() + resolved();
  }
}
