#!/usr/bin/env bash
# The same run on 1, 2 and 3 local nodes sharing one PostgreSQL, measured: what scale-out buys on
# this machine and what each item costs the coordinator, the dispatcher and the journal's database.
#
#   scripts/scale-out.sh [ITEMS] [NODE COUNTS...]      # default: 3000 items on 1 2 3 nodes
#
# For each node count: start that many `serve` nodes (conf/cluster.conf, ports 25531+, HTTP 8091+,
# management 8569+) on one target/fencekeeper-postgres.jar (port ${FENCEKEEPER_PG_PORT:-15433}, not the
# local cluster's 15432, data in data/scale-out/postgres, kept) or on FENCEKEEPER_DB_URL, and one sim-provider
# (${FENCEKEEPER_SIM_PORT:-9199}, latency SIM_LATENCY_MS, default 0); upload a warm-up run of
# WARMUP_ITEMS accounts (default 2000, not measured: the JIT's first minute is not the steady state)
# then the measured run of ITEMS accounts (`run --url`, the same scope on a new business date each
# time); stop the nodes. Measured over the measured run only:
#   items/s            done / (endedAt - createdAt), as the run reports it
#   node CPU/item      utime+stime of every node process (/proc/<pid>/stat), per item
#   singleton node     node 1 (the oldest: it hosts the run coordinator singleton, and like every
#                      node dispatches the items it hosts; checked against GET /api/cluster): its
#                      CPU per item by thread group (/proc/<pid>/task/*/stat, names without their
#                      numbers), and the share of its JFR execution samples (every 1 ms) whose
#                      outermost io.fencekeeper frame is the coordinator (run.RunCoordinator and its
#                      parts: LiveRuns, LiveRun, Slices, CloseSweep, run.governor) or the node's
#                      dispatcher (the dispatch package), applied to its process CPU: the
#                      coordinator's and the dispatcher's CPU per item
#   database CPU/item  PostgreSQL's CPU: the postmaster's own and its children's, live ones from
#                      /proc and exited ones from the postmaster's cutime/cstime (only for the
#                      PostgreSQL this script starts)
#   nodes w/o JIT      the same without the JIT compiler threads (C1/C2 CompilerThread) of every node:
#                      N JVMs on one machine each compile the same code, which a node on a machine of
#                      its own does once
#   ctx switches/item  voluntary + involuntary context switches of every node thread
#                      (/proc/<pid>/task/*/status), per item: how often a thread parked or was
#                      preempted; a wake-up costs CPU that grows with the machine's contention
# The night's figures (docs/bench.md, "A million-item night"), for every node count:
#   items/s per tenth  of the measured run, and the last tenth's rate over the second's
#   latency            the run view (GET /api/runs/{id}) and an item page (GET .../items?limit=100)
#                      on each node in turn every SAMPLE_EVERY seconds (default 1) while it runs:
#                      median, p90 and max (scripts/night-sampler.py)
#   ledger             the sim's ledger (reset after the warm-up): one effect per key, and as many
#                      keys as accounts with something to clean up
#   peak RSS           each node's VmHWM (/proc/<pid>/status) once the run has ended
#   prune              with PRUNE=1: POST /api/archive/prune (every run that ended before now) and
#                      the time until the run shows prunedAt, node 1's largest RSS meanwhile (every
#                      2 s), the archive's size and the rows deleted
# The sim holds every effect in memory: its heap is 512 MB plus 3 MB per 1,000 items (SIM_JVM_OPTS;
# at 1 MB per 1,000 a million-item night filled it at 860,000 effects and it spent its time in GC).
# Settings: IDLE_MEMBERS=1 starts nodes 2..N as members that neither host item shards nor work
# (FENCEKEEPER_HOST_SHARDS=off, FENCEKEEPER_WORKERS=0): node 1 does all the work, and the others cost
# only membership, so the difference to 1 node is what being a cluster costs and not what sharing
# the items costs. WORKERS per node (default 32, the product default), GOVERNOR_NORMAL_CAP and
# GOVERNOR_BURST_CAP (default: the product's 16 and 32, cluster-wide), NODE_JVM_OPTS, JFR=0 to skip
# the profile. Results go to stdout and data/scale-out/results.txt; logs, JFR recordings and the
# per-thread tables stay in data/scale-out/. Needs target/fencekeeper.jar and
# target/fencekeeper-postgres.jar, Linux /proc, python3, and the JDK's jcmd and jfr for the profile. The
# machine's other load is part of every figure: run it on a quiet machine, and more than once.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STATE="${FENCEKEEPER_SCALE_DIR:-$ROOT/data/scale-out}"
JAR="${FENCEKEEPER_JAR:-$ROOT/target/fencekeeper.jar}"
PG_JAR="${FENCEKEEPER_PG_JAR:-$ROOT/target/fencekeeper-postgres.jar}"
PG_PORT="${FENCEKEEPER_PG_PORT:-15433}"
SIM_PORT="${FENCEKEEPER_SIM_PORT:-9199}"
JAVA="${JAVA:-java}"
NODE_JVM_OPTS="${NODE_JVM_OPTS:--Xmx320m -XX:+UseSerialGC}"
WORKERS="${WORKERS:-32}"
WARMUP_ITEMS="${WARMUP_ITEMS:-2000}"
SIM_LATENCY_MS="${SIM_LATENCY_MS:-0}"
JFR="${JFR:-1}"
SAMPLE_EVERY="${SAMPLE_EVERY:-1}"
PRUNE="${PRUNE:-0}"
ITEMS="${1:-3000}"
SIM_JVM_OPTS="${SIM_JVM_OPTS:--Xmx$((512 + ITEMS * 3 / 1000))m -XX:+UseSerialGC}"
shift || true
COUNTS=("$@")
[[ ${#COUNTS[@]} -gt 0 ]] || COUNTS=(1 2 3)
TICKS="$(getconf CLK_TCK)"

[[ -f "$JAR" ]] || { echo "missing $JAR: run mvn -B -q package -DskipTests" >&2; exit 1; }
mkdir -p "$STATE"
# the JDK's profile settings with Java samples every 1 ms instead of 10: the coordinator and the
# dispatcher are a small share of a node, and 10 ms samples leave them a handful per run
JAVA_HOME_DIR="$(dirname "$(dirname "$(readlink -f "$(command -v "$JAVA")")")")"
sed '/name="jdk.ExecutionSample"/,/<\/event>/ s#control="method-sampling-java-interval">[^<]*<#control="method-sampling-java-interval">1 ms<#' \
  "$JAVA_HOME_DIR/lib/jfr/profile.jfc" >"$STATE/sampling.jfc"
RUN_TAG="$(date +%s)"
STARTED_PIDS=()

cleanup() {
  for pid in "${STARTED_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${STARTED_PIDS[@]}"; do
    for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
}
trap cleanup EXIT

wait_for_line() { # file pattern pid what
  for _ in $(seq 1 600); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || { echo "$4 exited; see $1" >&2; tail -20 "$1" >&2; return 1; }
    sleep 0.2
  done
  echo "$4 did not start; see $1" >&2; return 1
}

# utime+stime of one process, in clock ticks
proc_ticks() { awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$1/stat"; }

# PostgreSQL's CPU in ticks: the postmaster, its exited children (cutime+cstime), its live children
pg_ticks() {
  local pm="$1" total
  total="$(awk '{sub(/^.*\) /, ""); print $12 + $13 + $14 + $15}' "/proc/$pm/stat")"
  for stat in /proc/[0-9]*/stat; do
    awk -v pm="$pm" '{sub(/^.*\) /, ""); if ($2 == pm) print $12 + $13}' "$stat" 2>/dev/null
  done | awk -v t="$total" '{t += $1} END {print t}'
}

# CPU ticks of one process without its JIT compiler threads
proc_ticks_no_jit() {
  for stat in /proc/"$1"/task/*/stat; do
    awk '{name = $0; sub(/^[^(]*\(/, "", name); sub(/\).*$/, "", name);
          rest = $0; sub(/^.*\) /, "", rest); split(rest, f, " ");
          if (name !~ /^C[12] CompilerThre/) print f[12] + f[13]}' "$stat" 2>/dev/null || true
  done | awk '{t += $1} END {print t + 0}'
}

# context switches (voluntary + involuntary) of every thread of one process; exited threads' count
# is lost, so the pool threads that live through the run are what this sees
ctx_switches() {
  { cat /proc/"$1"/task/*/status 2>/dev/null || true; } \
    | awk '/^(voluntary|nonvoluntary)_ctxt_switches/ {t += $2} END {print t + 0}'
}

# per thread group of one process: "<ticks>\t<group>", names without their trailing numbers
thread_ticks() {
  for stat in /proc/"$1"/task/*/stat; do
    awk '{name = $0; sub(/^[^(]*\(/, "", name); sub(/\).*$/, "", name); gsub(/[-#]?[0-9]+$/, "", name);
          rest = $0; sub(/^.*\) /, "", rest); split(rest, f, " "); print f[12] + f[13] "\t" name}' \
      "$stat" 2>/dev/null || true
  done | awk -F'\t' '{a[$2] += $1} END {for (g in a) print a[g] "\t" g}'
}

# JFR execution samples by whose work they are: the outermost io.fencekeeper frame decides
jfr_shares() {
  jfr print --events jdk.ExecutionSample --stack-depth 128 "$1" | awk '
    function category(frame) {
      if (frame ~ /io\.fencekeeper\.run\.(RunCoordinator|LiveRuns?|Slices|CloseSweep|governor\.)/) return "coordinator";
      if (frame ~ /io\.fencekeeper\.dispatch\./) return "dispatcher";
      if (frame ~ /io\.fencekeeper\.run\./) return "run (other)";
      if (frame ~ /io\.fencekeeper\.worker\./) return "worker";
      if (frame ~ /io\.fencekeeper\.item\./) return "item entity";
      if (frame ~ /io\.fencekeeper\.provider\./) return "provider client";
      if (frame ~ /io\.fencekeeper\.api\./) return "http api";
      return "fencekeeper (other)";
    }
    function library(frame) {
      if (frame ~ /org\.apache\.pekko\.persistence|slick\.|org\.postgresql|com\.zaxxer/) return "journal (jdbc, persistence)";
      if (frame ~ /org\.apache\.pekko\.(remote|protobufv3)/) return "remoting";
      if (frame ~ /org\.apache\.pekko\.cluster/) return "cluster, sharding";
      if (frame ~ /com\.fasterxml|org\.apache\.pekko\.serialization/) return "serialization";
      if (frame ~ /org\.apache\.pekko\.http/) return "http server";
      if (frame ~ /org\.apache\.pekko\.stream/) return "streams";
      if (frame ~ /org\.apache\.pekko\.|^scala\./) return "actor runtime (mailboxes, scheduler, asks)";
      if (frame ~ /jdk\.internal\.net\.http/) return "provider client";
      return "jdk, other";
    }
    /^jdk\.ExecutionSample/ { n = 0; outer = ""; leaf = ""; next }
    /^[ \t]+[a-zA-Z_$][a-zA-Z0-9_$.]*\(.*\)/ {
      frame = $1; if (leaf == "") leaf = frame;
      if (frame ~ /^io\.fencekeeper\./) outer = frame;
      n++; next
    }
    /^}/ { if (n > 0) { c = outer != "" ? category(outer) : library(leaf); count[c]++; total++ } n = 0 }
    END { for (c in count) printf "%d %.4f %s\n", count[c], count[c] / total, c }' | sort -rn
}

start_postgres() {
  if [[ -n "${FENCEKEEPER_DB_URL:-}" ]]; then
    echo "journal: $FENCEKEEPER_DB_URL (database CPU not measured)"; PG_PID=""; return 0
  fi
  "$JAVA" -Xmx64m -XX:+UseSerialGC -jar "$PG_JAR" --data-dir "$STATE/postgres" \
    --port "$PG_PORT" --log-file "$STATE/postgres.log" >"$STATE/postgres.out" 2>&1 &
  STARTED_PIDS+=($!)
  wait_for_line "$STATE/postgres.out" "postgres ready" $! "postgres"
  PG_PID="$(head -1 "$STATE/postgres/postmaster.pid")"
  export FENCEKEEPER_DB_URL="jdbc:postgresql://127.0.0.1:$PG_PORT/fencekeeper"
  export FENCEKEEPER_DB_USER=fencekeeper FENCEKEEPER_DB_PASSWORD=""
  echo "journal: $FENCEKEEPER_DB_URL (postmaster pid $PG_PID)"
}

start_sim() {
  # shellcheck disable=SC2086
  "$JAVA" $SIM_JVM_OPTS -Dsun.net.httpserver.maxIdleConnections=4096 -jar "$JAR" sim-provider \
    --port "$SIM_PORT" --latency-ms "$SIM_LATENCY_MS" --threads 64 >"$STATE/sim.log" 2>&1 &
  STARTED_PIDS+=($!)
  wait_for_line "$STATE/sim.log" "listening on" $! "sim-provider"
}

write_conf() {
  {
    echo "include file(\"$ROOT/conf/cluster.conf\")"
    [[ -n "${GOVERNOR_NORMAL_CAP:-}" ]] && echo "fencekeeper.governor.normal-cap = $GOVERNOR_NORMAL_CAP"
    [[ -n "${GOVERNOR_BURST_CAP:-}" ]] && echo "fencekeeper.governor.burst-cap = $GOVERNOR_BURST_CAP"
    true
  } >"$STATE/scale-out.conf"
}

write_scope() {
  awk -v n="$1" 'BEGIN {print "accountId,cursor"; for (i = 1; i <= n; i++) printf "acct-%06d,c-1\n", i}' >"$2"
}

# IDLE_MEMBERS=1: node 1 works, the others are members only
workers_of() { [[ "${IDLE_MEMBERS:-0}" == 1 && "$1" -gt 1 ]] && echo 0 || echo "$WORKERS"; }
host_shards_of() { [[ "${IDLE_MEMBERS:-0}" == 1 && "$1" -gt 1 ]] && echo off || echo auto; }

start_nodes() { # count
  NODE_PIDS=()
  local seeds=""
  for n in $(seq 1 "$1"); do
    # shellcheck disable=SC2086
    FENCEKEEPER_DATA_DIR="$STATE/node-$n" FENCEKEEPER_REMOTE_PORT=$((25530 + n)) \
      FENCEKEEPER_HTTP_PORT=$((8090 + n)) FENCEKEEPER_MANAGEMENT_PORT=$((8568 + n)) \
      FENCEKEEPER_SEED_NODES="$seeds" FENCEKEEPER_WORKERS="$(workers_of "$n")" \
      FENCEKEEPER_HOST_SHARDS="$(host_shards_of "$n")" FENCEKEEPER_LOG_LEVEL=WARN \
      FENCEKEEPER_PROVIDER=http FENCEKEEPER_PROVIDER_URL="http://127.0.0.1:$SIM_PORT" \
      "$JAVA" $NODE_JVM_OPTS -jar "$JAR" serve --config "$STATE/scale-out.conf" \
      >"$STATE/nodes-$1-node-$n.log" 2>&1 &
    NODE_PIDS+=($!)
    STARTED_PIDS+=($!)
    for _ in $(seq 1 600); do
      curl -fsS "http://127.0.0.1:$((8568 + n))/health/ready" >/dev/null 2>&1 && break
      kill -0 "${NODE_PIDS[-1]}" 2>/dev/null || { tail -20 "$STATE/nodes-$1-node-$n.log" >&2; exit 1; }
      sleep 0.2
    done
    seeds="pekko://fencekeeper@127.0.0.1:25531"
  done
}

stop_nodes() {
  local i
  for ((i = ${#NODE_PIDS[@]} - 1; i >= 0; i--)); do
    kill -TERM "${NODE_PIDS[$i]}" 2>/dev/null || true
    for _ in $(seq 1 600); do kill -0 "${NODE_PIDS[$i]}" 2>/dev/null || break; sleep 0.1; done
  done
}

peak_rss_mb() { awk '/^VmHWM/ {printf "%d", $2 / 1024}' "/proc/$1/status"; }
rss_mb() { awk '/^VmRSS/ {printf "%d", $2 / 1024}' "/proc/$1/status"; }

run_scope() { # date scope-file output
  "$JAVA" -Xmx128m -XX:+UseSerialGC -jar "$JAR" run --url "http://127.0.0.1:8091" \
    --job scale-out --date "$1" --accounts "$2" >"$3" 2>&1 && return 0
  echo "run scale-out/$1 did not succeed (the machine's load: $(cut -d' ' -f1-3 /proc/loadavg)):" >&2
  tail -12 "$3" >&2
  return 1
}

start_postgres
start_sim
write_conf
write_scope "$ITEMS" "$STATE/scope.csv"
write_scope "$WARMUP_ITEMS" "$STATE/warmup.csv"
RESULTS="$STATE/results.txt"
{
  echo "scale-out $(date -u +%FT%TZ): $ITEMS items, workers $WORKERS per node, sim latency ${SIM_LATENCY_MS} ms,"
  echo "governor caps ${GOVERNOR_NORMAL_CAP:-16}/${GOVERNOR_BURST_CAP:-32}, JVM $NODE_JVM_OPTS, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)${IDLE_MEMBERS:+, nodes 2.. idle members}"
  printf '%-6s %9s %9s %12s %12s %12s %14s %14s %14s %12s\n' nodes items/s run_s "nodes_ms/it" "no_jit_ms/it" "ctxsw/it" "node1_ms/it" "coord_ms/it" "disp_ms/it" "db_ms/it"
} | tee "$RESULTS"

# business dates from this invocation's start, so that a database used before never answers an
# earlier invocation's run instead of measuring a new one (a create is idempotent)
day=$(( (RUN_TAG / 10) % 15000 ))
for count in "${COUNTS[@]}"; do
  start_nodes "$count"
  node1="${NODE_PIDS[0]}"
  coordinator="$(curl -fsS http://127.0.0.1:8091/api/cluster | grep -o '"coordinator":"[^"]*"' | head -1 || true)"
  if [[ "$WARMUP_ITEMS" -gt 0 ]]; then
    day=$((day + 1))
    run_scope "$(date -u -d "2000-01-01 + $day days" +%F)" "$STATE/warmup.csv" "$STATE/nodes-$count-warmup.txt"
  fi
  day=$((day + 1))
  date="$(date -u -d "2000-01-01 + $day days" +%F)"
  [[ "$JFR" == 1 ]] && jcmd "$node1" JFR.start name=scaleout settings="$STATE/sampling.jfc" \
    filename="$STATE/nodes-$count-node-1-$RUN_TAG.jfr" >/dev/null
  declare -A before=() before_no_jit=() before_ctx=()
  for pid in "${NODE_PIDS[@]}"; do
    before[$pid]="$(proc_ticks "$pid")"
    before_no_jit[$pid]="$(proc_ticks_no_jit "$pid")"
    before_ctx[$pid]="$(ctx_switches "$pid")"
  done
  thread_ticks "$node1" >"$STATE/threads-before.txt"
  db_before="${PG_PID:+$(pg_ticks "$PG_PID")}"
  curl -fsS -o /dev/null -X POST "http://127.0.0.1:$SIM_PORT/admin/reset" # the measured run's ledger
  apis=()
  for n in $(seq 1 "$count"); do apis+=("http://127.0.0.1:$((8090 + n))"); done
  samples="$STATE/nodes-$count-samples.txt"
  rm -f "$samples"
  python3 "$ROOT/scripts/night-sampler.py" sample "scale-out/$date" "$samples" "$SAMPLE_EVERY" "${apis[@]}" &
  sampler=$!
  STARTED_PIDS+=("$sampler")
  run_scope "$date" "$STATE/scope.csv" "$STATE/nodes-$count-run.txt"
  db_after="${PG_PID:+$(pg_ticks "$PG_PID")}"
  wait "$sampler" || true
  thread_ticks "$node1" >"$STATE/threads-after.txt"
  nodes_ticks=0 no_jit_ticks=0 switches=0
  for pid in "${NODE_PIDS[@]}"; do
    nodes_ticks=$((nodes_ticks + $(proc_ticks "$pid") - ${before[$pid]}))
    no_jit_ticks=$((no_jit_ticks + $(proc_ticks_no_jit "$pid") - ${before_no_jit[$pid]}))
    switches=$((switches + $(ctx_switches "$pid") - ${before_ctx[$pid]}))
  done
  node1_ticks=$(( $(proc_ticks "$node1") - ${before[$node1]} ))
  [[ "$JFR" == 1 ]] && jcmd "$node1" JFR.stop name=scaleout >/dev/null
  rate="$(grep -o 'throughput *[0-9]*' "$STATE/nodes-$count-run.txt" | grep -o '[0-9]*$' || echo '?')"
  seconds="$(grep -o 'duration *[0-9.]*' "$STATE/nodes-$count-run.txt" | grep -o '[0-9.]*$' || echo '?')"
  state="$(grep -o 'scale-out/[0-9-]*: [A-Z]*' "$STATE/nodes-$count-run.txt" | tail -1)"
  per_item() { awk -v t="$1" -v hz="$TICKS" -v n="$ITEMS" 'BEGIN {printf "%.3f", t / hz * 1000 / n}'; }
  coord="-" disp="-"
  if [[ "$JFR" == 1 ]]; then
    jfr_shares "$STATE/nodes-$count-node-1-$RUN_TAG.jfr" >"$STATE/nodes-$count-node-1-shares.txt"
    share() { awk -v c="$1" '{n = $0; sub(/^[0-9]+ [0-9.]+ /, "", n); if (n == c) s = $2} END {print s + 0}' \
      "$STATE/nodes-$count-node-1-shares.txt"; }
    coord="$(awk -v s="$(share coordinator)" -v t="$node1_ticks" -v hz="$TICKS" -v n="$ITEMS" 'BEGIN {printf "%.3f", s * t / hz * 1000 / n}')"
    disp="$(awk -v s="$(share dispatcher)" -v t="$node1_ticks" -v hz="$TICKS" -v n="$ITEMS" 'BEGIN {printf "%.3f", s * t / hz * 1000 / n}')"
  fi
  db="-"
  [[ -n "${PG_PID:-}" ]] && db="$(per_item $((db_after - db_before)))"
  printf '%-6s %9s %9s %12s %12s %12s %14s %14s %14s %12s   %s\n' "$count" "$rate" "$seconds" \
    "$(per_item "$nodes_ticks")" "$(per_item "$no_jit_ticks")" \
    "$(awk -v s="$switches" -v n="$ITEMS" 'BEGIN {printf "%.1f", s / n}')" \
    "$(per_item "$node1_ticks")" "$coord" "$disp" "$db" "$state" | tee -a "$RESULTS"
  {
    echo "  nodes=$count: $coordinator; node 1 CPU by thread group, ms per item (top 8):"
    awk -F'\t' -v hz="$TICKS" -v n="$ITEMS" 'NR == FNR {b[$2] = $1; next}
      {d = $1 - b[$2]; if (d > 0) printf "%.3f\t%s\n", d / hz * 1000 / n, $2}' \
      "$STATE/threads-before.txt" "$STATE/threads-after.txt" \
      | sort -rn | head -8 | sed 's/^/    /'
    if [[ "$JFR" == 1 ]]; then
      echo "  node 1 JFR execution samples by whose work (samples, share):"
      sed 's/^/    /' "$STATE/nodes-$count-node-1-shares.txt"
    fi
    echo "  the night (load $(cut -d' ' -f1-3 /proc/loadavg) at its end; samples every ${SAMPLE_EVERY} s on each node):"
    python3 "$ROOT/scripts/night-sampler.py" summary "$samples"
    python3 "$ROOT/scripts/night-sampler.py" ledger "http://127.0.0.1:$SIM_PORT" "$STATE/scope.csv" || true
    printf '  peak RSS:'
    for n in $(seq 1 "$count"); do printf ' node %d %d MiB' "$n" "$(peak_rss_mb "${NODE_PIDS[$((n - 1))]}")"; done
    echo
    # every run that ended before now: the warm-up's too (first), then the measured one's
    [[ "$PRUNE" == 1 ]] && python3 "$ROOT/scripts/night-sampler.py" prune "http://127.0.0.1:8091" \
      "scale-out/$date" "$node1"
    true
  } | tee -a "$RESULTS"
  stop_nodes
done
echo "results: $RESULTS"
