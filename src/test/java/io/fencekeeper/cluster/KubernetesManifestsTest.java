package io.fencekeeper.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.typesafe.config.Config;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.CrossVersionObjectReference;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HPAScalingPolicy;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HPAScalingRules;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.autoscaling.v2.MetricSpec;
import io.fabric8.kubernetes.api.model.autoscaling.v2.MetricTarget;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import io.fencekeeper.node.NodeConfig;
import io.fencekeeper.node.PartitionTimings;
import java.io.IOException;
import java.lang.reflect.Method;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every manifest of deploy/kubernetes, read into the Kubernetes API's own types (fabric8's model:
 * an unknown or misplaced field fails, a wrong type fails), and what issue 26 asks of them: no
 * literal secret, a non-root pod on a read-only root filesystem, probes on Pekko Management's
 * health checks, a disruption budget, RBAC on pods and leases only, and bootstrap, lease and drain
 * settings that agree with conf/kubernetes.conf; and issue 39's autoscaler: replicas = the nodes
 * wanted within the fleet's bounds, a scale-down that lets each node drain before the next. Nothing
 * here ran on a real Kubernetes.
 */
class KubernetesManifestsTest {

  static final Path DEPLOY = Path.of("deploy/kubernetes");
  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  /** apiVersion/kind to the API type it must read into. */
  static final Map<String, Class<? extends HasMetadata>> TYPES =
      Map.ofEntries(
          Map.entry("v1/Namespace", Namespace.class),
          Map.entry("v1/ServiceAccount", ServiceAccount.class),
          Map.entry("v1/ConfigMap", ConfigMap.class),
          Map.entry("v1/Service", Service.class),
          Map.entry("apps/v1/Deployment", Deployment.class),
          Map.entry("policy/v1/PodDisruptionBudget", PodDisruptionBudget.class),
          Map.entry("rbac.authorization.k8s.io/v1/Role", Role.class),
          Map.entry("rbac.authorization.k8s.io/v1/RoleBinding", RoleBinding.class),
          Map.entry("networking.k8s.io/v1/NetworkPolicy", NetworkPolicy.class),
          Map.entry("monitoring.coreos.com/v1/ServiceMonitor", ServiceMonitor.class),
          Map.entry("autoscaling/v2/HorizontalPodAutoscaler", HorizontalPodAutoscaler.class));

  static final Path AUTOSCALER = DEPLOY.resolve("components/autoscaler");

  /** Not a manifest: the Prometheus adapter's Helm values, the rule that serves the metric. */
  static final Path ADAPTER_VALUES = AUTOSCALER.resolve("prometheus-adapter-values.yaml");

  static final String NODES_WANTED = "fencekeeper_fleet_nodes_wanted";

  /**
   * The HPA leaves the replicas alone while wanted/current is within 10% of 1 (the controller
   * manager's --horizontal-pod-autoscaler-tolerance, 0.1 by default).
   */
  static final double HPA_TOLERANCE = 0.1;

  /**
   * Connections a PostgreSQL of default settings admits from the nodes: max_connections 100 less
   * superuser_reserved_connections 3.
   */
  static final int POSTGRES_DEFAULT_CONNECTIONS = 97;

  static final Pattern SECRET_NAME = Pattern.compile("(?i).*(token|password|secret|key).*");

  @Test
  void everyManifestReadsIntoTheApiTypesWithNoUnknownField() throws Exception {
    List<HasMetadata> all = load();
    assertTrue(all.size() >= 11, "every manifest, the component's included: " + all.size());
    for (HasMetadata object : all) {
      List<String> unknown = new ArrayList<>();
      unknownFields(object, object.getKind(), unknown);
      assertEquals(List.of(), unknown, object.getKind() + " " + object.getMetadata().getName());
    }
    // the check itself catches a misspelt field, at any depth
    List<String> unknown = new ArrayList<>();
    unknownFields(
        read(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replica: 3\n"
                + "  template:\n    spec:\n      containers:\n        - name: c\n"
                + "          readinesProbe: {}\n"),
        "Deployment",
        unknown);
    assertEquals(2, unknown.size(), unknown.toString());
    assertTrue(unknown.toString().contains("replica") && unknown.toString().contains("readines"));
  }

  @Test
  void noSecretIsWrittenDownAnywhere() throws Exception {
    List<HasMetadata> all = load();
    assertTrue(
        all.stream().noneMatch(o -> o.getKind().equals("Secret")), "the Secret is the operator's");
    for (EnvVar env : container().getEnv()) {
      if (SECRET_NAME.matcher(env.getName()).matches()) {
        assertNull(env.getValue(), env.getName() + " has a literal value");
        assertEquals(
            "fencekeeper-secrets",
            env.getValueFrom().getSecretKeyRef().getName(),
            env.getName() + " comes from the Secret");
      }
    }
    assertNotNull(secretRef("FENCEKEEPER_API_TOKEN"));
    assertNotNull(secretRef("FENCEKEEPER_DB_PASSWORD"));
    for (String key : configMap().getData().keySet()) {
      assertFalse(SECRET_NAME.matcher(key).matches(), key + " belongs in the Secret");
    }
    ServiceMonitor monitor = one(ServiceMonitor.class);
    assertEquals(
        "api-read-token",
        monitor.getSpec().getEndpoints().get(0).getBearerTokenSecret().getKey(),
        "Prometheus reads with the read-only token");
  }

  @Test
  void thePodRunsAsTheImagesUserOnAReadOnlyRootWithItsHeapInsideItsLimit() throws Exception {
    PodSpec pod = deployment().getSpec().getTemplate().getSpec();
    Matcher uid = Pattern.compile("--uid (\\d+)").matcher(Files.readString(Path.of("Dockerfile")));
    assertTrue(uid.find(), "the Dockerfile names its user's uid");
    assertTrue(pod.getSecurityContext().getRunAsNonRoot());
    assertEquals(Long.parseLong(uid.group(1)), pod.getSecurityContext().getRunAsUser());
    Container container = container();
    assertTrue(container.getSecurityContext().getReadOnlyRootFilesystem());
    assertFalse(container.getSecurityContext().getAllowPrivilegeEscalation());
    assertEquals(List.of("ALL"), container.getSecurityContext().getCapabilities().getDrop());
    Set<String> mounts = new TreeSet<>();
    container.getVolumeMounts().forEach(m -> mounts.add(m.getMountPath()));
    assertTrue(mounts.contains(configMap().getData().get("FENCEKEEPER_DATA_DIR")), "data volume");
    assertTrue(mounts.contains("/tmp"), "the JVM's temporary files: " + mounts);
    assertNotNull(container.getResources().getRequests().get("memory"));
    assertNotNull(container.getResources().getLimits().get("memory"));
    String jvm = env("JAVA_TOOL_OPTIONS").getValue();
    assertTrue(jvm.contains("-XX:MaxRAMPercentage="), jvm);
    assertFalse(jvm.contains("-Xmx"), "a fixed heap would ignore the limit: " + jvm);
    // the manifest replaces the image's options, so it names the image's AOT cache again
    Matcher cache =
        Pattern.compile("-XX:AOTCache=(\\S+?)\"?$", Pattern.MULTILINE)
            .matcher(Files.readString(Path.of("Dockerfile")));
    assertTrue(cache.find(), "the Dockerfile's JAVA_TOOL_OPTIONS name the cache");
    assertTrue(List.of(jvm.split(" ")).contains("-XX:AOTCache=" + cache.group(1)), jvm);
  }

  @Test
  void probesAskPekkoManagementsHealthChecksOnItsPort() throws Exception {
    Config conf = kubernetesConf();
    Container container = container();
    ContainerPort management = port(container, "management");
    assertEquals(conf.getInt("pekko.management.http.port"), management.getContainerPort());
    String ready = "/" + conf.getString("pekko.management.health-checks.readiness-path");
    String alive = "/" + conf.getString("pekko.management.health-checks.liveness-path");
    assertTrue(
        conf.hasPath("pekko.management.health-checks.readiness-checks.fencekeeper-journal"),
        "readiness includes the journal check");
    assertProbe(container.getReadinessProbe(), ready);
    assertProbe(container.getLivenessProbe(), alive);
    assertProbe(container.getStartupProbe(), alive);
  }

  @Test
  void aDisruptionOrAnUpdateTakesOneNodeAtATime() throws Exception {
    PodDisruptionBudget pdb = one(PodDisruptionBudget.class);
    assertEquals(1, pdb.getSpec().getMaxUnavailable().getIntVal());
    Map<String, String> podLabels = deployment().getSpec().getTemplate().getMetadata().getLabels();
    assertTrue(
        podLabels.entrySet().containsAll(pdb.getSpec().getSelector().getMatchLabels().entrySet()));
    var rolling = deployment().getSpec().getStrategy().getRollingUpdate();
    assertEquals(0, rolling.getMaxUnavailable().getIntVal(), "a new node is Up before one leaves");
    assertEquals(1, rolling.getMaxSurge().getIntVal());
  }

  @Test
  void rbacReadsPodsAndHoldsTheResolversLeaseAndNothingElse() throws Exception {
    List<Role> roles = all(Role.class);
    assertEquals(1, roles.size());
    assertTrue(
        load().stream().noneMatch(o -> o.getKind().startsWith("Cluster")), "no cluster role");
    Set<String> resources = new TreeSet<>();
    for (PolicyRule rule : roles.get(0).getRules()) {
      resources.addAll(rule.getResources());
      if (rule.getResources().contains("pods")) {
        assertEquals(List.of(""), rule.getApiGroups());
        assertTrue(Set.of("get", "watch", "list").containsAll(rule.getVerbs()), rule.toString());
      } else {
        assertEquals(List.of("coordination.k8s.io"), rule.getApiGroups());
        assertTrue(Set.of("get", "update", "create").containsAll(rule.getVerbs()), rule.toString());
        if (!rule.getVerbs().equals(List.of("create"))) {
          String lease =
              kubernetesConf()
                  .getString("pekko.cluster.split-brain-resolver.lease-majority.lease-name");
          assertEquals(List.of(lease), rule.getResourceNames(), "only the resolver's lease");
        }
      }
    }
    assertEquals(Set.of("leases", "pods"), resources);
    RoleBinding binding = one(RoleBinding.class);
    assertEquals(roles.get(0).getMetadata().getName(), binding.getRoleRef().getName());
    String account = one(ServiceAccount.class).getMetadata().getName();
    assertEquals(account, binding.getSubjects().get(0).getName());
    String namespace =
        YAML.readTree(DEPLOY.resolve("kustomization.yaml").toFile()).path("namespace").asText();
    assertEquals(namespace, binding.getSubjects().get(0).getNamespace(), "the pods' namespace");
    assertEquals(account, deployment().getSpec().getTemplate().getSpec().getServiceAccountName());
  }

  @Test
  void bootstrapAndTheResolversLeaseAgreeWithConfAndTheInequalityHolds() throws Exception {
    Config conf = kubernetesConf();
    String discovery = "pekko.management.cluster.bootstrap.contact-point-discovery";
    assertTrue(conf.getBoolean("fencekeeper.cluster-bootstrap"));
    assertEquals("", conf.getString("fencekeeper.seed-nodes"), "no seed nodes");
    assertTrue(container().getEnv().stream().noneMatch(e -> e.getName().contains("SEED")));
    assertFalse(configMap().getData().keySet().stream().anyMatch(k -> k.contains("SEED")));
    assertEquals("kubernetes-api", conf.getString(discovery + ".discovery-method"));
    assertEquals(
        deployment().getSpec().getTemplate().getMetadata().getLabels().get("app"),
        conf.getString(discovery + ".service-name"));
    assertEquals("app=%s", conf.getString("pekko.discovery.kubernetes-api.pod-label-selector"));
    assertNotNull(port(container(), conf.getString(discovery + ".port-name")));
    assertEquals(
        (int) deployment().getSpec().getReplicas(),
        conf.getInt(discovery + ".required-contact-point-nr"),
        "a first start waits for every replica");

    assertEquals(
        "lease-majority", conf.getString("pekko.cluster.split-brain-resolver.active-strategy"));
    String lease =
        conf.getString("pekko.cluster.split-brain-resolver.lease-majority.lease-implementation");
    assertEquals(
        "org.apache.pekko.coordination.lease.kubernetes.NativeKubernetesLease",
        conf.getString(lease + ".lease-class"),
        "coordination.k8s.io leases, the ones the Role allows");
    PartitionTimings timings = PartitionTimings.of(conf).orElseThrow();
    assertEquals(List.of(), timings.violations());
    assertEquals(Duration.ofSeconds(25), timings.takeover());
    assertEquals(Duration.ofSeconds(30), timings.itemLease());

    // remoting and management: from the app's pods only
    NetworkPolicy policy =
        all(NetworkPolicy.class).stream()
            .filter(p -> p.getMetadata().getName().equals("fencekeeper"))
            .findFirst()
            .orElseThrow();
    boolean internalCovered = false;
    for (NetworkPolicyIngressRule rule : policy.getSpec().getIngress()) {
      Set<String> ports = new TreeSet<>();
      for (NetworkPolicyPort p : rule.getPorts()) {
        ports.add(p.getPort().getStrVal());
      }
      if (ports.contains("remoting") || ports.contains("management")) {
        internalCovered = true;
        assertEquals(Set.of("management", "remoting"), ports);
        for (NetworkPolicyPeer peer : rule.getFrom()) {
          assertNull(peer.getNamespaceSelector());
          assertNull(peer.getIpBlock());
          assertEquals(Map.of("app", "fencekeeper"), peer.getPodSelector().getMatchLabels());
        }
      }
    }
    assertTrue(internalCovered);
  }

  @Test
  void theGracePeriodCoversThePreStopPauseAndEveryShutdownPhase() throws Exception {
    Config conf = kubernetesConf();
    Config phases = conf.getConfig("pekko.coordinated-shutdown.phases");
    Duration fallback = conf.getDuration("pekko.coordinated-shutdown.default-phase-timeout");
    Duration shutdown = Duration.ZERO;
    for (String phase : phases.root().keySet()) {
      Config c = phases.getConfig(phase);
      shutdown = shutdown.plus(c.hasPath("timeout") ? c.getDuration("timeout") : fallback);
    }
    // the drain (worker.LeaveOnShutdown) is the first phase, with 4/5 of its 15 s
    assertEquals(
        Duration.ofSeconds(15),
        conf.getDuration("pekko.coordinated-shutdown.phases.before-service-unbind.timeout"));
    List<String> preStop = container().getLifecycle().getPreStop().getExec().getCommand();
    assertEquals("sleep", preStop.get(0));
    Duration pause = Duration.ofSeconds(Long.parseLong(preStop.get(1)));
    long grace = deployment().getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds();
    assertTrue(
        Duration.ofSeconds(grace).compareTo(pause.plus(shutdown)) >= 0,
        "grace "
            + grace
            + " s < preStop "
            + pause.toSeconds()
            + " s + every phase's timeout "
            + shutdown.toSeconds()
            + " s");
  }

  @Test
  void theAutoscalerKeepsTheDeploymentAtTheNodesWantedWithinTheFleetsBounds() throws Exception {
    HorizontalPodAutoscaler hpa = one(HorizontalPodAutoscaler.class);
    CrossVersionObjectReference target = hpa.getSpec().getScaleTargetRef();
    assertEquals("apps/v1", target.getApiVersion());
    assertEquals("Deployment", target.getKind());
    assertEquals(deployment().getMetadata().getName(), target.getName());

    List<MetricSpec> metrics = hpa.getSpec().getMetrics();
    assertEquals(1, metrics.size(), "the nodes wanted alone decide: " + metrics);
    assertEquals("External", metrics.get(0).getType());
    assertEquals(NODES_WANTED, metrics.get(0).getExternal().getMetric().getName());
    // replicas = the metric's value / averageValue: with 1, one replica per node wanted
    MetricTarget perReplica = metrics.get(0).getExternal().getTarget();
    assertEquals("AverageValue", perReplica.getType());
    assertEquals(
        0,
        BigDecimal.ONE.compareTo(Quantity.getAmountInBytes(perReplica.getAverageValue())),
        "averageValue " + perReplica.getAverageValue());

    int min = hpa.getSpec().getMinReplicas();
    int max = hpa.getSpec().getMaxReplicas();
    Map<String, String> env = configMap().getData();
    assertEquals(Integer.parseInt(env.get("FENCEKEEPER_FLEET_MIN_NODES")), min, "min-nodes");
    assertEquals(Integer.parseInt(env.get("FENCEKEEPER_FLEET_MAX_NODES")), max, "max-nodes");
    Config conf = kubernetesConf();
    assertTrue(
        min
            >= conf.getInt(
                "pekko.management.cluster.bootstrap.contact-point-discovery"
                    + ".required-contact-point-nr"),
        "a fleet restarted at its minimum still has the contact points a first start waits for");
    for (int current = min; current <= max; current++) {
      for (int wanted = min; wanted <= max; wanted++) {
        assertTrue(
            wanted == current || Math.abs(1.0 - (double) wanted / current) > HPA_TOLERANCE,
            current + " replicas would stay when " + wanted + " are wanted (within tolerance)");
      }
    }
    assertTrue(
        max * conf.getInt("fencekeeper.db.max-connections") <= POSTGRES_DEFAULT_CONNECTIONS,
        max + " nodes' journal pools exceed a default PostgreSQL's connections");
  }

  @Test
  void theAutoscalerAddsAtOnceAndGivesNodesBackOneAtATimeEachDrainedBeforeTheNext()
      throws Exception {
    HorizontalPodAutoscaler hpa = one(HorizontalPodAutoscaler.class);
    PodSpec pod = deployment().getSpec().getTemplate().getSpec();
    HPAScalingRules up = hpa.getSpec().getBehavior().getScaleUp();
    assertEquals(0, up.getStabilizationWindowSeconds(), "a deadline at risk does not wait");
    for (HPAScalingPolicy policy : up.getPolicies()) {
      assertEquals("Pods", policy.getType());
      assertEquals(30, policy.getPeriodSeconds());
      assertTrue(policy.getValue() > 1, "more than one node per period: " + policy);
    }

    HPAScalingRules down = hpa.getSpec().getBehavior().getScaleDown();
    // a node added for a run at risk is kept at least as long as it may take to start
    Probe startup = pod.getContainers().get(0).getStartupProbe();
    int startBudget = startup.getPeriodSeconds() * startup.getFailureThreshold();
    assertEquals(300, down.getStabilizationWindowSeconds());
    assertTrue(
        down.getStabilizationWindowSeconds() > startBudget,
        "scale-down window " + down.getStabilizationWindowSeconds() + " s <= start " + startBudget);
    assertEquals(1, down.getPolicies().size(), "no second policy may allow more");
    HPAScalingPolicy one = down.getPolicies().get(0);
    assertEquals("Pods", one.getType());
    assertEquals(1, one.getValue(), "one node at a time");
    // the previous node has drained and left (or the kubelet ended it) before the next is asked
    assertTrue(
        one.getPeriodSeconds() > pod.getTerminationGracePeriodSeconds(),
        "period "
            + one.getPeriodSeconds()
            + " s <= grace "
            + pod.getTerminationGracePeriodSeconds());
  }

  @Test
  void theAutoscalerComponentTakesTheFixedReplicasOffTheDeployment() throws Exception {
    JsonNode patches =
        YAML.readTree(AUTOSCALER.resolve("kustomization.yaml").toFile()).path("patches");
    assertEquals(1, patches.size(), patches.toString());
    JsonNode target = patches.get(0).path("target");
    assertEquals("Deployment", target.path("kind").asText());
    assertEquals(
        one(HorizontalPodAutoscaler.class).getSpec().getScaleTargetRef().getName(),
        target.path("name").asText());
    JsonNode operations = YAML.readTree(patches.get(0).path("patch").asText());
    assertEquals(
        YAML.readTree("[{op: remove, path: /spec/replicas}]"),
        operations,
        "the HPA owns the replicas; a fixed one would reset them at every apply");
  }

  @Test
  void theAdaptersRuleServesTheNodesWantedAsOneMaxOverEveryNodesSeries() throws Exception {
    JsonNode rules = YAML.readTree(ADAPTER_VALUES.toFile()).path("rules").path("external");
    assertEquals(1, rules.size(), rules.toString());
    JsonNode rule = rules.get(0);
    assertEquals(
        one(HorizontalPodAutoscaler.class)
            .getSpec()
            .getMetrics()
            .get(0)
            .getExternal()
            .getMetric()
            .getName(),
        rule.path("name").path("as").asText(),
        "the name the HPA asks for");
    assertTrue(rule.path("seriesQuery").asText().startsWith(NODES_WANTED + "{"));
    // the HPA's namespace selects the series: the pods' own, labelled by the scrape
    assertEquals(
        "namespace",
        rule.path("resources").path("overrides").path("namespace").path("resource").asText());
    // every node serves the same count: max of them, nothing grouped (one series, whatever the
    // reason label or the pod), as the HPA adds up the series it gets
    String query = rule.path("metricsQuery").asText().replace(" ", "");
    assertTrue(query.startsWith("max(<<.Series>>{<<.LabelMatchers>>})"), query);
    assertFalse(query.contains("by(") || query.contains("without("), "no grouping: " + query);
    assertFalse(query.contains("sum(") || query.contains("avg("), query);
  }

  // --- reading the manifests --------------------------------------------------------------

  /** Every file the kustomization and its components name, each document read into its type. */
  static List<HasMetadata> load() throws IOException {
    List<Path> files =
        new ArrayList<>(resources(DEPLOY.resolve("kustomization.yaml"), "Kustomization"));
    try (Stream<Path> components = Files.list(DEPLOY.resolve("components"))) {
      for (Path component : components.toList()) {
        files.addAll(resources(component.resolve("kustomization.yaml"), "Component"));
      }
    }
    try (Stream<Path> yaml = Files.walk(DEPLOY)) {
      Set<Path> onDisk = new TreeSet<>();
      yaml.filter(p -> p.toString().endsWith(".yaml"))
          .filter(p -> !p.getFileName().toString().equals("kustomization.yaml"))
          .filter(p -> !p.equals(ADAPTER_VALUES))
          .forEach(onDisk::add);
      assertEquals(onDisk, new TreeSet<>(files), "every manifest is in a kustomization");
    }
    List<HasMetadata> objects = new ArrayList<>();
    for (Path file : files) {
      for (String document : Files.readString(file).split("(?m)^---$")) {
        if (!document.isBlank()) {
          objects.add(read(document));
        }
      }
    }
    return objects;
  }

  private static List<Path> resources(Path kustomization, String kind) throws IOException {
    JsonNode k = YAML.readTree(kustomization.toFile());
    assertEquals(kind, k.path("kind").asText(), kustomization.toString());
    Set<String> fields = new TreeSet<>();
    k.fieldNames().forEachRemaining(fields::add);
    assertTrue(
        Set.of("apiVersion", "kind", "namespace", "resources", "images", "components", "patches")
            .containsAll(fields),
        "fields kustomize knows: " + fields);
    List<Path> files = new ArrayList<>();
    for (JsonNode resource : k.path("resources")) {
      Path file = kustomization.resolveSibling(resource.asText());
      assertTrue(Files.isRegularFile(file), file + " exists");
      files.add(file);
    }
    return files;
  }

  static HasMetadata read(String document) throws IOException {
    JsonNode node = YAML.readTree(document);
    String type = node.path("apiVersion").asText() + "/" + node.path("kind").asText();
    Class<? extends HasMetadata> cls = TYPES.get(type);
    assertNotNull(cls, "a type this deployment should not need: " + type);
    return YAML.treeToValue(node, cls);
  }

  /**
   * fabric8's types keep a field they do not know in {@code additionalProperties} instead of
   * failing: every one of them, at every depth, must be empty.
   */
  static void unknownFields(Object value, String path, List<String> found) throws Exception {
    if (value instanceof Collection<?> items) {
      int i = 0;
      for (Object item : items) {
        unknownFields(item, path + "[" + i++ + "]", found);
      }
      return;
    }
    if (value instanceof Map<?, ?> map) {
      for (Map.Entry<?, ?> e : map.entrySet()) {
        unknownFields(e.getValue(), path + "." + e.getKey(), found);
      }
      return;
    }
    if (value == null || !value.getClass().getName().startsWith("io.fabric8.")) {
      return;
    }
    for (Method getter : value.getClass().getMethods()) {
      if (getter.getParameterCount() != 0
          || !getter.getName().startsWith("get")
          || getter.getDeclaringClass() == Object.class) {
        continue;
      }
      Object field = getter.invoke(value);
      if (getter.getName().equals("getAdditionalProperties")) {
        if (field instanceof Map<?, ?> extra && !extra.isEmpty()) {
          found.add(path + ": " + extra.keySet());
        }
      } else {
        unknownFields(field, path + "." + getter.getName().substring(3), found);
      }
    }
  }

  static <T> List<T> all(Class<T> type) throws IOException {
    return load().stream().filter(type::isInstance).map(type::cast).toList();
  }

  static <T> T one(Class<T> type) throws IOException {
    List<T> found = all(type);
    assertEquals(1, found.size(), type.getSimpleName());
    return found.get(0);
  }

  static Deployment deployment() throws IOException {
    return one(Deployment.class);
  }

  static ConfigMap configMap() throws IOException {
    return one(ConfigMap.class);
  }

  static Container container() throws IOException {
    List<Container> containers = deployment().getSpec().getTemplate().getSpec().getContainers();
    assertEquals(1, containers.size());
    return containers.get(0);
  }

  static EnvVar env(String name) throws IOException {
    return container().getEnv().stream()
        .filter(e -> e.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + name));
  }

  static Object secretRef(String name) throws IOException {
    return env(name).getValueFrom().getSecretKeyRef();
  }

  static ContainerPort port(Container container, String name) {
    return container.getPorts().stream()
        .filter(p -> name.equals(p.getName()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no container port named " + name));
  }

  static void assertProbe(Probe probe, String path) {
    assertNotNull(probe);
    HTTPGetAction get = probe.getHttpGet();
    assertEquals(path, get.getPath());
    assertEquals("management", get.getPort().getStrVal());
  }

  /**
   * conf/kubernetes.conf as the pods resolve it: the ConfigMap's variables, plus the ones the
   * Deployment sets literally, in place of the environment.
   */
  static Config kubernetesConf() throws IOException {
    Map<String, Object> environment = new HashMap<>(configMap().getData());
    for (EnvVar env : container().getEnv()) {
      if (env.getValue() != null) {
        environment.put(env.getName(), env.getValue());
      }
    }
    return NodeConfig.load(Optional.of(Path.of("conf/kubernetes.conf")), environment);
  }
}
