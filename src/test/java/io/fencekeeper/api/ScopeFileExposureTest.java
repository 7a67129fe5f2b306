package io.fencekeeper.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, finding 2: a token holder must not read the server's files through a CSV scope. A path
 * outside the scope directory answers one and the same 400 whether the file exists or not, and no
 * refusal quotes what a file contains.
 */
class ScopeFileExposureTest {

  private final ApiTestNode api = ApiTestNode.get();

  private ApiTestNode.Answer createWithPath(String path) {
    return api.post(
        "/api/runs",
        "{\"job\":\""
            + ApiTestNode.newJob("exposure")
            + "\",\"businessDate\":\"2026-11-29\",\"deadline\":\""
            + ApiTestNode.DEADLINE
            + "\",\"scope\":{\"type\":\"csv\",\"path\":\""
            + path
            + "\"}}");
  }

  private Path scopeDir() throws Exception {
    Path dir = api.node.settings().dataDir().resolve("scopes");
    Files.createDirectories(dir);
    return dir;
  }

  private static void assertOutside(ApiTestNode.Answer answer) {
    assertEquals(400, answer.status(), answer.body());
    assertEquals("invalid_scope", answer.error(), answer.body());
    assertEquals("scope.path", answer.tree().path("field").asText(), answer.body());
    assertFalse(answer.body().contains("root:"), answer.body());
  }

  @Test
  void anAbsolutePathOutsideTheScopeDirectoryIsRefusedWithoutReadingIt() {
    ApiTestNode.Answer passwd = createWithPath("/etc/passwd");
    ApiTestNode.Answer missing = createWithPath("/etc/no-such-file-" + System.nanoTime());

    assertOutside(passwd);
    assertOutside(missing);
    // the answer must not tell an existing file from a missing one
    assertEquals(
        passwd.tree().path("message").asText().replace("/etc/passwd", "X"),
        missing.tree().path("message").asText().replaceAll("/etc/no-such-file-[0-9]+", "X"));
  }

  @Test
  void dotDotAndSymlinksCannotLeaveTheScopeDirectory() throws Exception {
    Path dir = scopeDir();
    Path link = dir.resolve("passwd-link-" + System.nanoTime() + ".csv");
    Files.createSymbolicLink(link, Path.of("/etc/passwd"));

    assertOutside(createWithPath("../../../../../../../../etc/passwd"));
    assertOutside(createWithPath("sub/../../../../../../../../etc/passwd"));
    assertOutside(createWithPath(link.getFileName().toString()));
  }

  @Test
  void aBadFileInsideTheScopeDirectoryIsNamedByLineAndRuleNeverByContent() throws Exception {
    Path dir = scopeDir();
    String name = "secret-" + System.nanoTime() + ".csv";
    Files.writeString(dir.resolve(name), "root:x:0:0:root:/root:/bin/bash\n");
    String rows = "rows-" + System.nanoTime() + ".csv";
    Files.writeString(
        dir.resolve(rows),
        "accountId,cursor\nacct-1,c-1\nroot:x:0:0 root,c-2\nacct-1,c-1\nacct-3,/bin/bash\n");

    ApiTestNode.Answer header = createWithPath(name);
    ApiTestNode.Answer body = createWithPath(rows);

    assertEquals(422, header.status(), header.body());
    assertEquals("invalid_scope", header.error());
    assertTrue(header.body().contains("line 1"), header.body());
    assertFalse(header.body().contains("root"), header.body());
    assertEquals(422, body.status(), body.body());
    assertTrue(body.body().contains("line 3, column 1"), body.body());
    assertTrue(body.body().contains("line 4: duplicate of line 2"), body.body());
    assertTrue(body.body().contains("line 5, column 2"), body.body());
    assertFalse(body.body().contains("root"), body.body());
    assertFalse(body.body().contains("acct-1"), body.body());
    assertFalse(body.body().contains("bin/bash"), body.body());
  }

  @Test
  void aRelativePathResolvesInsideTheScopeDirectory() throws Exception {
    String name = "ok-" + System.nanoTime() + ".csv";
    Files.writeString(scopeDir().resolve(name), "accountId,cursor\nacct-1,c-1\nacct-2,c-1\n");

    ApiTestNode.Answer created = createWithPath(name);

    assertEquals(201, created.status(), created.body());
    assertEquals(2, created.tree().path("counts").path("total").asInt());
  }
}
