package io.fencekeeper.api;

import java.util.List;
import java.util.Map;

/**
 * One request as the endpoint handlers see it: the matched endpoint, its path parameters
 * (percent-decoded, one segment each), the query, the body bytes (already size-limited) and the
 * Authorization header as presented (empty when none).
 */
record ApiCall(
    ApiEndpoint endpoint,
    List<String> params,
    Map<String, String> query,
    byte[] body,
    String authorization) {

  String param(int index) {
    return params.get(index);
  }
}
