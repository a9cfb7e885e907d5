# shellcheck shell=bash
# shellcheck disable=SC2034  # the variables here are used by the scripts that source this file
# What bench/run, bench/consume and bench/push share; sourced, not run. The caller sets PROG before
# sourcing it, and LOG_DIR (and LINE_WIDTH, the width of line's first column) before calling it.
# It builds on scripts/lib/common.sh: ROOT, BUILD_DIR, PG_DIR, DB_URL, start_cluster, stop_process.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=../scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/common.sh"

readonly MEASURE_BIN=$BUILD_DIR/bench/tributary-bench-measure
HZ=$(getconf CLK_TCK)
readonly HZ

SERVER_PIDS=()   # every source server start_server started, for the caller's cleanup

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

# parse_scenario_args ARG...: --quick, --help and scenario names (ALL_SCENARIOS, and EXTRA_SCENARIOS
# when set: chosen only by name). Sets QUICK and SCENARIOS (default: ALL_SCENARIOS).
parse_scenario_args() {
  local arg s ok choices=("${ALL_SCENARIOS[@]}" ${EXTRA_SCENARIOS[@]+"${EXTRA_SCENARIOS[@]}"})
  for arg in "$@"; do
    case $arg in
      --quick) QUICK=true ;;
      -h | --help) usage; exit 0 ;;
      -*) msg "unknown option '$arg'"; usage >&2; exit 2 ;;
      *)
        ok=false
        for s in "${choices[@]}"; do if [[ $arg == "$s" ]]; then ok=true; fi; done
        [[ $ok == true ]] || { msg "unknown scenario '$arg' (choose from: ${choices[*]})"; exit 2; }
        SCENARIOS+=("$arg") ;;
    esac
  done
  (( ${#SCENARIOS[@]} > 0 )) || SCENARIOS=("${ALL_SCENARIOS[@]}")
}

# build TARGET...: bootstrap, configure, and build only what the benchmark runs (a half-edited test
# elsewhere in the tree must not stop it); the output goes to LOG_DIR/build.log, shown on failure.
build() {
  bootstrap
  cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$LOG_DIR/build.log" 2>&1 ||
    { cat "$LOG_DIR/build.log" >&2; die "cmake configure failed"; }
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target "$@" \
    >>"$LOG_DIR/build.log" 2>&1 || { tail -n 40 "$LOG_DIR/build.log" >&2; die "the build failed"; }
}

# --- printing ------------------------------------------------------------------------------------

section() { printf '\n== %s ==\n' "$*"; }
line() { printf "  %s%-${LINE_WIDTH:-44}s %s\n" "${INDENT:-}" "$1" "$2"; }
calc() { awk "BEGIN { printf \"%.${2:-1}f\", $1 }"; }      # calc EXPR [DECIMALS]
summary() { local IFS='|'; SUMMARY+=("$*"); }               # summary FIELD...: one row of the summary
loadavg() { cut -d" " -f1-3 /proc/loadavg; }
cpu_model() { printf '%s x %s\n' "$(nproc)" "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"; }
# The commit measured, and whether src/ had changes on top of it.
tributary_version() {
  printf '%s%s\n' "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')" \
    "$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ' + uncommitted changes in src/')"
}

# --- the database --------------------------------------------------------------------------------

# psql on a database URL: unaligned, tuples only, stop on the first error; our own statements are
# kept out of pg_stat_statements (where it is loaded), so that it shows only tributary's.
readonly HARNESS_PGOPTIONS="-c client_min_messages=warning -c pg_stat_statements.track=none"
sql() { local url=$1; shift; PGOPTIONS=$HARNESS_PGOPTIONS "$PG_BIN/psql" -X -qAt -v ON_ERROR_STOP=1 -d "$url" "$@"; }
db_url() { printf '%s/%s\n' "${DB_URL%/*}" "$1"; }

# A fresh database NAME with the tributary schema; prints its URL.
new_db() {
  sql "$DB_URL" -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1"
  "$TRIBUTARY_BIN_PATH" --db "$(db_url "$1")" migrate >>"$LOG_DIR/setup.log" 2>&1 || die "migrate failed; see $LOG_DIR/setup.log"
  db_url "$1"
}
# Scenarios drop their database when done: 3 M rows take a gigabyte or more.
drop_db() { sql "$DB_URL" -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)"; }

# start_bench_cluster [CONF_LINE]...: pg-tmp's cluster plus what we measure with (statement counts,
# commit times) and any further settings given.
start_bench_cluster() {
  start_cluster
  { printf '# %s\n' "$PROG"
    printf '%s\n' "shared_preload_libraries = 'pg_stat_statements'" \
      'pg_stat_statements.track_utility = on' 'track_commit_timestamp = on' "$@"
  } >>"$PG_DIR/data/pg-tmp.conf"
  "$PG_TMP" restart "$PG_DIR" 2>>"$LOG_DIR/setup.log"
  sql "$DB_URL" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
}

reset_stats() { sql "$DB_URL" -c "SELECT pg_stat_statements_reset(), pg_stat_reset_shared('wal')" >/dev/null; }

# statements DB: statements executed in database DB since reset_stats (pg_stat_statements calls).
statements() {
  sql "$DB_URL" -c "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
                     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$1')"
}

# Waits until no backend of database DB is left but our own (sessions end just after their client), and a
# moment more for the postmaster to reap them: only then is their CPU in cluster_cpu_s.
wait_sessions_gone() {
  local i
  for ((i = 0; i < 50; i++)); do
    [[ $(sql "$DB_URL" -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$1' AND pid <> pg_backend_pid()") == 0 ]] && break
    sleep 0.1
  done
  sleep 0.2
}

# --- CPU -----------------------------------------------------------------------------------------

# proc_cpu_s PID: CPU seconds (user+sys, all threads) used so far by one running process.
proc_cpu_s() { awk -v hz="$HZ" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' "/proc/$1/stat"; }

# CPU seconds used so far by the whole PostgreSQL cluster: the postmaster, its live children, and
# (through the postmaster's cutime/cstime) every backend that has exited. Deltas of this are exact
# as long as no client session is still alive when the second sample is taken.
cluster_cpu_s() {
  local pm
  pm=$(head -n 1 "$PG_DIR/data/postmaster.pid")
  { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v pm="$pm" -v hz="$HZ" '
    { pid = $1; sub(/^.*\) /, "")        # after the command name: $2 = ppid, $12.. = utime stime cutime cstime
      if (pid == pm) t += $12 + $13 + $14 + $15; else if ($2 == pm) t += $12 + $13 }
    END { printf "%.2f\n", t / hz }'
}

# CPU seconds used so far by everything on this machine, plus what the hypervisor stole from it
# (user nice system irq softirq steal in /proc/stat), to show how much of a run other work took:
# the figures mean little on a machine that is not quiet, and a shared VM may lose CPU to its host.
machine_busy_s() { awk -v hz="$HZ" '/^cpu / { printf "%.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / hz; exit }' /proc/stat; }

# rusage TAG FIELD: one field of what the measuring wrapper wrote (wall_s user_s sys_s maxrss_kb exit).
rusage() { sed -n "s/.*\b$2=\([^ ]*\).*/\1/p" "$LOG_DIR/$1.rusage"; }

# --- the source server ---------------------------------------------------------------------------

# start_server TAG ARGS...: a source server on a free port (PAYLOAD_BYTES per payload); sets SRV
# (base URL) and SRV_PID, and adds it to SERVER_PIDS.
start_server() {
  local out=$LOG_DIR/server-$1.out i=0
  shift
  : >"$out"
  "$SOURCE_SERVER_BIN_PATH" --port 0 --threads 32 --payload-bytes "$PAYLOAD_BYTES" "$@" \
    >"$out" 2>>"$LOG_DIR/server.log" &
  SRV_PID=$!
  SERVER_PIDS+=("$SRV_PID")
  until [[ -s $out ]]; do
    kill -0 "$SRV_PID" 2>/dev/null || die "the source server exited at once; see $LOG_DIR/server.log"
    (( i++ < 100 )) || die "the source server printed nothing within 10 s"
    sleep 0.1
  done
  SRV=$(sed -n 's/^listening on //p' "$out")
  [[ -n $SRV ]] || die "unexpected first line from the source server: $(head -n 1 "$out")"
}

stop_server() { stop_process "$SRV_PID" "the source server"; }

# Requests the server SRV has answered so far (the first "requests" in /_stats; per_source has more).
server_requests() { curl -sf "$SRV/_stats" | sed -n 's/^{"sources":[0-9]*,"requests":\([0-9]*\).*/\1/p'; }

# add_sources DB_URL PREFIX COUNT [source add flags]: registers PREFIX0.., through the CLI (4 at once),
# each at SOURCE_ROUTE on the server SRV: a path in which %s is the source's name (default
# sources/%s/events, today's protocol; styles/cursor/%s reads the same events in the cursor style).
add_sources() {
  local url=$1 prefix=$2 n=$3 route
  shift 3
  # shellcheck disable=SC2059 # the route is the format
  route=$(printf "${SOURCE_ROUTE:-sources/%s/events}" "$prefix{}")
  seq 0 $((n - 1)) | xargs -P 4 -I '{}' "$TRIBUTARY_BIN_PATH" --db "$url" source add "$prefix{}" \
    --url "$SRV/$route" "$@" >>"$LOG_DIR/setup.log"
}

# --- the loader's own SQL --------------------------------------------------------------------------

# turn_rate URL BATCH: the loader's own SQL for one turn with data (claim; then append of BATCH
# ~250-byte rows with the close, the one-statement path of batches up to 50), run by pgbench from
# 4 sessions for 5 s over the sources of URL's database, with no HTTP and no loader: prints the
# most turns/s that the turn's statements allow on this cluster (nothing if pgbench failed). It
# makes every source due and stores events: run it last on a database.
turn_rate() {
  local url=$1 batch=$2 script="$LOG_DIR/turn.sql" n rate
  n=$(sql "$url" -c "SELECT count(*) FROM tributary.sources")
  sql "$url" -c "UPDATE tributary.gates SET next_allowed_at = '-infinity'"
  cat >"$script" <<SQL
\set s random(1, $n)
SELECT (decision = 'pass')::int AS ok, coalesce(lease, 0) AS lease, coalesce(cursor, 0) AS cur
  FROM tributary.loader_claim(:s, $((0x74726962)), 7200) \gset
\if :ok
SELECT tributary.loader_append(:s, :cur, ARRAY(SELECT generate_series(:cur + 1, :cur + $batch))::bigint[],
       (SELECT jsonb_agg(jsonb_build_object('id', i, 'pad', repeat('x', 220))) FROM generate_series(:cur + 1, :cur + $batch) i),
       $((0x74726962)), :lease, 0, NULL);
\endif
SQL
  rate=$({ "$PG_BIN/pgbench" -n -M prepared -f "$script" -c 4 -j 2 -T 5 "$url" 2>>"$LOG_DIR/setup.log" || true; } |
    sed -n 's/^tps = \([0-9.]*\).*/\1/p')
  [[ -z $rate ]] || calc "$rate" 0
}
