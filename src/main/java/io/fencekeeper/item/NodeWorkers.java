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

  /** How the ids of the workers of the node at {@code nodeAddress} begin. */
  static String prefix(String nodeAddress) {
    return nodeAddress + "/w";
  }
}
