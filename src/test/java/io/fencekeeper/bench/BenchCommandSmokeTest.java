package io.fencekeeper.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bench runs end to end and reports what it measured; how fast is never asserted here. */
class BenchCommandSmokeTest {

  @TempDir Path dir;

  @Test
  void benchOnH2ReportsEveryItemDoneWithItsFullAuditTrail() throws Exception {
    Path json = dir.resolve("bench.json");
    int exit =
        BenchMain.commandLine()
            .execute(
                "--items=30",
                "--workers=4",
                "--warmup=10",
                "--databases=h2",
                "--scheduler-threads=2",
                "--work-dir=" + dir,
                "--json=" + json);
    assertEquals(0, exit);

    JsonNode section = new ObjectMapper().readTree(json.toFile()).get("throughput").get(0);
    JsonNode fencekeeper = section.get("fencekeeper");
    // the warm-up's 10 items are a run of their own: neither counted nor timed here
    assertEquals(30, fencekeeper.get("done").asInt());
    assertEquals("SUCCEEDED", fencekeeper.get("state").asText());
    // the claim, then the effect and the completion in one event: two journal rows per item
    assertEquals(2.0, fencekeeper.get("journalEventsPerItem").asDouble(), 0.0);
    assertEquals(30, section.get("dbScheduler").get(0).get("tasks").asInt());
    // the floor bench fails the command if any of its items is not claimed and completed
    assertEquals(30, section.get("pekkoFloor").get("items").asInt());
  }
}
