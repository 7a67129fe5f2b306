package io.fencekeeper.item;

/**
 * The ids of a node's own workers, {@code {node address}/w{n}}: the worker pool names its workers
 * so, and the items read the holder's node from them ("Lost holders count" in docs/design.md), so
 * both take the form from here.
 */
public final class NodeWorkers {

  private NodeWorkers() {}

  /** The id of worker {@code n} of the node at {@code nodeAddress}. */
  public static String id(String nodeAddress, long n) {
    return prefix(nodeAddress) + n;
  }

  /**
   * The node a worker id names: {@code {node address}} of a node's own worker, the whole id of any
   * other (a lease API worker is its own node). A loss cohort is named by it (docs/design.md, "Lost
   * together, kept apart").
   */
  public static String nodeOf(String workerId) {
    int slash = workerId.lastIndexOf("/w");
    if (slash <= 0 || slash + 2 == workerId.length()) {
      return workerId;
    }
    for (int i = slash + 2; i < workerId.length(); i++) {
      if (!Character.isDigit(workerId.charAt(i))) {
        return workerId;
      }
    }
    return workerId.substring(0, slash);
  }

  /** How the ids of the workers of the node at {@code nodeAddress} begin. */
  static String prefix(String nodeAddress) {
    return nodeAddress + "/w";
  }
}
