#!/usr/bin/env bash
# A random nemesis at scale: three `serve` nodes on a PostgreSQL of their own run nights of ITEMS
# items while, every 20-60 s, a fault drawn from SEED strikes; then the nights are checked.
#
#   scripts/soak.sh ITEMS MINUTES SEED [NIGHTS]
#
#   ITEMS    items (accounts) per night, 1..5000000
#   MINUTES  the window, 1..1440: faults strike for this long, and every night's deadline is its end
#   SEED     an integer; the same seed gives the same faults in the same order (printed first)
#   NIGHTS   most nights, one after the other (default 0: as many as the window holds; a night
#            starts only while two minutes of the window are left)
#
# The faults (docs/testing.md, "The soak"), one at a time, each on a node of three drawn at random
# (the oldest, which carries the coordinator, included): kill -9 (a supervisor starts the node
# again, as Kubernetes would); SIGSTOP past the lease, then SIGCONT; a partition of the node's
# cluster port (iptables on its group id); the database stopped for 5-15 s; the node's clock moved
# 2-30 s ahead (libfaketime). Each night is a CSV upload, which faults strike as they strike the
# run: an upload cut off before its answer is sent again (to the next node), as its client must;
# a staging cut by a fault goes on by itself (docs/design.md, "Staging").
# At the end, with every fault healed: 0 duplicate effects, every DONE item's effect at the
# provider, 0 lost items, no quarantine, each run's counters equal to its journal, one writer per
# item at a time, each run's final state true to its deadline. It prints its seed first; the summary
# lists the faults, every node exit with its code, the nights and the checks.
#
# Environment: SOAK_DIR (default data/soak; the seed's directory in it is wiped first and kept
# after, with every log), SOAK_PORT_BASE (default 37000: PostgreSQL +0, the sim +1, node N's
# remoting +10+N, HTTP +20+N, management +30+N), SOAK_FAULTS (default
# kill,pause,partition,database,clock), SOAK_SIM_FLAGS (extra sim-provider flags, e.g.
# "--latency-ms 20"), SOAK_WORKERS (workers per node, default the product's), SOAK_NODE_JVM_OPTS.
# Needs root (iptables, setpriv), libfaketime (apt-get install faketime) unless SOAK_FAULTS leaves
# clock out, curl, and target/fencekeeper.jar, fencekeeper-postgres.jar, fencekeeper-bench.jar
# (mvn -B -q package -DskipTests).
#
# Exit: 0 every check held; 1 a check failed or could not be made (the summary says which); 64
# usage; 69 the soak could not start (a tool, a jar or a port missing, a process that did not come
# up).
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
JAR="$ROOT/target/fencekeeper.jar"
PG_JAR="$ROOT/target/fencekeeper-postgres.jar"
BENCH_JAR="$ROOT/target/fencekeeper-bench.jar"
JAVA="${JAVA:-java}"
LIBFAKETIME=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1

usage() {
  sed -n '5,11p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 64
}
[[ $# -ge 3 && $# -le 4 ]] || usage
ITEMS="$1" MINUTES="$2" SEED="$3" NIGHTS="${4:-0}"
[[ "$ITEMS" =~ ^[1-9][0-9]{0,6}$ && "$ITEMS" -le 5000000 ]] || { echo "ITEMS must be 1..5000000: $ITEMS" >&2; usage; }
[[ "$MINUTES" =~ ^[1-9][0-9]{0,3}$ && "$MINUTES" -le 1440 ]] || { echo "MINUTES must be 1..1440: $MINUTES" >&2; usage; }
[[ "$SEED" =~ ^-?[0-9]{1,18}$ ]] || { echo "SEED must be an integer: $SEED" >&2; usage; }
[[ "$NIGHTS" =~ ^[0-9]{1,4}$ ]] || { echo "NIGHTS must be 0..9999: $NIGHTS" >&2; usage; }

FAULTS="${SOAK_FAULTS:-kill,pause,partition,database,clock}"
[[ -n "$FAULTS" ]] || { echo "SOAK_FAULTS names no fault" >&2; usage; }
for f in ${FAULTS//,/ }; do
  case "$f" in
    kill | pause | partition | database | clock) ;;
    *) echo "SOAK_FAULTS: unknown fault $f (kill, pause, partition, database, clock)" >&2; usage ;;
  esac
done
BASE="${SOAK_PORT_BASE:-37000}"
DIR="${SOAK_DIR:-$ROOT/data/soak}/seed-$SEED"
PG_PORT=$BASE SIM_PORT=$((BASE + 1))
remote_port() { echo $((BASE + 10 + $1)); }
http_port() { echo $((BASE + 20 + $1)); }
mgmt_port() { echo $((BASE + 30 + $1)); }
NODE_JVM_OPTS="${SOAK_NODE_JVM_OPTS:--Xmx320m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}"
# SOAK_TIMINGS=test (the default): the test cluster's timings (docs/testing.md, "A process test on a
# loaded machine"): detection 3.5 s + decision 2 s + removal margin 2 s = 7.5 s < a 10 s lease, the
# partition inequality (docs/cluster.md). shipped: conf/cluster.conf as it ships, 26 s < 30 s.
TIMINGS="${SOAK_TIMINGS:-test}"
case "$TIMINGS" in
  test) LEASE_S=10 ;;
  shipped) LEASE_S=30 ;;
  *) echo "SOAK_TIMINGS must be test or shipped: $TIMINGS" >&2; usage ;;
esac
JOB="soak"
# the minority's group of a partition: node N runs with group GID_BASE+N (still root)
GID_BASE=$((47000 + ($$ % 1000) * 3))
CHAIN="FK_SOAK_$$"

echo "soak seed=$SEED items=$ITEMS minutes=$MINUTES nights=$([[ $NIGHTS == 0 ]] && echo "as many as fit" || echo "$NIGHTS") faults=$FAULTS timings=$TIMINGS (lease ${LEASE_S}s)"
echo "replay: SOAK_FAULTS=$FAULTS SOAK_TIMINGS=$TIMINGS scripts/soak.sh $ITEMS $MINUTES $SEED${4:+ $4}"

now_ms() { date +%s%3N; }
stamp() { date -u +%H:%M:%S; }
log() { echo "[$(stamp)] $*"; }
die() { echo "soak: $*" >&2; exit 69; }

# --- what the soak needs --------------------------------------------------------------------------
for f in "$JAR" "$PG_JAR" "$BENCH_JAR"; do [[ -f "$f" ]] || die "missing $f: run mvn -B -q package -DskipTests"; done
command -v curl >/dev/null || die "curl is needed"
[[ "$(id -u)" == 0 ]] || die "root is needed (iptables, setpriv)"
command -v setpriv >/dev/null || die "setpriv (util-linux) is needed"
command -v unshare >/dev/null || die "unshare (util-linux) is needed"
if [[ ",$FAULTS," == *,partition,* ]]; then
  iptables -S OUTPUT >/dev/null 2>&1 || die "iptables is needed for partitions (apt-get install iptables), or leave partition out of SOAK_FAULTS"
fi
if [[ ",$FAULTS," == *,clock,* ]]; then
  [[ -f "$LIBFAKETIME" ]] || die "libfaketime is needed for clock jumps (apt-get install faketime), or leave clock out of SOAK_FAULTS"
fi
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in $PG_PORT $SIM_PORT $(for n in 1 2 3; do remote_port $n; http_port $n; mgmt_port $n; done); do
  port_free "$p" || die "port $p is taken: choose another SOAK_PORT_BASE"
done

rm -rf "$DIR" && mkdir -p "$DIR" || die "cannot make $DIR"
SCHEDULE="$DIR/schedule" FAULT_LOG="$DIR/faults.log" EXITS="$DIR/exits.log" NIGHTS_FILE="$DIR/nights"
: >"$FAULT_LOG"; : >"$EXITS"; : >"$NIGHTS_FILE"
"$JAVA" -cp "$BENCH_JAR" io.fencekeeper.bench.soak.SoakMain schedule --seed "$SEED" \
  --minutes "$MINUTES" --faults "$FAULTS" --lease-seconds "$LEASE_S" >"$SCHEDULE" \
  || die "no schedule for SOAK_FAULTS=$FAULTS"
echo "logs: $DIR"
echo "faults drawn (number, seconds after the last healed, fault, node, seconds):"
head -5 "$SCHEDULE" | sed 's/^/  /'
[[ $(wc -l <"$SCHEDULE") -gt 5 ]] && echo "  ... $(($(wc -l <"$SCHEDULE") - 5)) more in $SCHEDULE"

# --- the processes ----------------------------------------------------------------------------------
pid_alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

start_postgres() {
  "$JAVA" -Xmx64m -XX:+UseSerialGC -jar "$PG_JAR" --data-dir "$DIR/postgres" --port "$PG_PORT" \
    --log-file "$DIR/postgres.log" >>"$DIR/postgres.out" 2>&1 &
  echo $! >"$DIR/postgres.pid"
  local before; before=$(grep -c "postgres ready" "$DIR/postgres.out" 2>/dev/null)
  for _ in $(seq 1 1200); do
    [[ $(grep -c "postgres ready" "$DIR/postgres.out" 2>/dev/null) -gt $before ]] && return 0
    pid_alive "$DIR/postgres.pid" || return 1
    sleep 0.1
  done
  return 1
}

stop_postgres() {
  pid_alive "$DIR/postgres.pid" || return 0
  local pid; pid=$(cat "$DIR/postgres.pid")
  kill -TERM "$pid"
  for _ in $(seq 1 900); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  return 1
}

# The outage: PostgreSQL itself stopped (a fast shutdown, SIGINT to the postmaster: every session is
# ended, "terminating connection due to administrator command") and started again with the command
# line it ran with (postmaster.opts), in a user namespace as the developer jar's zonky does (the
# server refuses to run as root): down for as long as the fault says, not for a JVM's start.
database_down() {
  local pid
  pid=$(head -1 "$DIR/postgres/postmaster.pid" 2>/dev/null) || return 1
  kill -INT "$pid" 2>/dev/null
  for _ in $(seq 1 600); do [[ -f "$DIR/postgres/postmaster.pid" ]] || return 0; sleep 0.1; done
  return 1
}
database_up() {
  local command
  eval "command=($(cat "$DIR/postgres/postmaster.opts"))"
  unshare -Uu "${command[@]}" >>"$DIR/postgres.log" 2>&1 &
  for _ in $(seq 1 1200); do
    [[ "$(sed -n 8p "$DIR/postgres/postmaster.pid" 2>/dev/null)" == ready* ]] && return 0
    sleep 0.1
  done
  return 1
}

ready() { curl -fsS --max-time 2 "http://127.0.0.1:$(mgmt_port "$1")/health/ready" >/dev/null 2>&1; }

# Node N as a supervisor runs it: started again whenever it exits, until the soak ends. A restart
# joins through the nodes that are ready (never through itself alone, which would form a second
# cluster on the same journal when it is cut off); node 1 lists itself first only when no other is.
supervise() {
  local n=$1 start=0 seeds m code pid
  while [[ ! -e "$DIR/stopping" ]]; do
    seeds=""
    for m in 1 2 3; do
      [[ $m != "$n" ]] && ready "$m" && seeds+="pekko://fencekeeper@127.0.0.1:$(remote_port "$m"),"
    done
    if [[ -z "$seeds" ]]; then
      for m in 1 2 3; do
        [[ $m == "$n" && $n != 1 ]] && continue
        seeds+="pekko://fencekeeper@127.0.0.1:$(remote_port "$m"),"
      done
    fi
    start=$((start + 1))
    echo "=== $(stamp) start $start of node $n, seeds ${seeds%,}" >>"$DIR/node-$n.log"
    (
      cd "$ROOT" || exit 1
      export FENCEKEEPER_DB_URL="jdbc:postgresql://127.0.0.1:$PG_PORT/fencekeeper"
      export FENCEKEEPER_DB_USER=fencekeeper FENCEKEEPER_DB_PASSWORD=""
      export FENCEKEEPER_PROVIDER=http FENCEKEEPER_PROVIDER_URL="http://127.0.0.1:$SIM_PORT"
      export FENCEKEEPER_DATA_DIR="$DIR/node-$n" FENCEKEEPER_REMOTE_HOST=127.0.0.1
      export FENCEKEEPER_REMOTE_PORT="$(remote_port "$n")" FENCEKEEPER_HTTP_PORT="$(http_port "$n")"
      export FENCEKEEPER_MANAGEMENT_PORT="$(mgmt_port "$n")" FENCEKEEPER_SEED_NODES="${seeds%,}"
      export FENCEKEEPER_LEASE="${LEASE_S}s" FENCEKEEPER_LOG_LEVEL=WARN
      [[ -n "${SOAK_WORKERS:-}" ]] && export FENCEKEEPER_WORKERS="$SOAK_WORKERS"
      if [[ -f "$LIBFAKETIME" ]]; then
        # the node's clock is the file's offset from the machine's, read again every second
        export LD_PRELOAD="$LIBFAKETIME" FAKETIME_TIMESTAMP_FILE="$DIR/node-$n.faketime"
        export FAKETIME_CACHE_DURATION=1
      fi
      # shellcheck disable=SC2086
      exec setpriv --regid $((GID_BASE + n)) --clear-groups "$JAVA" $NODE_JVM_OPTS -jar "$JAR" \
        serve --config "$DIR/soak.conf"
    ) >>"$DIR/node-$n.log" 2>&1 &
    pid=$!
    echo "$pid" >"$DIR/node-$n.pid"
    wait "$pid"; code=$?
    echo "$(now_ms) $n $pid $code" >>"$EXITS"
    [[ -e "$DIR/stopping" ]] && break
    sleep 1
  done
}

await_ready() {
  for _ in $(seq 1 900); do ready "$1" && return 0; sleep 0.2; done
  return 1
}

# --- the faults -------------------------------------------------------------------------------------
declare -A CLOCK_AHEAD=([1]=0 [2]=0 [3]=0)

oldest_node() {
  local m members
  for m in 1 2 3; do
    members=$(curl -fsS --max-time 5 "http://127.0.0.1:$(mgmt_port "$m")/cluster/members" 2>/dev/null) || continue
    for o in 1 2 3; do
      [[ "$members" == *"\"oldest\":\"pekko://fencekeeper@127.0.0.1:$(remote_port "$o")\""* ]] && { echo "$o"; return; }
    done
  done
  echo "?"
}

cut_off() { # node N's cluster port from the others', both ways
  local n=$1 others="" m
  for m in 1 2 3; do [[ $m != "$n" ]] && others+="$(remote_port "$m"),"; done
  iptables -N "$CHAIN" 2>/dev/null
  iptables -A "$CHAIN" -p tcp -m owner --gid-owner $((GID_BASE + n)) -m multiport --dports "${others%,}" -j DROP
  iptables -A "$CHAIN" -p tcp --dport "$(remote_port "$n")" -m owner ! --gid-owner $((GID_BASE + n)) -j DROP
  iptables -I OUTPUT -m comment --comment "$CHAIN" -j "$CHAIN"
}

heal_partition() {
  while iptables -D OUTPUT -m comment --comment "$CHAIN" -j "$CHAIN" 2>/dev/null; do :; done
  iptables -F "$CHAIN" 2>/dev/null; iptables -X "$CHAIN" 2>/dev/null
  return 0
}

# Sleeps that a TERM interrupts at once (bash runs a trap only once its foreground child is done)
nap() { sleep "$1" & wait $!; }

# Waits SECONDS of the gap. False once the window is over.
idle_for() {
  local left=$1
  while [[ $left -gt 0 ]]; do
    [[ -e "$DIR/window-over" ]] && return 1
    nap 1; left=$((left - 1))
  done
  [[ ! -e "$DIR/window-over" ]]
}

# Runs the schedule: each fault after its gap, while the window lasts;
# every fault is healed before the next gap starts and before the nemesis ends.
nemesis() {
  local number gap kind node length pid oldest t0 outage at target
  trap 'heal_partition; for m in 1 2 3; do pid_alive "$DIR/node-$m.pid" && kill -CONT "$(cat "$DIR/node-$m.pid")"; done; exit 0' TERM
  while read -r number gap kind node length <&3; do
    idle_for "$gap" || return 0
    oldest=$(oldest_node)
    at=$(stamp)
    target="node $node$([[ "$node" == "$oldest" ]] && echo " (oldest)" || echo " (oldest $oldest)")"
    case "$kind" in
      kill)
        pid=$(cat "$DIR/node-$node.pid" 2>/dev/null)
        kill -KILL "$pid" 2>/dev/null
        echo "$number|$at|kill -9|$target|-|pid $pid" >>"$FAULT_LOG" ;;
      pause)
        pid=$(cat "$DIR/node-$node.pid" 2>/dev/null)
        kill -STOP "$pid" 2>/dev/null; nap "$length"; kill -CONT "$pid" 2>/dev/null
        echo "$number|$at|SIGSTOP|$target|${length}s|pid $pid, lease ${LEASE_S}s" >>"$FAULT_LOG" ;;
      partition)
        cut_off "$node"; nap "$length"; heal_partition
        echo "$number|$at|partition|$target|${length}s|cluster port cut both ways" >>"$FAULT_LOG" ;;
      database)
        t0=$(now_ms)
        database_down
        nap "$(awk -v l="$length" -v e="$(( $(now_ms) - t0 ))" 'BEGIN { r = l - e / 1000; print (r > 0 ? r : 0) }')"
        if database_up; then
          outage=$(awk -v ms="$(( $(now_ms) - t0 ))" 'BEGIN { printf "%.1f", ms / 1000 }')
          echo "$number|$at|database down|PostgreSQL|${length}s|${outage}s from the stop until it answered again" >>"$FAULT_LOG"
        else
          echo "$number|$at|database down|PostgreSQL|${length}s|DID NOT START AGAIN: see $DIR/postgres.log" >>"$FAULT_LOG"
        fi ;;
      clock)
        CLOCK_AHEAD[$node]=$((CLOCK_AHEAD[$node] + length))
        echo "+${CLOCK_AHEAD[$node]}s" >"$DIR/node-$node.faketime"
        echo "$number|$at|clock jump|$target|+${length}s|now +${CLOCK_AHEAD[$node]}s" >>"$FAULT_LOG" ;;
    esac
    log "fault $(tail -1 "$FAULT_LOG" | cut -d'|' -f1,3-6 | tr '|' ' ')"
  done 3<"$SCHEDULE"
}

# --- cleaning up: only what this soak started ---------------------------------------------------------
NEMESIS_PID="" SUPERVISORS=()
cleanup() {
  touch "$DIR/stopping" "$DIR/window-over" 2>/dev/null
  [[ -n "$NEMESIS_PID" ]] && kill -TERM "$NEMESIS_PID" 2>/dev/null && wait "$NEMESIS_PID" 2>/dev/null
  heal_partition
  local m pid
  for m in 1 2 3; do
    pid_alive "$DIR/node-$m.pid" && { pid=$(cat "$DIR/node-$m.pid"); kill -CONT "$pid"; kill -TERM "$pid"; }
  done
  for m in 1 2 3; do
    pid_alive "$DIR/node-$m.pid" || continue
    pid=$(cat "$DIR/node-$m.pid")
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
  done
  for pid in "${SUPERVISORS[@]}"; do wait "$pid" 2>/dev/null; done
  pid_alive "$DIR/sim.pid" && kill -TERM "$(cat "$DIR/sim.pid")"
  stop_postgres
  # a postmaster the nemesis started again is stopped by the jar's pg_ctl; one it did not reach, here
  [[ -f "$DIR/postgres/postmaster.pid" ]] && kill -INT "$(head -1 "$DIR/postgres/postmaster.pid")" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- start ------------------------------------------------------------------------------------------
for n in 1 2 3; do echo "+0s" >"$DIR/node-$n.faketime"; done
if [[ "$TIMINGS" == test ]]; then
  cat >"$DIR/soak.conf" <<EOF
include file("$ROOT/conf/cluster.conf")
pekko.cluster.failure-detector.heartbeat-interval = 500ms
pekko.cluster.failure-detector.acceptable-heartbeat-pause = 3s
pekko.cluster.split-brain-resolver.stable-after = 2s
pekko.cluster.split-brain-resolver.down-all-when-unstable = 6s
pekko.cluster.sharding.rebalance-interval = 2s
pekko.cluster.gossip-interval = 300ms
pekko.cluster.leader-actions-interval = 300ms
pekko.coordinated-shutdown.phases.before-service-unbind.timeout = 5s
EOF
else
  echo "include file(\"$ROOT/conf/cluster.conf\")" >"$DIR/soak.conf"
fi
start_postgres || die "PostgreSQL did not start: $DIR/postgres.out"
log "PostgreSQL on :$PG_PORT"
# the sim holds every effect of every night: at 256 MB it ran out of heap in a 30-minute soak of
# 20,000-item nights (eight nights, 160,000 effects), and its night went PARTIAL for it
SIM_HEAP_MB=$((512 + ITEMS * 40 / 1000)); [[ $SIM_HEAP_MB -gt 8192 ]] && SIM_HEAP_MB=8192
# shellcheck disable=SC2086
"$JAVA" -Xmx${SIM_HEAP_MB}m -XX:+UseSerialGC -jar "$JAR" sim-provider --port "$SIM_PORT" --seed "$SEED" \
  ${SOAK_SIM_FLAGS:-} >"$DIR/sim.log" 2>&1 &
echo $! >"$DIR/sim.pid"
for _ in $(seq 1 300); do grep -q "listening on" "$DIR/sim.log" && break; sleep 0.1; done
grep -q "listening on" "$DIR/sim.log" || die "the sim did not start: $DIR/sim.log"
log "$(grep -o 'sim-provider listening.*' "$DIR/sim.log")"
for n in 1 2 3; do
  # its own error output: bash's "Killed" when a node it waits for is killed
  supervise "$n" 2>>"$DIR/supervisor.err" &
  SUPERVISORS+=($!)
  await_ready "$n" || die "node $n not ready: $DIR/node-$n.log"
  log "node $n ready (HTTP :$(http_port "$n"))"
done

# --- the nights -------------------------------------------------------------------------------------
api_nodes() { for m in 1 2 3; do echo "http://127.0.0.1:$(http_port "$m")"; done; }
run_path() { echo "/api/runs/${1//\//%2F}"; }

# GET a run from the first node that answers: its state, or nothing
run_state() {
  local url body
  for url in $(api_nodes); do
    body=$(curl -fsS --max-time 5 "$url$(run_path "$1")" 2>/dev/null) || continue
    echo "$body" | grep -o '"state":"[A-Z]*"' | head -1 | cut -d'"' -f4
    return 0
  done
}

# Creates night K (an upload, sent again to the next node while it gets no 2xx) and waits until it
# runs
create_night() {
  local k=$1 date csv run code url
  date=$(date -u -d "2026-01-01 + $((k - 1)) days" +%F)
  run="$JOB/$date"
  csv="$DIR/night-$k.csv"
  { echo "accountId,cursor"; seq -f "acct-%07.0f,c-$date" 1 "$ITEMS"; } >"$csv"
  log "night $k: creating $run ($ITEMS items, deadline $DEADLINE)"
  local state=""
  for _ in $(seq 1 120); do
    for url in $(api_nodes); do
      code=$(curl -sS --max-time 60 -o "$DIR/night-$k.create" -w '%{http_code}' -X POST \
        -H 'Content-Type: text/csv' --data-binary "@$csv" \
        "$url/api/runs?job=$JOB&businessDate=$date&deadline=$DEADLINE" 2>/dev/null)
      [[ "$code" =~ ^20[012]$ ]] && break 2
    done
    sleep 1
  done
  [[ "$code" =~ ^20[012]$ ]] || { log "night $k: not created: $code $(cat "$DIR/night-$k.create" 2>/dev/null)"; return 1; }
  for _ in $(seq 1 600); do
    state=$(run_state "$run")
    [[ -n "$state" && "$state" != STAGING ]] && break
    sleep 1
  done
  log "night $k: $state"
  NIGHT_RUN[$k]="$run" NIGHT_CSV[$k]="$csv" NIGHT_END[$k]=0
}

declare -A NIGHT_RUN NIGHT_CSV NIGHT_END
START_MS=$(now_ms)
WINDOW_END_MS=$((START_MS + MINUTES * 60000))
DEADLINE=$(date -u -d "@$((WINDOW_END_MS / 1000))" +%Y-%m-%dT%H:%M:%SZ)
WINDOW_END_MS=$(( $(date -u -d "$DEADLINE" +%s) * 1000 ))
log "window until $DEADLINE: every night's deadline"
NEMESIS_PID=""
night=1
create_night 1 || exit 1
nemesis 2>>"$DIR/nemesis.err" &
NEMESIS_PID=$!

# poll the nights; start the next when the last has ended, while a minute of the window is left
while :; do
  for k in "${!NIGHT_RUN[@]}"; do
    [[ "${NIGHT_END[$k]}" != 0 ]] && continue
    case "$(run_state "${NIGHT_RUN[$k]}")" in
      SUCCEEDED | PARTIAL | FAILED | CANCELLED)
        NIGHT_END[$k]=$(now_ms)
        log "night $k: $(run_state "${NIGHT_RUN[$k]}")" ;;
    esac
  done
  if [[ $(now_ms) -ge $WINDOW_END_MS && ! -e "$DIR/window-over" ]]; then
    touch "$DIR/window-over"
    log "window over: the nemesis heals and stops"
  fi
  if [[ "${NIGHT_END[$night]}" != 0 ]]; then
    if [[ $(( WINDOW_END_MS - $(now_ms) )) -ge 120000 && ( $NIGHTS == 0 || $night -lt $NIGHTS ) ]]; then
      night=$((night + 1))
      create_night "$night" || break
    else
      break
    fi
  fi
  # after the window: the nights get their close sweep, a lease and room for a loaded machine
  if [[ $(now_ms) -ge $((WINDOW_END_MS + 300000)) ]]; then
    log "a night has not ended 5 minutes after its deadline"
    break
  fi
  sleep 2
done
touch "$DIR/window-over"
wait "$NEMESIS_PID" 2>/dev/null
NEMESIS_PID=""
log "faults over; waiting for the three nodes"
for n in 1 2 3; do await_ready "$n" || log "node $n is not ready"; done

for k in $(printf '%s\n' "${!NIGHT_RUN[@]}" | sort -n); do
  printf '%s\t%s\t%s\t%s\n' "$k" "${NIGHT_RUN[$k]}" "${NIGHT_CSV[$k]}" "${NIGHT_END[$k]}" >>"$NIGHTS_FILE"
done
ahead=0
for n in 1 2 3; do
  a=$(tr -dc '0-9' <"$DIR/node-$n.faketime"); [[ ${a:-0} -gt $ahead ]] && ahead=$a
done

# --- the summary ------------------------------------------------------------------------------------
echo
echo "soak seed=$SEED items=$ITEMS minutes=$MINUTES: $(wc -l <"$FAULT_LOG") faults in $(( ($(now_ms) - START_MS) / 1000 )) s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "faults"
printf '  %-3s %-8s %-13s %-19s %-6s %s\n' "#" "at (UTC)" "fault" "target" "length" "seen"
while IFS='|' read -r number at kind target length note; do
  printf '  %-3s %-8s %-13s %-19s %-6s %s\n' "$number" "$at" "$kind" "$target" "$length" "$note"
done <"$FAULT_LOG"
for kind in "kill -9" SIGSTOP partition "database down" "clock jump"; do
  printf '  %-14s %d\n' "$kind" "$(cut -d'|' -f3 "$FAULT_LOG" | grep -cx "$kind")"
done
echo "node exits (137: killed by the soak; 75: downed by the cluster; others: see the node's log)"
while read -r at n pid code; do
  echo "  $(date -u -d "@$((at / 1000))" +%H:%M:%S) node $n pid $pid exit $code"
done < <(sort -n "$EXITS")
echo
code=0
"$JAVA" -Xmx1g -cp "$BENCH_JAR" io.fencekeeper.bench.soak.SoakMain check \
  --db-url "jdbc:postgresql://127.0.0.1:$PG_PORT/fencekeeper" --db-user fencekeeper \
  --sim-url "http://127.0.0.1:$SIM_PORT" --api-url "$(api_nodes | paste -sd,)" \
  --nights "$NIGHTS_FILE" --clock-ahead-seconds "$ahead" || code=1
echo
echo "soak seed=$SEED: $([[ $code == 0 ]] && echo "every check held" || echo "A CHECK FAILED")"
exit $code
