package io.fencekeeper.architecture;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import org.junit.jupiter.api.Test;

/**
 * The package layers of docs/design.md ("Code map"): item ← provider ← worker ← dispatch ← run ←
 * verify, archive ← node ← api ← cli, with bench beside api (it may read api, as a client), and the
 * root package and journal beneath them all; localdb (the developers' PostgreSQL, its own jar)
 * imports nothing of the project and only the bench uses it; sdk (the public libraries for teams'
 * own code: the provider plugin API, its checks and its test kit, each its own jar) imports nothing
 * of the project outside sdk and no framework, and any layer may use it. A lower layer that needs
 * something from a higher one gets it passed in; it never imports it.
 */
class LayeringTest {

  static final java.util.regex.Pattern TEST_CLASS =
      java.util.regex.Pattern.compile(".*Test(\\$.*)?\\.class");

  /**
   * The product's classes, the bench's, localdb's and the SDK's test kit (compiled with the tests),
   * not the tests themselves.
   */
  static final ImportOption PRODUCT_AND_BENCH =
      (Location location) ->
          !location.contains("/test-classes/")
              || ((location.contains("/io/fencekeeper/bench/")
                      || location.contains("/io/fencekeeper/localdb/")
                      || location.contains("/io/fencekeeper/sdk/"))
                  && !location.matches(TEST_CLASS));

  static final JavaClasses CLASSES =
      new ClassFileImporter().withImportOption(PRODUCT_AND_BENCH).importPackages("io.fencekeeper");

  @Test
  void layersOnlyImportDownwards() {
    layeredArchitecture()
        .consideringOnlyDependenciesInLayers()
        .layer("base")
        .definedBy("io.fencekeeper")
        .layer("journal")
        .definedBy("io.fencekeeper.journal..")
        .layer("item")
        .definedBy("io.fencekeeper.item..")
        .layer("provider")
        .definedBy("io.fencekeeper.provider..")
        .layer("worker")
        .definedBy("io.fencekeeper.worker..")
        .layer("dispatch")
        .definedBy("io.fencekeeper.dispatch..")
        .layer("run")
        .definedBy("io.fencekeeper.run..")
        .layer("verify")
        .definedBy("io.fencekeeper.verify..")
        .layer("archive")
        .definedBy("io.fencekeeper.archive..")
        .layer("node")
        .definedBy("io.fencekeeper.node..")
        .layer("api")
        .definedBy("io.fencekeeper.api..")
        .layer("bench")
        .definedBy("io.fencekeeper.bench..")
        .layer("cli")
        .definedBy("io.fencekeeper.cli..")
        .layer("localdb")
        .definedBy("io.fencekeeper.localdb..")
        .whereLayer("localdb")
        .mayOnlyBeAccessedByLayers("bench")
        .whereLayer("cli")
        .mayNotBeAccessedByAnyLayer()
        .whereLayer("bench")
        .mayNotBeAccessedByAnyLayer()
        .whereLayer("api")
        .mayOnlyBeAccessedByLayers("cli", "bench")
        .whereLayer("node")
        .mayOnlyBeAccessedByLayers("api", "bench", "cli")
        .whereLayer("verify")
        .mayOnlyBeAccessedByLayers("node", "api", "bench", "cli")
        .whereLayer("archive")
        .mayOnlyBeAccessedByLayers("node", "api", "bench", "cli")
        .whereLayer("run")
        .mayOnlyBeAccessedByLayers("verify", "archive", "node", "api", "bench", "cli")
        .whereLayer("dispatch")
        .mayOnlyBeAccessedByLayers("run", "verify", "archive", "node", "api", "bench", "cli")
        .whereLayer("worker")
        .mayOnlyBeAccessedByLayers(
            "dispatch", "run", "verify", "archive", "node", "api", "bench", "cli")
        .whereLayer("provider")
        .mayOnlyBeAccessedByLayers(
            "worker", "dispatch", "run", "verify", "archive", "node", "api", "bench", "cli")
        .whereLayer("item")
        .mayOnlyBeAccessedByLayers(
            "provider",
            "worker",
            "dispatch",
            "run",
            "verify",
            "archive",
            "node",
            "api",
            "bench",
            "cli")
        .whereLayer("journal")
        .mayOnlyBeAccessedByLayers(
            "item",
            "provider",
            "worker",
            "dispatch",
            "run",
            "verify",
            "archive",
            "node",
            "api",
            "bench",
            "cli")
        .check(CLASSES);
  }

  /**
   * The provider SDK is what a plugin compiles against (docs/design.md, "Code map"): its jars carry
   * nothing of the product and no framework, so a plugin never links to the node's Pekko, Jackson
   * or config (the worker client, a program of the team's own, may use Jackson: the rule below).
   * Its API and checks (the jar a plugin depends on) need no JUnit either; the test kit does.
   */
  @Test
  void theProviderSdkDependsOnNothingOfTheProductNorOnAFramework() {
    com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses()
        .that()
        .resideInAPackage("io.fencekeeper.sdk.provider..")
        .should()
        .dependOnClassesThat(
            JavaClass.Predicates.resideInAPackage("io.fencekeeper..")
                .and(JavaClass.Predicates.resideOutsideOfPackage("io.fencekeeper.sdk..")))
        .orShould()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "org.apache.pekko..", "scala..", "com.typesafe..", "com.fasterxml..", "org.slf4j..")
        .check(CLASSES);
    com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses()
        .that()
        .resideInAnyPackage("io.fencekeeper.sdk.provider", "io.fencekeeper.sdk.provider.check")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("org.junit..", "org.opentest4j..")
        .check(CLASSES);
  }

  @Test
  void noPackagesDependOnEachOtherInACycle() {
    slices().matching("io.fencekeeper.(**)").should().beFreeOfCycles().check(CLASSES);
  }

  @Test
  void theRootPackageDependsOnNothingOfTheProject() {
    com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses()
        .that()
        .resideInAPackage("io.fencekeeper")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("io.fencekeeper.(*)..")
        .check(CLASSES);
  }

  /**
   * The SDK jars teams build on (the external worker client: docs/external-workers.md) stand alone:
   * nothing of the product, nor of Pekko, Scala or Typesafe's config; the product may use them,
   * never the reverse.
   */
  @Test
  void theSdkDependsOnNothingOfTheProductNorOfPekko() {
    com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses()
        .that()
        .resideInAPackage("io.fencekeeper.sdk..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "io.fencekeeper",
            "io.fencekeeper.api..",
            "io.fencekeeper.archive..",
            "io.fencekeeper.bench..",
            "io.fencekeeper.cli..",
            "io.fencekeeper.dispatch..",
            "io.fencekeeper.item..",
            "io.fencekeeper.journal..",
            "io.fencekeeper.localdb..",
            "io.fencekeeper.node..",
            "io.fencekeeper.provider..",
            "io.fencekeeper.run..",
            "io.fencekeeper.verify..",
            "io.fencekeeper.worker..",
            "org.apache.pekko..",
            "scala..",
            "com.typesafe..")
        .check(CLASSES);
  }
}
