#!/usr/bin/env bash
# Three Fencekeeper nodes on this machine, one shared PostgreSQL journal, no database installed.
#
#   scripts/local-cluster.sh start     # PostgreSQL (or FENCEKEEPER_DB_URL) + sim-provider + nodes 1..3
#   scripts/local-cluster.sh status    # which processes run, each node's /health/ready
#   scripts/local-cluster.sh stop      # SIGTERM every node (coordinated shutdown), then the sim and
#                                      # PostgreSQL (a clean shutdown; the data stays)
#   scripts/local-cluster.sh run-example [DATE]
#                                      # uploads examples/accounts.csv to node 1's API (run --url)
#                                      # and watches the run to the end; exit code 0 SUCCEEDED /
#                                      # 2 PARTIAL / 3 FAILED, like `run`
#
# Ports: remoting 25521-25523, HTTP 8081-8083, management 8559-8561, PostgreSQL
# ${FENCEKEEPER_PG_PORT:-15432}, the simulated provider ${FENCEKEEPER_SIM_PORT:-9099} (one process
# shared by the three nodes, so its ledger counts every effect; FENCEKEEPER_PROVIDER /
# FENCEKEEPER_PROVIDER_URL replace it). Everything listens on 127.0.0.1 only.
# The journal is a PostgreSQL started from the developer jar (target/fencekeeper-postgres.jar, the
# embedded binaries of the tests, with durable settings; the product jar carries none) with its data
# in data/local-cluster/postgres, unless FENCEKEEPER_DB_URL (with FENCEKEEPER_DB_USER /
# FENCEKEEPER_DB_PASSWORD) points at one you run.
# With FENCEKEEPER_API_TOKEN set, the nodes require it and run-example sends it.
# Logs and pid files live in data/local-cluster/. Needs target/fencekeeper.jar and
# target/fencekeeper-postgres.jar (both from mvn -B -q package -DskipTests).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STATE="${FENCEKEEPER_CLUSTER_DIR:-$ROOT/data/local-cluster}"
JAR="${FENCEKEEPER_JAR:-$ROOT/target/fencekeeper.jar}"
PG_JAR="${FENCEKEEPER_PG_JAR:-$ROOT/target/fencekeeper-postgres.jar}"
PG_PORT="${FENCEKEEPER_PG_PORT:-15432}"
SIM_PORT="${FENCEKEEPER_SIM_PORT:-9099}"
JAVA="${JAVA:-java}"
# C1 only: three JVMs compiling with C2 at once starve each other on a small machine, and the
# first run after start is mostly warm-up (docs/cluster.md, "Scale-out on one machine")
NODE_JVM_OPTS="${NODE_JVM_OPTS:--Xmx320m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}"
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

start_postgres() {
  if pid_alive "$STATE/postgres.pid"; then echo "PostgreSQL already running"; return 0; fi
  : >"$STATE/postgres.out"
  # it unpacks PostgreSQL's binaries once (streamed: 64 MB of heap is plenty) into a directory
  # of its own, whole or not at all (docs/cluster.md, "Local cluster")
  "$JAVA" -Xmx64m -XX:+UseSerialGC -jar "$PG_JAR" --data-dir "$STATE/postgres" \
    --port "$PG_PORT" --log-file "$STATE/postgres.log" >"$STATE/postgres.out" 2>&1 &
  echo $! >"$STATE/postgres.pid"
  for _ in $(seq 1 600); do
    grep -q "postgres ready" "$STATE/postgres.out" 2>/dev/null && {
      echo "PostgreSQL on :$PG_PORT (data $STATE/postgres)"; return 0; }
    pid_alive "$STATE/postgres.pid" || { cat "$STATE/postgres.out" >&2; return 1; }
    sleep 0.2
  done
  echo "PostgreSQL did not start; see $STATE/postgres.out and $STATE/postgres.log" >&2; return 1
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
    # the role and database fencekeeper-postgres creates; trust authentication on loopback
    export FENCEKEEPER_DB_URL="jdbc:postgresql://127.0.0.1:$PG_PORT/fencekeeper"
    export FENCEKEEPER_DB_USER=fencekeeper FENCEKEEPER_DB_PASSWORD=""
  fi
}

start() {
  [[ -f "$JAR" ]] || { echo "missing $JAR: run mvn -B -q package -DskipTests" >&2; exit 1; }
  [[ -n "${FENCEKEEPER_DB_URL:-}" || -f "$PG_JAR" ]] || {
    echo "missing $PG_JAR: run mvn -B -q package -DskipTests" >&2; exit 1; }
  mkdir -p "$STATE"
  [[ -n "${FENCEKEEPER_DB_URL:-}" ]] || start_postgres
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
  stop_pid_file "$STATE/postgres.pid" 90 "PostgreSQL"
}

run_example() {
  local date="${1:-2026-11-29}"
  local url="${FENCEKEEPER_RUN_URL:-http://127.0.0.1:8081}"
  local code=0
  # an upload to a node's API (POST /api/runs, text/csv): the file may live anywhere, the node
  # never reads the client's disk; FENCEKEEPER_API_TOKEN, when set, goes along as the bearer token
  (cd "$ROOT" && exec "$JAVA" -Xmx128m -XX:+UseSerialGC -jar "$JAR" run --url "$url" \
    --job payment-reconciliation --date "$date" --accounts "$ROOT/examples/accounts.csv") || code=$?
  if pid_alive "$STATE/sim.pid"; then
    echo "ledger (effects per key > 1 would be duplicates):"
    # "N keys with E effect(s) each", one line per E: an E above 1 would be a duplicate
    curl -fsS "http://127.0.0.1:$SIM_PORT/ledger" | grep -o '"fk-[^"]*":[0-9]*' | sed 's/.*://' \
      | sort -n | uniq -c | awk '{print "  " $1 " keys with " $2 " effect(s) each"}'
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
  if pid_alive "$STATE/postgres.pid"; then echo "PostgreSQL: running on :$PG_PORT"; else echo "PostgreSQL: not running (or FENCEKEEPER_DB_URL)"; fi
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
