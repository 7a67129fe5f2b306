package io.fencekeeper.api.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonFactoryBuilder;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;

/**
 * The one JSON spelling of the API: ISO-8601 instants, no class names, strict input (unknown
 * properties, trailing tokens and keys given twice are refused), and no raw control character in
 * what it writes ({@link PrintableText}), so an answer, a report line or the CLI's output printed
 * to a terminal cannot drive it.
 */
public final class ApiJson {

  private ApiJson() {}

  public static ObjectMapper mapper() {
    return new ObjectMapper(
            new JsonFactoryBuilder()
                .characterEscapes(PrintableText.jsonEscapes())
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .build())
        .registerModule(new JavaTimeModule())
        .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
        .disable(SerializationFeature.WRITE_DURATIONS_AS_TIMESTAMPS)
        .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .setSerializationInclusion(JsonInclude.Include.ALWAYS);
  }
}
