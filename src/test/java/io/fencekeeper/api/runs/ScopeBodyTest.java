package io.fencekeeper.api.runs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fencekeeper.api.http.ApiError;
import io.fencekeeper.api.http.ApiJson;
import io.fencekeeper.run.scope.AccountCursor;
import io.fencekeeper.run.scope.Scope;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The scope object of a create request, read key by key: what it accepts and how it refuses. */
class ScopeBodyTest {

  private final ObjectMapper json = ApiJson.mapper();

  private Scope read(String scope) throws Exception {
    return ScopeBody.read(json.readTree(scope));
  }

  private ApiError refused(String scope) {
    return assertThrows(ApiError.class, () -> read(scope));
  }

  @Test
  void eachTypeReadsItsOwnKeys() throws Exception {
    assertEquals(
        new Scope.Inline(List.of(new AccountCursor("a-1", "c-1"))),
        read("{\"type\":\"inline\",\"accounts\":[{\"accountId\":\"a-1\",\"cursor\":\"c-1\"}]}"));
    assertEquals(new Scope.Csv("in/a.csv"), read("{\"type\":\"csv\",\"path\":\"in/a.csv\"}"));
    assertEquals(new Scope.Sql("select 1"), read("{\"type\":\"sql\",\"query\":\"select 1\"}"));
  }

  @Test
  void aMissingOrUnknownTypeIs400AndAnythingElseIs422NamingTheField() {
    ApiError noType = refused("{\"accounts\":[]}");
    assertEquals(400, noType.status());
    assertEquals("scope.type", noType.body().get("field"));
    ApiError unknownType = refused("{\"type\":\"ftp\"}");
    assertEquals(400, unknownType.status());
    assertTrue(!unknownType.getMessage().contains("ftp"), unknownType.getMessage());

    ApiError extra = refused("{\"type\":\"csv\",\"path\":\"a.csv\",\"query\":\"x\"}");
    assertEquals(422, extra.status());
    assertEquals("invalid_scope", extra.code());
    assertEquals("scope", extra.body().get("field"));
    assertTrue(extra.getMessage().contains("unknown field 'query'"), extra.getMessage());
    assertEquals("scope.path", refused("{\"type\":\"csv\",\"path\":7}").body().get("field"));
    assertEquals("scope.query", refused("{\"type\":\"sql\"}").body().get("field"));
    assertEquals(
        "scope.accounts", refused("{\"type\":\"inline\",\"accounts\":{}}").body().get("field"));
  }

  @Test
  void everyBadAccountIsCountedAndTheFirstTwentyListed() {
    StringBuilder accounts = new StringBuilder();
    for (int i = 0; i < 25; i++) {
      accounts
          .append(i > 0 ? "," : "")
          .append("{\"accountId\":\"bad id ")
          .append(i)
          .append("\",\"cursor\":\"c\"}");
    }
    ApiError error = refused("{\"type\":\"inline\",\"accounts\":[" + accounts + "]}");
    assertEquals(422, error.status());
    assertEquals("scope.accounts[0].accountId", error.body().get("field"));
    List<?> problems = assertInstanceOf(List.class, error.body().get("problems"));
    assertEquals(ScopeBody.REPORTED_PROBLEMS, problems.size());
    assertTrue(error.getMessage().startsWith("the inline scope has 25 invalid entries:"));
    assertTrue(error.getMessage().endsWith("... and 5 more"), error.getMessage());
    assertTrue(!error.getMessage().contains("bad id"), error.getMessage());
  }
}
