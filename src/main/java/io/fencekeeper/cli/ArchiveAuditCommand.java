package io.fencekeeper.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.archive.ArchiveManifest;
import io.fencekeeper.item.ItemId;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/**
 * {@code archive audit ITEM}: an archived item's journal as {@code audit ITEM} shows a live one,
 * from the archive of its run.
 */
@Command(name = "audit", description = "Show an archived item's audit trail.")
public final class ArchiveAuditCommand implements Callable<Integer> {

  @Parameters(
      index = "0",
      description = "item id, e.g. payment-reconciliation/2026-11-29/acct-1/c-1")
  String itemId;

  @Mixin ArchiveDirOptions archive;

  @Override
  public Integer call() throws Exception {
    PrintStream out = System.out;
    PrintStream err = System.err;
    ItemId id;
    try {
      id = ItemId.parse(itemId);
    } catch (IllegalArgumentException e) {
      err.println("not an item id: job/businessDate/accountId/cursor");
      return 64;
    }
    Optional<ArchiveManifest> found = archive.verified(id.runId(), err);
    if (found.isEmpty()) {
      return 1;
    }
    List<JsonNode> events = new ArrayList<>();
    boolean[] present = new boolean[1];
    archive
        .reader()
        .lines(
            found.get(),
            line -> {
              if (!line.path("itemId").asText().equals(id.value())) {
                return;
              }
              if (line.path("kind").asText().equals("item")) {
                present[0] = true;
              } else if (line.path("kind").asText().equals("event")) {
                events.add(line.path("event"));
              }
            });
    if (!present[0]) {
      err.println("run " + id.runId() + " has no item " + id.value() + " in its archive");
      return 1;
    }
    if (archive.json) {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("itemId", id.value());
      body.put("events", events);
      out.println(archive.mapper.writerWithDefaultPrettyPrinter().writeValueAsString(body));
      return 0;
    }
    out.println(id.value());
    for (JsonNode event : events) {
      AuditCommand.printEvent(out, event, archive.mapper);
    }
    return 0;
  }
}
