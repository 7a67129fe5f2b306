package io.fencekeeper.cli;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.sdk.provider.check.CheckAccount;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The accounts {@code provider-check} may touch: a CSV of {@code accountId,cursor} like a run's
 * scope (a header line {@code accountId,cursor} and lines starting with {@code #} are skipped), at
 * most {@value #MAX_ACCOUNTS}. A line that is not an account is refused by its number and the rule
 * it breaks, never echoed.
 */
final class SafeAccounts {

  static final int MAX_ACCOUNTS = 1000;

  private SafeAccounts() {}

  /** Why a file cannot be the list of safe accounts: one line. */
  static final class Refused extends Exception {
    Refused(String line) {
      super(line);
    }
  }

  static List<CheckAccount> read(Path file) throws Refused {
    List<CheckAccount> accounts = new ArrayList<>();
    List<Long> bad = new ArrayList<>();
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      long number = 0;
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        number++;
        String text = line.strip();
        if (text.isEmpty()
            || text.startsWith("#")
            || (number == 1 && text.equalsIgnoreCase("accountId,cursor"))) {
          continue;
        }
        String[] columns = text.split(",", -1);
        if (columns.length != 2
            || !ItemId.isSegment(columns[0].strip())
            || !ItemId.isSegment(columns[1].strip())) {
          bad.add(number);
          continue;
        }
        if (accounts.size() == MAX_ACCOUNTS) {
          throw new Refused(
              file + " names more than " + MAX_ACCOUNTS + " accounts: name a few safe ones");
        }
        accounts.add(new CheckAccount(columns[0].strip(), columns[1].strip()));
      }
    } catch (IOException e) {
      throw new Refused(file + " cannot be read (" + e.getClass().getSimpleName() + ")");
    }
    if (!bad.isEmpty()) {
      throw new Refused(
          file
              + ": line"
              + (bad.size() > 1 ? "s " : " ")
              + String.join(
                  ", ",
                  bad.subList(0, Math.min(bad.size(), 10)).stream().map(String::valueOf).toList())
              + (bad.size() > 10 ? " and more" : "")
              + " must be accountId,cursor, each "
              + ItemId.SEGMENT_RULE);
    }
    if (accounts.isEmpty()) {
      throw new Refused(file + " names no account");
    }
    return accounts;
  }
}
