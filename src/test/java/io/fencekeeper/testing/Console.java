package io.fencekeeper.testing;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.function.IntSupplier;

/** A command run in this JVM with its standard output and error captured. */
public record Console(int exit, String out, String err) {

  /** Runs {@code command} (it answers its exit code) while this JVM's output is captured. */
  public static synchronized Console capture(IntSupplier command) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream savedOut = System.out;
    PrintStream savedErr = System.err;
    int exit;
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      exit = command.getAsInt();
    } finally {
      System.setOut(savedOut);
      System.setErr(savedErr);
    }
    return new Console(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }
}
