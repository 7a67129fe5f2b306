#!/usr/bin/env bash
# The verification figure of docs/verification.md ("Figures"): how long verifying every item of a
# run takes, at a provider budget of 64 calls in flight, and the node's CPU per lookup.
#
#   scripts/verify-figure.sh [ITEMS]        # default 100000
#
# One `serve` node (C2 on, as serve nodes run) on a durable PostgreSQL started from the jar
# (`fencekeeper postgres`), a `sim-provider` process without latency, and the default provider's
# budget at FENCEKEEPER_PROVIDER_MAX_IN_FLIGHT=64 (override with BUDGET=n). A run of ITEMS accounts
# is uploaded (`run --url`) and watched to its end; then `fencekeeper verify RUN --json` checks
# every item. Printed: the verification's own time (requestedAt to endedAt), its rate, the node's
# CPU time over the verification (utime + stime from /proc/PID/stat) per lookup, the most calls
# the sim had in flight at once (run and verification), and the load average before and after
# (the machine may be shared: the figure is only as quiet as the machine). Everything listens on
# 127.0.0.1 only; the state lives in data/verify-figure (removed at the start), the processes are
# stopped at the end.
# Needs target/fencekeeper.jar (mvn -B -q package -DskipTests), curl, awk.
set -euo pipefail

ITEMS="${1:-100000}"
BUDGET="${BUDGET:-64}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STATE="$ROOT/data/verify-figure"
JAR="${FENCEKEEPER_JAR:-$ROOT/target/fencekeeper.jar}"
JAVA="${JAVA:-java}"
PG_PORT="${FENCEKEEPER_PG_PORT:-15442}"
SIM_PORT="${FENCEKEEPER_SIM_PORT:-9109}"
HTTP_PORT="${FENCEKEEPER_FIGURE_HTTP_PORT:-8091}"
MGMT_PORT="${FENCEKEEPER_FIGURE_MANAGEMENT_PORT:-8569}"
NODE_JVM_OPTS="${NODE_JVM_OPTS:--Xmx768m}"
RUN_ID="verify-figure/2026-11-29"
PIDS=()

[[ -f "$JAR" ]] || { echo "missing $JAR: run mvn -B -q package -DskipTests" >&2; exit 1; }

cleanup() {
  # the node first (its coordinated shutdown flushes the journal), PostgreSQL last
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    kill -TERM "${PIDS[i]}" 2>/dev/null || true
    for _ in $(seq 1 600); do kill -0 "${PIDS[i]}" 2>/dev/null || break; sleep 0.1; done
  done
}
trap cleanup EXIT

await_line() { # file, pattern, pid, what
  for _ in $(seq 1 1200); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || { echo "$4 exited:" >&2; tail -20 "$1" >&2; exit 1; }
    sleep 0.1
  done
  echo "$4 did not start; see $1" >&2; exit 1
}

rm -rf "$STATE"
mkdir -p "$STATE"

"$JAVA" -Xmx64m -XX:+UseSerialGC -jar "$JAR" postgres --data-dir "$STATE/postgres" \
  --port "$PG_PORT" --log-file "$STATE/postgres.log" >"$STATE/postgres.out" 2>&1 &
PIDS+=($!)
await_line "$STATE/postgres.out" "postgres ready" "${PIDS[-1]}" "PostgreSQL"

"$JAVA" -Xmx256m -XX:+UseSerialGC -jar "$JAR" sim-provider --port "$SIM_PORT" \
  >"$STATE/sim.log" 2>&1 &
PIDS+=($!)
await_line "$STATE/sim.log" "listening on" "${PIDS[-1]}" "sim-provider"

# shellcheck disable=SC2086
FENCEKEEPER_DB_URL="jdbc:postgresql://127.0.0.1:$PG_PORT/fencekeeper" \
  FENCEKEEPER_DB_USER=fencekeeper FENCEKEEPER_DB_PASSWORD="" \
  FENCEKEEPER_DATA_DIR="$STATE/node" FENCEKEEPER_HTTP_PORT="$HTTP_PORT" \
  FENCEKEEPER_MANAGEMENT_PORT="$MGMT_PORT" FENCEKEEPER_REMOTE_PORT=0 \
  FENCEKEEPER_PROVIDER=http FENCEKEEPER_PROVIDER_URL="http://127.0.0.1:$SIM_PORT/" \
  FENCEKEEPER_PROVIDER_MAX_IN_FLIGHT="$BUDGET" \
  "$JAVA" $NODE_JVM_OPTS -jar "$JAR" serve >"$STATE/node.log" 2>&1 &
NODE_PID=$!
PIDS+=("$NODE_PID")
for _ in $(seq 1 1200); do
  curl -fsS "http://127.0.0.1:$MGMT_PORT/health/ready" >/dev/null 2>&1 && break
  kill -0 "$NODE_PID" 2>/dev/null || { echo "the node exited:" >&2; tail -20 "$STATE/node.log" >&2; exit 1; }
  sleep 0.1
done

awk -v n="$ITEMS" 'BEGIN { print "accountId,cursor"; for (i = 1; i <= n; i++) printf "acct-%07d,c-%d\n", i, i % 7 }' \
  >"$STATE/accounts.csv"
echo "run of $ITEMS items (the provider's budget: $BUDGET in flight)..."
"$JAVA" -Xmx128m -XX:+UseSerialGC -jar "$JAR" run --url "http://127.0.0.1:$HTTP_PORT" \
  --job verify-figure --date 2026-11-29 --accounts "$STATE/accounts.csv" --deadline-in PT6H \
  >"$STATE/run.out" 2>&1 || { echo "the run did not succeed:" >&2; tail -20 "$STATE/run.out" >&2; exit 1; }
tail -12 "$STATE/run.out"

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
CPU_BEFORE="$(awk '{ print $14 + $15 }' "/proc/$NODE_PID/stat")"
"$JAVA" -Xmx128m -XX:+UseSerialGC -jar "$JAR" verify "$RUN_ID" --json \
  --url "http://127.0.0.1:$HTTP_PORT" >"$STATE/verify.json" 2>"$STATE/verify.err" || {
  echo "verify exited $?:" >&2; cat "$STATE/verify.err" "$STATE/verify.json" >&2; exit 1; }
CPU_AFTER="$(awk '{ print $14 + $15 }' "/proc/$NODE_PID/stat")"
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"

field() { grep -o "\"$1\" : [^,]*" "$STATE/verify.json" | head -1 | sed 's/.*: //; s/"//g'; }
REQUESTED="$(field requestedAt)"
ENDED="$(field endedAt)"
CHECKED="$(field checked)"
SECONDS_TAKEN="$(awk -v a="$(date -d "$REQUESTED" +%s.%N)" -v b="$(date -d "$ENDED" +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
PEAK="$(curl -fsS "http://127.0.0.1:$SIM_PORT/ledger" | grep -o '"peakInFlight":[0-9]*' | sed 's/.*://')"
awk -v items="$CHECKED" -v s="$SECONDS_TAKEN" -v c0="$CPU_BEFORE" -v c1="$CPU_AFTER" \
  -v tck="$(getconf CLK_TCK)" -v verdict="$(field verdict)" -v peak="$PEAK" -v budget="$BUDGET" \
  -v before="$LOAD_BEFORE" -v after="$LOAD_AFTER" 'BEGIN {
    cpu = (c1 - c0) / tck
    printf "verified %d items (%s) in %.1f s: %.0f items/s; node CPU %.1f s, %.0f us per lookup;", items, verdict, s, items / s, cpu, cpu * 1e6 / items
    printf " at most %d calls at once at the sim (budget %d); load average %s before, %s after\n", peak, budget, before, after
  }'
