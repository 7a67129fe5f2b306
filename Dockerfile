# One image for every node: the shaded jar on a JRE. Build the jar first:
#   mvn -B -q package -DskipTests && docker compose up --build
FROM eclipse-temurin:17-jre
RUN apt-get update && apt-get install -y --no-install-recommends curl \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/fencekeeper
COPY target/fencekeeper.jar fencekeeper.jar
COPY conf/ conf/
COPY examples/ examples/
# small heaps: three nodes share a laptop in the compose file
ENV JAVA_TOOL_OPTIONS="-Xmx384m -XX:+UseSerialGC"
EXPOSE 8080 8558 25520
ENTRYPOINT ["java", "-jar", "fencekeeper.jar"]
CMD ["serve", "--config", "conf/cluster.conf"]
