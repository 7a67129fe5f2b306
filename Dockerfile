# One image for every node: the shaded jar on a JRE. Build the jar first:
#   mvn -B -q package -DskipTests && docker compose up --build   (after cp .env.example .env)
# The jar carries no PostgreSQL (that is target/fencekeeper-postgres.jar, a developer tool). On
# Kubernetes, deploy/kubernetes runs this image with `serve --config conf/kubernetes.conf` and
# replaces JAVA_TOOL_OPTIONS with a heap sized from the container's memory limit.
# The jar is built for Java 17 (the minimum for users); the image runs it on JDK 25 with an AOT
# cache (JEP 483 and 515) made here by a training run (scripts/aot-cache.sh: a node on the embedded
# default takes the quick start's run), so every node starts with the classes linked and the
# methods' profiles of that run: on 2 cores a fresh node spent a quarter less CPU per item than on
# the JDK 17 image, and 45% less in C2 (docs/bench.md, "JDK 25 and an AOT cache"). A JDK 25 JVM
# that cannot use the cache (another jar) logs why and runs without it; a JDK before 25 would not
# start with -XX:AOTCache at all.
FROM eclipse-temurin:25-jre
RUN apt-get update && apt-get install -y --no-install-recommends curl \
    && rm -rf /var/lib/apt/lists/*
# the node runs as an unprivileged user: it owns only its data directory
RUN useradd --system --uid 10001 --no-create-home --home-dir /opt/fencekeeper fencekeeper \
    && mkdir -p /var/lib/fencekeeper/scopes /var/lib/fencekeeper/archive && chown -R fencekeeper /var/lib/fencekeeper
WORKDIR /opt/fencekeeper
COPY target/fencekeeper.jar fencekeeper.jar
COPY conf/ conf/
COPY examples/ examples/
COPY scripts/aot-cache.sh scripts/aot-cache.sh
# about 40 s on 2 cores; the training's data is removed, the cache (about 130 MB) stays
RUN scripts/aot-cache.sh /opt/fencekeeper/fencekeeper.aot /opt/fencekeeper/fencekeeper.jar
ENV FENCEKEEPER_DATA_DIR=/var/lib/fencekeeper
USER fencekeeper
# small heaps: three nodes share a laptop in the compose file
ENV JAVA_TOOL_OPTIONS="-Xmx384m -XX:+UseSerialGC -XX:AOTCache=/opt/fencekeeper/fencekeeper.aot"
EXPOSE 8080 8558 25520
ENTRYPOINT ["java", "-jar", "fencekeeper.jar"]
CMD ["serve", "--config", "conf/cluster.conf"]
