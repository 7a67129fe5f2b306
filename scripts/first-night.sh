#!/usr/bin/env bash
# The first night (docs/bench.md, "The first night"): a fresh `serve` node's first run beside
# db-scheduler's cold run, on the same sim (its own process), the same durable PostgreSQL and the
# same machine:
#   node start      from the process's start to /health/ready (its warm-up included), and its CPU
#   first run       ITEMS items with the sim at LATENCY_MS, WORKERS workers, the governor opened
#                   to them: wall time from the POST to SUCCEEDED, items/s, node CPU per item
#   db-scheduler    the bench's provider comparison with no warm-up (its Fencekeeper side is an
#                   in-process node, not a fresh serve node; its db-scheduler side is the cold run)
#
#   FENCEKEEPER_DB_URL=jdbc:postgresql://127.0.0.1:5432/fknight FENCEKEEPER_DB_USER=... \
#   FENCEKEEPER_DB_PASSWORD=... scripts/first-night.sh [LATENCY_MS] [ITEMS] [WORKERS]
#
# Defaults: 20 ms, 6000 items, 64 workers. The node's settings come from the environment
# (FENCEKEEPER_WARM_UP_ITEMS=6000 warms it first), JAVA and NODE_JVM_OPTS its JVM (e.g. JDK 25 with
# an AOT cache); SKIP_DB_SCHEDULER=1 measures the node only. The
# database must be empty (the run has a fixed name). CPU is utime + stime of /proc/<pid>/stat; give
# the load average (printed) with every figure. Logs stay in data/first-night/. Ports: SIM_PORT
# (8120), HTTP_PORT (8180), MANAGEMENT_PORT (8558), REMOTE_PORT (25520). Needs target/fencekeeper.jar,
# target/fencekeeper-bench.jar, curl and python3.
set -euo pipefail
LAT=${1:-20}; ITEMS=${2:-6000}; W=${3:-64}
: "${FENCEKEEPER_DB_URL:?a durable PostgreSQL: FENCEKEEPER_DB_URL=jdbc:postgresql://...}"
JAR=${JAR:-target/fencekeeper.jar}; BENCH_JAR=${BENCH_JAR:-target/fencekeeper-bench.jar}; JAVA=${JAVA:-java}
SIM_PORT=${SIM_PORT:-8120}; HTTP_PORT=${HTTP_PORT:-8180}
MANAGEMENT_PORT=${MANAGEMENT_PORT:-8558}; REMOTE_PORT=${REMOTE_PORT:-25520}
D=data/first-night; rm -rf "$D"; mkdir -p "$D"
API=http://127.0.0.1:$HTTP_PORT
load() { cut -d' ' -f1 /proc/loadavg; }

java -Dsun.net.httpserver.maxIdleConnections=4096 -jar "$JAR" sim-provider --port "$SIM_PORT" \
  --latency-ms "$LAT" --threads 64 >"$D/sim.log" 2>&1 &
SIM=$!
trap 'kill ${NODE:-} $SIM 2>/dev/null || true' EXIT
until curl -sf -o /dev/null "http://127.0.0.1:$SIM_PORT/admin/faults"; do sleep 0.2; done

echo "load before the node: $(load)"
t0=$(date +%s.%N)
FENCEKEEPER_PROVIDER=http FENCEKEEPER_PROVIDER_URL=http://127.0.0.1:$SIM_PORT \
FENCEKEEPER_WORKERS=$W FENCEKEEPER_DATA_DIR=$D/data FENCEKEEPER_HTTP_PORT=$HTTP_PORT \
FENCEKEEPER_MANAGEMENT_PORT=$MANAGEMENT_PORT FENCEKEEPER_REMOTE_PORT=$REMOTE_PORT \
FENCEKEEPER_LOG_LEVEL=WARN "$JAVA" ${NODE_JVM_OPTS:-} -jar "$JAR" serve >"$D/node.log" 2>&1 &
NODE=$!
cpu() { awk '{print $14 + $15}' /proc/$NODE/stat; } # clock ticks (10 ms)
threads() { for t in /proc/$NODE/task/*; do echo "$(tr ' ' _ <"$t/comm") $(awk '{print $14 + $15}' "$t/stat")"; done; }
until curl -sf -o /dev/null "http://127.0.0.1:$MANAGEMENT_PORT/health/ready"; do
  kill -0 $NODE 2>/dev/null || { echo "the node exited: see $D/node.log" >&2; exit 1; }
  sleep 0.1
done
t1=$(date +%s.%N); c1=$(cpu)
python3 -c "print('node start: ready after %.1f s, %.1f s of CPU' % ($t1 - $t0, $c1 / 100))"
grep -h "warm-up" "$D/node.log" || true
curl -sf -o /dev/null -X PUT -H 'Content-Type: application/json' \
  -d "{\"normalCap\":$W,\"burstCap\":$W,\"minCap\":1}" "$API/api/governor"

python3 -c "import sys; print('accountId,cursor'); [print(f'acct-{i},c-{i % 7}') for i in range(int(sys.argv[1]))]" "$ITEMS" >"$D/night.csv"
echo "load before the first run: $(load)"
t2=$(date +%s.%N); c2=$(cpu); threads >"$D/threads.0"
curl -sf -o /dev/null -X POST -H 'Content-Type: text/csv' --data-binary "@$D/night.csv" \
  "$API/api/runs?job=night&businessDate=2026-12-01&deadline=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)"
until curl -sf "$API/api/runs/night%2F2026-12-01" | grep -q '"state":"SUCCEEDED"'; do
  kill -0 $NODE 2>/dev/null || { echo "the node exited: see $D/node.log" >&2; exit 1; }
  sleep 0.1
done
t3=$(date +%s.%N); c3=$(cpu); threads >"$D/threads.1"
python3 -c "t = $t3 - $t2; print('first run: $ITEMS items in %.1f s, %.0f items/s, node CPU %.2f ms/item (load %s)' % (t, $ITEMS / t, ($c3 - $c2) * 10 / $ITEMS, '$(load)'))"
python3 "$(dirname "$0")/thread-cpu.py" "$D/threads.0" "$D/threads.1" "$(python3 -c "print(10000 / $ITEMS)")" us/item 20
kill $NODE; wait $NODE 2>/dev/null || true; NODE=

if [ "${SKIP_DB_SCHEDULER:-0}" != 1 ]; then
  echo "load before the bench: $(load)"
  java -jar "$BENCH_JAR" --provider-comparison --sim-url "http://127.0.0.1:$SIM_PORT" \
    --items "$ITEMS" --warmup 0 --workers "$W" --scheduler-threads "$W" --databases postgres \
    --db-url "$FENCEKEEPER_DB_URL" --db-user "${FENCEKEEPER_DB_USER:-}" \
    --db-password "${FENCEKEEPER_DB_PASSWORD:-}" --skip-pekko-floor --work-dir "$D/bench" \
    | tee "$D/bench.log" | grep -E "items/s|tasks/s|ratio" || true
fi
