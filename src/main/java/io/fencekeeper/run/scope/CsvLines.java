package io.fencekeeper.run.scope;

import java.io.IOException;
import java.io.Reader;

/**
 * The lines of a CSV scope, each at most {@link #MAX_LINE} characters: a longer line is reported as
 * too long and skipped without being held, so an upload without line breaks costs no memory. A line
 * ends at {@code \n}; a {@code \r} before it is dropped.
 */
final class CsvLines {

  /** Two 128-character ids, quotes, a comma and generous whitespace. */
  static final int MAX_LINE = 1024;

  /** Returned for a line longer than {@link #MAX_LINE}. */
  static final String TOO_LONG = new String("\u0000too long");

  private final Reader in;
  private final char[] buffer = new char[8192];
  private final StringBuilder line = new StringBuilder(128);
  private int position;
  private int limit;
  private long number;

  CsvLines(Reader in) {
    this.in = in;
  }

  /** The number of the line last returned, from 1. */
  long number() {
    return number;
  }

  /** The next line without its terminator, {@link #TOO_LONG} (compare by identity), or null. */
  String next() throws IOException {
    line.setLength(0);
    boolean tooLong = false;
    boolean any = false;
    while (true) {
      if (position == limit) {
        limit = in.read(buffer, 0, buffer.length);
        position = 0;
        if (limit <= 0) {
          limit = 0;
          if (!any) {
            return null;
          }
          break;
        }
      }
      any = true;
      char c = buffer[position++];
      if (c == '\n') {
        break;
      }
      if (!tooLong) {
        if (line.length() == MAX_LINE + 1) { // + 1: a \r may still come off
          tooLong = true;
          line.setLength(0);
        } else {
          line.append(c);
        }
      }
    }
    number++;
    if (tooLong) {
      return TOO_LONG;
    }
    int end = line.length();
    if (end > 0 && line.charAt(end - 1) == '\r') {
      line.setLength(end - 1);
    }
    return line.toString();
  }
}
