# One image for every node: the shaded jar on a JRE. Build the jar first:
#   mvn -B -q package -DskipTests && docker compose up --build   (after cp .env.example .env)
# The jar carries no PostgreSQL (that is target/fencekeeper-postgres.jar, a developer tool). On
# Kubernetes, deploy/kubernetes runs this image with `serve --config conf/kubernetes.conf` and
# replaces JAVA_TOOL_OPTIONS with a heap sized from the container's memory limit.
FROM eclipse-temurin:17-jre
RUN apt-get update && apt-get install -y --no-install-recommends curl \
    && rm -rf /var/lib/apt/lists/*
# the node runs as an unprivileged user: it owns only its data directory
RUN useradd --system --uid 10001 --no-create-home --home-dir /opt/fencekeeper fencekeeper \
    && mkdir -p /var/lib/fencekeeper/scopes /var/lib/fencekeeper/archive && chown -R fencekeeper /var/lib/fencekeeper
WORKDIR /opt/fencekeeper
COPY target/fencekeeper.jar fencekeeper.jar
COPY conf/ conf/
COPY examples/ examples/
ENV FENCEKEEPER_DATA_DIR=/var/lib/fencekeeper
USER fencekeeper
# small heaps: three nodes share a laptop in the compose file
ENV JAVA_TOOL_OPTIONS="-Xmx384m -XX:+UseSerialGC"
EXPOSE 8080 8558 25520
ENTRYPOINT ["java", "-jar", "fencekeeper.jar"]
CMD ["serve", "--config", "conf/cluster.conf"]
