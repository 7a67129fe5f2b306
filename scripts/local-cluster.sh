#!/usr/bin/env bash
# Three Fencekeeper nodes on this machine, one shared PostgreSQL journal, no database installed.
#
#   scripts/local-cluster.sh start     # PostgreSQL (or FENCEKEEPER_DB_URL) + sim-provider + nodes 1..3
#   scripts/local-cluster.sh add-node  # starts the next node (4, 5, ...: the lowest number above 3
#                                      # not running), joined through nodes 1..3 as seeds; waits
#                                      # for its /health/ready and prints its number and ports
#   scripts/local-cluster.sh remove-node [N]
#                                      # SIGTERM node N (default: the highest-numbered running
#                                      # one): it drains and leaves; waits until it has exited and
#                                      # a remaining node no longer lists it as a member
#   scripts/local-cluster.sh status    # which processes run (added nodes too), each node's
#                                      # /health/ready
#   scripts/local-cluster.sh stop      # SIGTERM every node, added ones too (coordinated
#                                      # shutdown), then the sim and PostgreSQL (a clean shutdown;
#                                      # the data stays)
#   scripts/local-cluster.sh run-example [DATE]
#                                      # uploads examples/accounts.csv to node 1's API (run --url)
#                                      # and watches the run to the end; exit code 0 SUCCEEDED /
#                                      # 2 PARTIAL / 3 FAILED, like `run`
#
# Ports of node N: remoting 25520+N, HTTP 8080+N, management 8558+N (25521-25523, 8081-8083,
# 8559-8561 for nodes 1..3); PostgreSQL ${FENCEKEEPER_PG_PORT:-15432}, the simulated provider
# ${FENCEKEEPER_SIM_PORT:-9099} (one process shared by every node, so its ledger counts every
# effect; FENCEKEEPER_PROVIDER / FENCEKEEPER_PROVIDER_URL replace it). Everything listens on
# 127.0.0.1 only. Nodes 1..3 read conf/node-N.conf; an added node reads conf/cluster.conf with its
# ports and the seed nodes from the environment. add-node needs the environment start had
# (FENCEKEEPER_DB_URL, FENCEKEEPER_PROVIDER, FENCEKEEPER_API_TOKEN when start had them).
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
# the seeds an added node joins through: nodes 1..3, node 1 first, as conf/node-N.conf list them
SEEDS="$(printf 'pekko://fencekeeper@127.0.0.1:%s,' $((25520 + 1)) $((25520 + 2)) $((25520 + 3)))"
SEEDS="${SEEDS%,}"

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

# nodes 1..3 and every added node with a pid file, lowest first
node_numbers() {
  {
    printf '%s\n' "${NODES[@]}"
    for file in "$STATE"/node-*.pid; do
      [[ -e "$file" ]] || continue
      file="${file##*/node-}"; echo "${file%.pid}"
    done
  } | sort -nu
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

# the shared sim, unless FENCEKEEPER_PROVIDER names another provider
provider_env() {
  if [[ -z "${FENCEKEEPER_PROVIDER:-}" ]]; then
    export FENCEKEEPER_PROVIDER=http FENCEKEEPER_PROVIDER_URL="http://127.0.0.1:$SIM_PORT"
  fi
}

# starts node $1 as `serve` with the remaining arguments and waits until it is ready
launch_node() {
  local n="$1"; shift
  # shellcheck disable=SC2086
  (cd "$ROOT" && FENCEKEEPER_DATA_DIR="$STATE/node-$n" exec "$JAVA" $NODE_JVM_OPTS -jar "$JAR" \
    serve "$@") >"$STATE/node-$n.log" 2>&1 &
  echo $! >"$STATE/node-$n.pid"
  wait_ready "$n"
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
  [[ -n "${FENCEKEEPER_PROVIDER:-}" ]] || start_sim
  provider_env
  for n in "${NODES[@]}"; do
    if pid_alive "$STATE/node-$n.pid"; then echo "node $n already running"; continue; fi
    # node 1 first: it is the seed that forms the cluster, and it migrates the schema alone
    launch_node "$n" --config "$ROOT/conf/node-$n.conf"
  done
}

add_node() {
  [[ -f "$JAR" ]] || { echo "missing $JAR: run mvn -B -q package -DskipTests" >&2; exit 1; }
  local m running=""
  for m in "${NODES[@]}"; do pid_alive "$STATE/node-$m.pid" && running=1; done
  [[ -n "$running" ]] || {
    echo "no seed node runs: scripts/local-cluster.sh start first" >&2; exit 1; }
  if [[ -z "${FENCEKEEPER_DB_URL:-}" ]] && ! pid_alive "$STATE/postgres.pid"; then
    echo "the local PostgreSQL does not run (and FENCEKEEPER_DB_URL is not set)" >&2; exit 1
  fi
  if [[ -z "${FENCEKEEPER_PROVIDER:-}" ]] && ! pid_alive "$STATE/sim.pid"; then
    echo "the sim-provider does not run (and FENCEKEEPER_PROVIDER is not set)" >&2; exit 1
  fi
  journal_env
  provider_env
  local n=$((${#NODES[@]} + 1))
  while pid_alive "$STATE/node-$n.pid"; do n=$((n + 1)); done
  # a node of the cluster profile: its ports and the seeds from the environment, which wins over
  # every file (docs/design.md, "Configuration"); it joins whichever seed answers, never forms
  FENCEKEEPER_HTTP_PORT=$((8080 + n)) FENCEKEEPER_REMOTE_PORT=$((25520 + n)) \
    FENCEKEEPER_MANAGEMENT_PORT=$((8558 + n)) FENCEKEEPER_SEED_NODES="$SEEDS" \
    launch_node "$n" --config "$ROOT/conf/cluster.conf"
  echo "node $n added: remoting :$((25520 + n)), HTTP :$((8080 + n)), management :$((8558 + n))"
}

# true while the running node $2 lists node $1 as a member, in any status
lists_member() {
  curl -fsS "http://127.0.0.1:$((8558 + $2))/cluster/members" 2>/dev/null \
    | grep -q "\"pekko://fencekeeper@127.0.0.1:$((25520 + $1))\""
}

remove_node() {
  local n="${1:-}" m
  if [[ -z "$n" ]]; then
    for m in $(node_numbers | sort -nr); do
      pid_alive "$STATE/node-$m.pid" && { n="$m"; break; }
    done
    [[ -n "$n" ]] || { echo "no node runs" >&2; exit 1; }
  fi
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "not a node number: $n" >&2; exit 64; }
  pid_alive "$STATE/node-$n.pid" || { echo "node $n is not running" >&2; exit 1; }
  # SIGTERM runs coordinated shutdown: the pool drains, the shards move, the member leaves
  stop_pid_file "$STATE/node-$n.pid" 60 "node $n"
  for m in $(node_numbers); do
    pid_alive "$STATE/node-$m.pid" || continue
    for _ in $(seq 1 300); do
      lists_member "$n" "$m" || {
        echo "node $n left the cluster (node $m no longer lists it)"; return 0; }
      sleep 0.1
    done
    echo "node $m still lists node $n as a member after 30s" >&2; return 1
  done
  echo "node $n stopped; no node runs to confirm it left"
}

stop() {
  # highest first: added nodes, then 3, 2 and 1, the seed and oldest node (coordinator singleton),
  # which hands over last
  for n in $(node_numbers | sort -nr); do stop_pid_file "$STATE/node-$n.pid" 60 "node $n"; done
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
  for n in $(node_numbers); do
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
  add-node) add_node ;;
  remove-node) shift; remove_node "$@" ;;
  stop) stop ;;
  status) status ;;
  run-example) shift; run_example "$@" ;;
  *) echo "usage: $0 start|add-node|remove-node [N]|stop|status|run-example [DATE]" >&2; exit 64 ;;
esac
