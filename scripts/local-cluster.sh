#!/usr/bin/env bash
# Three Fencekeeper nodes on this machine, one shared journal, no database installed.
#
#   scripts/local-cluster.sh start     # H2 TCP server (or FENCEKEEPER_DB_URL) + nodes 1..3
#   scripts/local-cluster.sh status    # which processes run, each node's /health/ready
#   scripts/local-cluster.sh stop      # SIGTERM every node (coordinated shutdown), then the DB
#   scripts/local-cluster.sh run-example [DATE]
#                                      # examples/accounts.csv as a run, created by a client member
#                                      # (workers 0, no role) that watches it to the end; exit code
#                                      # 0 SUCCEEDED / 2 PARTIAL / 3 FAILED, like `run`
#
# Ports: remoting 25521-25523, HTTP 8081-8083, management 8559-8561, H2 ${FENCEKEEPER_H2_PORT:-9092},
# the simulated provider ${FENCEKEEPER_SIM_PORT:-9099} (one process shared by the three nodes, so its
# ledger counts every effect; FENCEKEEPER_PROVIDER / FENCEKEEPER_PROVIDER_URL replace it).
# The journal is an H2 database served over TCP from data/local-cluster/h2, unless FENCEKEEPER_DB_URL
# (with FENCEKEEPER_DB_USER / FENCEKEEPER_DB_PASSWORD) points at a PostgreSQL you run yourself.
# Logs and pid files live in data/local-cluster/. Needs target/fencekeeper.jar
# (mvn -B -q package -DskipTests).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STATE="${FENCEKEEPER_CLUSTER_DIR:-$ROOT/data/local-cluster}"
JAR="${FENCEKEEPER_JAR:-$ROOT/target/fencekeeper.jar}"
H2_PORT="${FENCEKEEPER_H2_PORT:-9092}"
SIM_PORT="${FENCEKEEPER_SIM_PORT:-9099}"
JAVA="${JAVA:-java}"
NODE_JVM_OPTS="${NODE_JVM_OPTS:--Xmx320m -XX:+UseSerialGC}"
NODES=(1 2 3)

pid_alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# SIGTERM, then wait up to $2 seconds for the process to leave; SIGKILL only as a last resort
stop_pid_file() {
  local file="$1" grace="$2" name="$3"
  if ! pid_alive "$file"; then rm -f "$file"; return 0; fi
  local pid; pid="$(cat "$file")"
  kill -TERM "$pid"
  for _ in $(seq 1 $((grace * 10))); do
    kill -0 "$pid" 2>/dev/null || { echo "$name stopped"; rm -f "$file"; return 0; }
    sleep 0.1
  done
  echo "$name did not stop within ${grace}s; killing it" >&2
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$file"
}

wait_ready() {
  local n="$1" port=$((8558 + $1))
  for _ in $(seq 1 600); do
    if curl -fsS "http://127.0.0.1:$port/health/ready" >/dev/null 2>&1; then
      echo "node $n ready (management :$port)"; return 0
    fi
    if ! pid_alive "$STATE/node-$n.pid"; then
      echo "node $n exited; see $STATE/node-$n.log" >&2; tail -20 "$STATE/node-$n.log" >&2; return 1
    fi
    sleep 0.2
  done
  echo "node $n not ready after 120s; see $STATE/node-$n.log" >&2; return 1
}

start_h2() {
  if pid_alive "$STATE/h2.pid"; then echo "H2 already running"; return 0; fi
  mkdir -p "$STATE/h2"
  "$JAVA" -Xmx128m -XX:+UseSerialGC -cp "$JAR" org.h2.tools.Server \
    -tcp -tcpPort "$H2_PORT" -ifNotExists -baseDir "$STATE/h2" \
    >"$STATE/h2.log" 2>&1 &
  echo $! >"$STATE/h2.pid"
  for _ in $(seq 1 100); do
    grep -q "TCP server running" "$STATE/h2.log" 2>/dev/null && { echo "H2 TCP server on :$H2_PORT"; return 0; }
    pid_alive "$STATE/h2.pid" || { cat "$STATE/h2.log" >&2; return 1; }
    sleep 0.1
  done
  echo "H2 did not start; see $STATE/h2.log" >&2; return 1
}

start_sim() {
  if pid_alive "$STATE/sim.pid"; then echo "sim-provider already running"; return 0; fi
  "$JAVA" -Xmx128m -XX:+UseSerialGC -jar "$JAR" sim-provider --port "$SIM_PORT" \
    >"$STATE/sim.log" 2>&1 &
  echo $! >"$STATE/sim.pid"
  for _ in $(seq 1 100); do
    grep -q "listening on" "$STATE/sim.log" 2>/dev/null && { echo "sim-provider on :$SIM_PORT"; return 0; }
    pid_alive "$STATE/sim.pid" || { cat "$STATE/sim.log" >&2; return 1; }
    sleep 0.1
  done
  echo "sim-provider did not start; see $STATE/sim.log" >&2; return 1
}

journal_env() {
  if [[ -z "${FENCEKEEPER_DB_URL:-}" ]]; then
    export FENCEKEEPER_DB_URL="jdbc:h2:tcp://127.0.0.1:$H2_PORT/fencekeeper;LOCK_TIMEOUT=10000"
    export FENCEKEEPER_DB_USER="${FENCEKEEPER_DB_USER:-sa}"
    export FENCEKEEPER_DB_PASSWORD="${FENCEKEEPER_DB_PASSWORD:-}"
  fi
}

start() {
  [[ -f "$JAR" ]] || { echo "missing $JAR: run mvn -B -q package -DskipTests" >&2; exit 1; }
  mkdir -p "$STATE"
  [[ -n "${FENCEKEEPER_DB_URL:-}" ]] || start_h2
  journal_env
  echo "journal: $FENCEKEEPER_DB_URL"
  if [[ -z "${FENCEKEEPER_PROVIDER:-}" ]]; then
    start_sim
    export FENCEKEEPER_PROVIDER=http FENCEKEEPER_PROVIDER_URL="http://127.0.0.1:$SIM_PORT"
  fi
  for n in "${NODES[@]}"; do
    if pid_alive "$STATE/node-$n.pid"; then echo "node $n already running"; continue; fi
    # node 1 first: it is the seed that forms the cluster, and it migrates the schema alone
    # shellcheck disable=SC2086
    (cd "$ROOT" && FENCEKEEPER_DATA_DIR="$STATE/node-$n" exec "$JAVA" $NODE_JVM_OPTS -jar "$JAR" \
      serve --config "$ROOT/conf/node-$n.conf") >"$STATE/node-$n.log" 2>&1 &
    echo $! >"$STATE/node-$n.pid"
    wait_ready "$n"
  done
}

stop() {
  # reverse order: the seed and oldest node (coordinator singleton) hands over last
  for n in 3 2 1; do stop_pid_file "$STATE/node-$n.pid" 60 "node $n"; done
  stop_pid_file "$STATE/sim.pid" 10 "sim-provider"
  stop_pid_file "$STATE/h2.pid" 10 "H2"
}

run_example() {
  local date="${1:-2026-11-29}"
  journal_env
  export FENCEKEEPER_SEED_NODES="${FENCEKEEPER_SEED_NODES:-pekko://fencekeeper@127.0.0.1:25521}"
  local code=0
  # shellcheck disable=SC2086
  (cd "$ROOT" && exec "$JAVA" $NODE_JVM_OPTS -jar "$JAR" run \
    --config "$ROOT/scripts/cluster-client.conf" --workers 0 \
    --provider http --provider-url "${FENCEKEEPER_PROVIDER_URL:-http://127.0.0.1:$SIM_PORT}" \
    --job payment-reconciliation --date "$date" --accounts "$ROOT/examples/accounts.csv" \
    --data-dir "$STATE/client") || code=$?
  if pid_alive "$STATE/sim.pid"; then
    echo "ledger (effects per key > 1 would be duplicates):"
    curl -fsS "http://127.0.0.1:$SIM_PORT/ledger" | head -c 300; echo
  fi
  return $code
}

status() {
  local code=0
  for n in "${NODES[@]}"; do
    if pid_alive "$STATE/node-$n.pid"; then
      local ready; ready="$(curl -fsS "http://127.0.0.1:$((8558 + n))/health/ready" 2>/dev/null || echo 'not ready')"
      echo "node $n: running (pid $(cat "$STATE/node-$n.pid")), ready: $ready"
    else
      echo "node $n: stopped"; code=3
    fi
  done
  if pid_alive "$STATE/h2.pid"; then echo "H2: running on :$H2_PORT"; else echo "H2: not running"; fi
  if pid_alive "$STATE/sim.pid"; then echo "sim-provider: running on :$SIM_PORT"; else echo "sim-provider: not running"; fi
  return $code
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  run-example) shift; run_example "$@" ;;
  *) echo "usage: $0 start|stop|status|run-example [DATE]" >&2; exit 64 ;;
esac
