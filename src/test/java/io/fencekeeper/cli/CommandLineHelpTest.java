package io.fencekeeper.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Issue 25, item 9: every sub-command answers -h/--help with its usage and -V with the version. */
class CommandLineHelpTest {

  record Answer(int exit, String out, String err) {}

  static Answer execute(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine line = Main.commandLine();
    line.setOut(new PrintWriter(out, true));
    line.setErr(new PrintWriter(err, true));
    int exit = line.execute(args);
    return new Answer(exit, out.toString(), err.toString());
  }

  @Test
  void everySubCommandTakesHelpAndVersion() {
    List<String> names = List.copyOf(Main.commandLine().getSubcommands().keySet());
    assertTrue(names.containsAll(List.of("run", "serve", "status", "audit", "report")), "" + names);
    for (String name : names) {
      for (String help : List.of("-h", "--help")) {
        Answer answer = execute(name, help);
        assertEquals(0, answer.exit(), name + " " + help + ": " + answer.err());
        assertTrue(
            answer.out().startsWith("Usage: fencekeeper " + name),
            name + " " + help + ": " + answer.out() + answer.err());
        assertTrue(answer.out().contains("-h, --help"), answer.out());
        assertEquals("", answer.err(), name + " " + help);
      }
      for (String version : List.of("-V", "--version")) {
        Answer answer = execute(name, version);
        assertEquals(0, answer.exit(), name + " " + version + ": " + answer.err());
        assertEquals("fencekeeper 0.1.0", answer.out().strip(), name + " " + version);
      }
    }
  }

  @Test
  void statusHelpIsNotAnUnknownOption() {
    Answer answer = execute("status", "--help");
    assertTrue(answer.out().contains("--follow"), answer.out());
    assertTrue(!answer.err().contains("Unknown option"), answer.err());
  }
}
