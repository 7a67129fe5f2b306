package io.fencekeeper.run.scope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SqlSourceTest {

  @Test
  void absentOrBlankUrlMeansNoSqlScopes() {
    assertEquals(Optional.empty(), SqlSource.fromConfig(ConfigFactory.empty()));
    assertEquals(
        Optional.empty(),
        SqlSource.fromConfig(ConfigFactory.parseString("fencekeeper.scope-sql.url = \"\"")));
  }

  @Test
  void configuredSourceIsReadAndItsPasswordNeverPrinted() {
    Optional<SqlSource> source =
        SqlSource.fromConfig(
            ConfigFactory.parseString(
                "fencekeeper.scope-sql { url = \"jdbc:postgresql://support/db\", user = reader,"
                    + " password = s3cret }"));

    assertEquals(
        Optional.of(new SqlSource("jdbc:postgresql://support/db", "reader", "s3cret")), source);
    assertTrue(!source.orElseThrow().toString().contains("s3cret"));
  }
}
