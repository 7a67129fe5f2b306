#!/usr/bin/env bash
# Makes an AOT cache for fencekeeper.jar (JDK 25 or later; JEP 483 and 515) by a training run of
# what a node does: a `serve` node on the embedded default (H2 under a temporary directory, the
# in-process sim over HTTP) takes the quick start's run, uploaded to its API with `run --url`, and
# is stopped with SIGTERM; the JVM writes the cache as it exits. Nodes started later with
# -XX:AOTCache=FILE (the same JDK, the same jar at the same path) start with the classes loaded and
# linked and the methods' profiles of that run, so C2 compiles sooner and less (docs/bench.md,
# "JDK 25 and an AOT cache"). The Dockerfile runs it at image build.
#
#   scripts/aot-cache.sh OUTPUT [JAR]     # JAR: target/fencekeeper.jar
#
# AOT_TRAINING_JVM_OPTS: the training JVM's options (default "-Xmx384m -XX:+UseSerialGC", the
# image's): train with the options the nodes run with, so the profiles are of the same JVM.
# AOT_TRAINING_PORT: the training node's HTTP port (default 18080; management and remoting use
# 18558 and 25599). Everything listens on 127.0.0.1 only, and the temporary data is removed.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:?usage: scripts/aot-cache.sh OUTPUT [JAR]}"
JAR="${2:-$ROOT/target/fencekeeper.jar}"
JAVA="${JAVA:-java}"
OPTS="${AOT_TRAINING_JVM_OPTS:--Xmx384m -XX:+UseSerialGC}"
PORT="${AOT_TRAINING_PORT:-18080}"
MGMT_PORT=18558

[[ -f "$JAR" ]] || { echo "missing $JAR: run mvn -B -q package -DskipTests" >&2; exit 1; }
aot_flags="$("$JAVA" -XX:+PrintFlagsFinal -version 2>/dev/null | grep -c 'AOTCacheOutput' || true)"
[[ "$aot_flags" -gt 0 ]] || { echo "$JAVA has no -XX:AOTCacheOutput: JDK 25 or later is needed" >&2; exit 1; }

WORK="$(mktemp -d)"
node=""
cleanup() {
  [[ -n "$node" ]] && kill -KILL "$node" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
rm -f "$OUT"

# the node's own settings only: whatever the environment says of databases, providers or tokens
# would train it on something else
# shellcheck disable=SC2086
env -i PATH="$PATH" HOME="$WORK" FENCEKEEPER_DATA_DIR="$WORK/data" \
  FENCEKEEPER_HTTP_PORT="$PORT" FENCEKEEPER_MANAGEMENT_PORT="$MGMT_PORT" \
  FENCEKEEPER_REMOTE_PORT=25599 \
  "$JAVA" $OPTS -XX:AOTCacheOutput="$OUT" -jar "$JAR" serve >"$WORK/serve.log" 2>&1 &
node=$!

ready=""
for _ in $(seq 1 900); do
  if curl -fsS "http://127.0.0.1:$MGMT_PORT/health/ready" >/dev/null 2>&1; then ready=yes; break; fi
  kill -0 "$node" 2>/dev/null || break
  sleep 0.2
done
if [[ -z "$ready" ]]; then
  echo "the training node did not become ready:" >&2; tail -30 "$WORK/serve.log" >&2; exit 1
fi

(cd "$ROOT" && env -i PATH="$PATH" HOME="$WORK" "$JAVA" -Xmx256m -XX:+UseSerialGC -jar "$JAR" \
  run --url "http://127.0.0.1:$PORT" --job payment-reconciliation --date 2026-11-29 \
  --accounts examples/accounts.csv) >"$WORK/run.log" 2>&1 || {
  echo "the training run did not succeed:" >&2; tail -30 "$WORK/run.log" >&2; exit 1; }
grep -v '^\[' "$WORK/run.log" | head -4 # the report, without the progress lines

# SIGTERM: a coordinated shutdown, after which the JVM assembles the cache from what it recorded
kill -TERM "$node"
for _ in $(seq 1 1800); do
  kill -0 "$node" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$node" 2>/dev/null; then
  echo "the training node did not exit within 180 s" >&2; exit 1
fi
wait "$node" || true
node=""
if [[ ! -s "$OUT" ]]; then
  echo "no cache was written:" >&2; tail -30 "$WORK/serve.log" >&2; exit 1
fi
echo "AOT cache $OUT: $(du -h "$OUT" | cut -f1)"
