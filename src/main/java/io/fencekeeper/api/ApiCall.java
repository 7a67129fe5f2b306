package io.fencekeeper.api;

import java.util.List;
import java.util.Map;

/**
 * One request as the endpoint handlers see it: the matched endpoint, its path parameters
 * (percent-decoded, one segment each), the query and the body bytes (already size-limited).
 */
record ApiCall(ApiEndpoint endpoint, List<String> params, Map<String, String> query, byte[] body) {

  String param(int index) {
    return params.get(index);
  }
}
