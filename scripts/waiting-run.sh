#!/usr/bin/env bash
# What a run that waits costs a node (docs/bench.md, "A run that waits"): one `serve` node on a
# durable PostgreSQL, the sim in its own process, the governor opened to the workers; then
#   idle            the node's CPU (ms per second) over 20 s with no run
#   fast warm-up    WARM_FAST items with the sim at 20 ms (0 skips it: the node stays cold)
#   warm run        ITEMS items with the sim at LATENCY_MS (not measured: the JIT's first minute)
#   measured run    ITEMS items at LATENCY_MS: the node's CPU per second over 20 s while it is in
#                   flight, with the same by thread group, then its items/s and CPU per item
#   idle after      the node's CPU over 20 s once the run is over
#
#   FENCEKEEPER_DB_URL=jdbc:postgresql://127.0.0.1:5432/fkwait FENCEKEEPER_DB_USER=... \
#   FENCEKEEPER_DB_PASSWORD=... scripts/waiting-run.sh [LATENCY_MS] [ITEMS] [WORKERS]
#
# Defaults: 3000 ms, 300 items, 32 workers, WARM_FAST=20000. The database must be empty (the runs
# are created with fixed names). CPU is utime + stime of /proc/<pid>/stat and
# /proc/<pid>/task/*/stat; give the load average (printed) with every figure. Logs stay in
# data/waiting-run/. Ports: SIM_PORT (8120), HTTP_PORT (8180), MANAGEMENT_PORT (8558),
# REMOTE_PORT (25520). Needs target/fencekeeper.jar, curl and python3.
set -euo pipefail
LAT=${1:-3000}; ITEMS=${2:-300}; W=${3:-32}; WARM_FAST=${WARM_FAST:-20000}
: "${FENCEKEEPER_DB_URL:?a durable PostgreSQL: FENCEKEEPER_DB_URL=jdbc:postgresql://...}"
JAR=${JAR:-target/fencekeeper.jar}
SIM_PORT=${SIM_PORT:-8120}; HTTP_PORT=${HTTP_PORT:-8180}
MANAGEMENT_PORT=${MANAGEMENT_PORT:-8558}; REMOTE_PORT=${REMOTE_PORT:-25520}
D=data/waiting-run; rm -rf "$D"; mkdir -p "$D"
API=http://127.0.0.1:$HTTP_PORT

java -Dsun.net.httpserver.maxIdleConnections=4096 -jar "$JAR" sim-provider --port "$SIM_PORT" \
  --latency-ms "$LAT" --threads 64 >"$D/sim.log" 2>&1 &
SIM=$!
FENCEKEEPER_PROVIDER=http FENCEKEEPER_PROVIDER_URL=http://127.0.0.1:$SIM_PORT \
FENCEKEEPER_WORKERS=$W FENCEKEEPER_DATA_DIR=$D/data FENCEKEEPER_HTTP_PORT=$HTTP_PORT \
FENCEKEEPER_MANAGEMENT_PORT=$MANAGEMENT_PORT FENCEKEEPER_REMOTE_PORT=$REMOTE_PORT \
FENCEKEEPER_LOG_LEVEL=WARN java ${NODE_JVM_OPTS:-} -jar "$JAR" serve >"$D/node.log" 2>&1 &
NODE=$!
trap 'kill $NODE $SIM 2>/dev/null || true' EXIT
until curl -sf "http://127.0.0.1:$MANAGEMENT_PORT/health/ready" >/dev/null; do
  kill -0 $NODE 2>/dev/null || { echo "the node exited: see $D/node.log" >&2; exit 1; }
  sleep 1
done
curl -sf -o /dev/null -X PUT -H 'Content-Type: application/json' \
  -d "{\"normalCap\":$W,\"burstCap\":$W,\"minCap\":1}" "$API/api/governor"

cpu() { awk '{print $14 + $15}' /proc/$NODE/stat; } # clock ticks (10 ms)
threads() { for t in /proc/$NODE/task/*; do echo "$(tr ' ' _ <"$t/comm") $(awk '{print $14 + $15}' "$t/stat")"; done; }
load() { cut -d' ' -f1 /proc/loadavg; }
window() { # label: the node's CPU over 20 s
  local a b; a=$(cpu); sleep 20; b=$(cpu)
  echo "$1: $(((b - a) * 10 / 20)) ms/s of CPU (load $(load))"
}
latency() {
  curl -sf -o /dev/null -X PUT -H 'Content-Type: application/json' \
    -d "{\"latencyMs\":$1,\"jitterMs\":0,\"timeoutAfterAccept\":0,\"holdAfterAcceptMs\":0,\"throttlePerSecond\":0,\"errorRate\":0,\"nonIdempotent\":false,\"ignoreFencing\":false}" \
    "http://127.0.0.1:$SIM_PORT/admin/faults"
}
run() { # job items [measure]
  local job=$1 n=$2 t0 t1 c0 c1
  python3 -c "import sys; print('accountId,cursor'); [print(f'acct-{i},c-{i % 7}') for i in range(int(sys.argv[1]))]" "$n" >"$D/$job.csv"
  t0=$(date +%s.%N); c0=$(cpu)
  curl -sf -o /dev/null -X POST -H 'Content-Type: text/csv' --data-binary "@$D/$job.csv" \
    "$API/api/runs?job=$job&businessDate=2026-12-01&deadline=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)"
  if [ -n "${3:-}" ]; then
    sleep 10
    threads >"$D/threads.0"
    window "in flight"
    threads >"$D/threads.1"
    python3 "$(dirname "$0")/thread-cpu.py" "$D/threads.0" "$D/threads.1" 0.5 ms/s
  fi
  until curl -sf "$API/api/runs/$job%2F2026-12-01" | grep -q '"state":"SUCCEEDED"'; do sleep 0.5; done
  t1=$(date +%s.%N); c1=$(cpu)
  python3 -c "t = $t1 - $t0; print('$job: $n items in %.1f s, %.1f items/s, node CPU %.2f ms/item' % (t, $n / t, ($c1 - $c0) * 10 / $n))"
}

sleep 20
window "idle"
if [ "$WARM_FAST" -gt 0 ]; then latency 20; run fastwarm "$WARM_FAST"; latency "$LAT"; fi
run warm "$ITEMS"
run measured "$ITEMS" measure
sleep 10
window "idle after"
