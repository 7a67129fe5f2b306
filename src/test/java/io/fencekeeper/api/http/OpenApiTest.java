package io.fencekeeper.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fencekeeper.api.ops.OpsEndpoints;
import java.util.Iterator;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** openapi.yaml describes exactly the routes of {@link ApiEndpoint}, the table the router uses. */
class OpenApiTest {

  @Test
  void theDocumentDescribesEveryRouteAndNoOther() throws Exception {
    JsonNode doc = new ObjectMapper(new YAMLFactory()).readTree(OpsEndpoints.openApiText());
    assertEquals("3", doc.path("openapi").asText().substring(0, 1));
    Set<String> described = new TreeSet<>();
    Iterator<String> paths = doc.path("paths").fieldNames();
    while (paths.hasNext()) {
      String path = paths.next();
      Iterator<String> keys = doc.path("paths").path(path).fieldNames();
      while (keys.hasNext()) {
        String key = keys.next();
        if (Set.of("get", "post", "put", "delete", "patch").contains(key)) {
          described.add(key.toUpperCase() + " " + path);
        }
      }
    }
    Set<String> routed = new TreeSet<>();
    for (ApiEndpoint endpoint : ApiEndpoint.values()) {
      routed.add(endpoint.method() + " " + endpoint.path());
    }
    assertEquals(routed, described);
  }

  /**
   * Issue 25, item 4: the codes a request that cannot be parsed gets (414 uri_too_long, 431
   * headers_too_large, ...) and the stream refusal are among the documented error codes.
   */
  @Test
  void theErrorCodesOfUnparseableRequestsAreDocumented() throws Exception {
    JsonNode doc = new ObjectMapper(new YAMLFactory()).readTree(OpsEndpoints.openApiText());
    Set<String> documented = new TreeSet<>();
    doc.path("components")
        .path("schemas")
        .path("Error")
        .path("properties")
        .path("error")
        .path("enum")
        .forEach(code -> documented.add(code.asText()));
    Set<String> answered = new TreeSet<>(ParsingErrors.CODES.values());
    answered.addAll(Set.of("too_many_streams", "invalid_scope", "malformed_json"));
    answered.removeAll(documented);
    assertEquals(Set.of(), answered, "codes the API answers but openapi.yaml does not list");
    assertEquals("uri_too_long", ParsingErrors.CODES.get(414));
    assertEquals("headers_too_large", ParsingErrors.CODES.get(431));
  }

  /**
   * The node asks for the token on every call, reads included, once it has one ({@link ApiAuth}):
   * the document says so for every operation (the document-wide requirement, or its own), and only
   * GET /metrics may also go without (from the node's own machine).
   */
  @Test
  void everyRouteDeclaresTheBearerSchemeAsTheNodeEnforcesIt() throws Exception {
    JsonNode doc = new ObjectMapper(new YAMLFactory()).readTree(OpsEndpoints.openApiText());
    for (ApiEndpoint endpoint : ApiEndpoint.values()) {
      JsonNode operation =
          doc.path("paths").path(endpoint.path()).path(endpoint.method().toLowerCase());
      JsonNode security =
          operation.has("security") ? operation.get("security") : doc.get("security");
      Set<String> alternatives = new TreeSet<>();
      security.forEach(requirement -> alternatives.add(requirement.toString()));
      Set<String> expected =
          endpoint == ApiEndpoint.METRICS
              ? Set.of("{\"bearer\":[]}", "{}")
              : Set.of("{\"bearer\":[]}");
      assertEquals(expected, alternatives, endpoint + " security declaration vs the node");
    }
  }
}
