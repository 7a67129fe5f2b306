package io.fencekeeper.run.scope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.cbor.databind.CBORMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The scope's JSON shapes are a public contract (docs/design.md, "HTTP API"): a type name, never a
 * class.
 */
class ScopeJsonTest {

  private final ObjectMapper json = new ObjectMapper();
  private final ObjectMapper cbor = new CBORMapper();

  private final Scope inline =
      new Scope.Inline(List.of(new AccountCursor("a-1", "c-1"), new AccountCursor("a-2", "c-2")));
  private final Scope csv = new Scope.Csv("examples/accounts.csv");
  private final Scope sql = new Scope.Sql("select account_id, cursor from accounts");

  @Test
  void inlineScopeHasTheDocumentedShape() throws Exception {
    String text =
        "{\"type\":\"inline\",\"accounts\":[{\"accountId\":\"a-1\",\"cursor\":\"c-1\"},"
            + "{\"accountId\":\"a-2\",\"cursor\":\"c-2\"}]}";

    assertEquals(json.readTree(text), json.readTree(json.writeValueAsString(inline)));
    assertEquals(inline, json.readValue(text, Scope.class));
  }

  @Test
  void csvAndSqlScopesHaveTheDocumentedShape() throws Exception {
    String csvText = "{\"type\":\"csv\",\"path\":\"examples/accounts.csv\"}";
    String sqlText = "{\"type\":\"sql\",\"query\":\"select account_id, cursor from accounts\"}";

    assertEquals(json.readTree(csvText), json.readTree(json.writeValueAsString(csv)));
    assertEquals(json.readTree(sqlText), json.readTree(json.writeValueAsString(sql)));
    assertEquals(csv, json.readValue(csvText, Scope.class));
    assertEquals(sql, json.readValue(sqlText, Scope.class));
  }

  @Test
  void everyScopeRoundTripsThroughCbor() throws Exception {
    for (Scope scope : List.of(inline, csv, sql)) {
      assertEquals(scope, cbor.readValue(cbor.writeValueAsBytes(scope), Scope.class));
    }
  }

  @Test
  void noClassNameReachesTheWire() throws Exception {
    JsonNode tree = json.readTree(json.writeValueAsString(inline));

    assertEquals("inline", tree.get("type").asText());
    assertTrue(!json.writeValueAsString(inline).contains("io.fencekeeper"));
  }

  @Test
  void unknownTypeIsRefusedWithTheKnownOnes() {
    JsonMappingException e =
        assertThrows(
            JsonMappingException.class,
            () -> json.readValue("{\"type\":\"xml\",\"path\":\"a\"}", Scope.class));

    assertTrue(e.getOriginalMessage().contains("'xml'"), e.getOriginalMessage());
    assertTrue(
        e.getOriginalMessage().contains("[csv, inline, sql, upload]"), e.getOriginalMessage());
  }

  @Test
  void invalidAccountInJsonIsRefusedNamingTheField() {
    JsonMappingException e =
        assertThrows(
            JsonMappingException.class,
            () ->
                json.readValue(
                    "{\"type\":\"inline\",\"accounts\":[{\"accountId\":\"a 1\",\"cursor\":\"c\"}]}",
                    Scope.class));

    assertTrue(e.getMessage().contains("accountId must be"), e.getMessage());
  }
}
