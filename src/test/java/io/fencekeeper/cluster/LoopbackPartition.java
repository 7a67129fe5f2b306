package io.fencekeeper.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A network partition between processes on this machine, made with iptables on loopback: the
 * minority's node runs with its own group id ({@code setpriv --regid}, still root, so it reads the
 * same files), and the rules drop every packet between its cluster port and everybody else's. The
 * database and the provider stay reachable from both sides: the minority is cut from the cluster,
 * not from the world, which is when it could still try to write.
 *
 * <p>All rules of one test JVM live in one chain of its own, {@link #CHAIN}, jumped to from OUTPUT
 * with the comment {@link #COMMENT}, and its minority has a group of its own: the process-test
 * lanes run side by side (docs/testing.md), and two partition tests in two lanes must neither drop
 * each other's packets nor remove each other's rules (one shared chain did: a test starting in one
 * lane removed the cut of a test in another, whose minority then never became unreachable). {@link
 * #removeLeftovers()} removes this JVM's rules and those of test JVMs that are gone (a crashed
 * run), never a live one's; {@link #close()} removes this run's rules whatever happened.
 */
final class LoopbackPartition implements AutoCloseable {

  private static final long PID = ProcessHandle.current().pid();

  /** What every test JVM's comment starts with, followed by its pid. */
  static final String COMMENT_PREFIX = "fencekeeper-test-partition-";

  static final String CHAIN = "FK_TEST_PARTITION_" + PID;
  static final String COMMENT = COMMENT_PREFIX + PID;

  /**
   * The minority's group: no group of this machine, only a mark the owner match can see; one per
   * test JVM (pids below 2^22 on Linux, so no two live JVMs share one).
   */
  static final int MINORITY_GID = 47731 + (int) (PID % 1_000_000);

  private boolean installed;

  /** Whether iptables and setpriv are here and usable (root, a kernel with owner matching). */
  static boolean available() {
    return Files.isExecutable(Path.of("/usr/sbin/iptables"))
        && Files.isExecutable(Path.of("/usr/bin/setpriv"))
        && run(List.of("iptables", "-S", "OUTPUT")).exit() == 0;
  }

  /** The command prefix that starts a process in the minority's group. */
  static List<String> minorityPrefix() {
    return List.of("setpriv", "--regid", String.valueOf(MINORITY_GID), "--clear-groups");
  }

  /**
   * Removes this JVM's chain and its jump, and those an earlier test JVM that is gone left behind;
   * a live JVM's (another lane's partition test) stay.
   */
  static void removeLeftovers() {
    Pattern mine = Pattern.compile(Pattern.quote(COMMENT_PREFIX) + "(\\d+)");
    for (String line : run(List.of("iptables", "-S", "OUTPUT")).output().split("\n")) {
      Matcher m = mine.matcher(line);
      if (m.find()) {
        long pid = Long.parseLong(m.group(1));
        if (pid == PID || ProcessHandle.of(pid).isEmpty()) {
          remove(pid);
        }
      }
    }
    remove(PID);
  }

  private static void remove(long pid) {
    String chain = "FK_TEST_PARTITION_" + pid;
    // one jump per earlier install; -D fails once none is left
    while (run(jump("-D", COMMENT_PREFIX + pid, chain)).exit() == 0) {
      // removed one
    }
    run(List.of("iptables", "-F", chain));
    run(List.of("iptables", "-X", chain));
  }

  /**
   * Cuts the minority (processes of {@link #MINORITY_GID}, cluster port {@code minorityPort}) from
   * the cluster ports of everybody else: its packets to them, and anybody else's to it.
   */
  void cut(int minorityPort, List<Integer> otherPorts) {
    removeLeftovers();
    installed = true;
    check(run(List.of("iptables", "-N", CHAIN)));
    String others = otherPorts.stream().map(String::valueOf).collect(Collectors.joining(","));
    String gid = String.valueOf(MINORITY_GID);
    drop("-m", "owner", "--gid-owner", gid, "-m", "multiport", "--dports", others);
    drop("--dport", String.valueOf(minorityPort), "-m", "owner", "!", "--gid-owner", gid);
    check(run(jump("-I", COMMENT, CHAIN)));
  }

  /** The rules as iptables lists them, for the test's log. */
  String rules() {
    return run(List.of("iptables", "-S", CHAIN)).output().trim();
  }

  @Override
  public void close() {
    if (installed) {
      removeLeftovers();
      installed = false;
    }
  }

  /** A rule of the chain: TCP packets that {@code match} are dropped. */
  private static void drop(String... match) {
    List<String> rule = new ArrayList<>(List.of("iptables", "-A", CHAIN, "-p", "tcp"));
    rule.addAll(List.of(match));
    rule.addAll(List.of("-m", "comment", "--comment", COMMENT, "-j", "DROP"));
    check(run(rule));
  }

  private static List<String> jump(String action, String comment, String chain) {
    return List.of(
        "iptables", action, "OUTPUT", "-m", "comment", "--comment", comment, "-j", chain);
  }

  record Result(int exit, String output) {}

  private static void check(Result result) {
    if (result.exit() != 0) {
      throw new IllegalStateException("iptables failed: " + result.output());
    }
  }

  private static Result run(List<String> command) {
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        return new Result(-1, "timed out: " + command);
      }
      return new Result(process.exitValue(), output);
    } catch (IOException e) {
      return new Result(-1, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Result(-1, e.toString());
    }
  }
}
