# shellcheck shell=bash
# shellcheck disable=SC2034  # the variables here are used by the scripts that source this file
# Shared by scripts/test and scripts/demo; sourced, not run. The caller sets PROG first.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
readonly ROOT
readonly BUILD_DIR=$ROOT/build
readonly PG_TMP=$ROOT/scripts/pg-tmp
readonly PGBOUNCER_TMP=$ROOT/scripts/pgbouncer-tmp
readonly CITUS_TMP=$ROOT/scripts/citus-tmp
readonly PG_BIN=/usr/lib/postgresql/15/bin
readonly TRIBUTARY_BIN_PATH=$BUILD_DIR/src/cli/tributary
readonly SOURCE_SERVER_BIN_PATH=$BUILD_DIR/tools/source-server/tributary-source-server

msg() { printf '%s: %s\n' "${PROG:-script}" "$*" >&2; }
die() { msg "error: $*"; exit 1; }

bootstrap() {
  "$ROOT/scripts/bootstrap" || die "scripts/bootstrap failed; fix what it says, then run this again"
}

build_project() {
  cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2 ||
    die "cmake configure failed; see above (a stale cache? try: rm -rf build)"
  cmake --build "$BUILD_DIR" -j"$(nproc)" >&2 || die "the build failed; fix the errors above, then run this again"
}

# Start a throwaway cluster in a new directory; sets PG_DIR and DB_URL. Pair with stop_cluster.
PG_DIR=
DB_URL=
start_cluster() {
  PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tributary-pg.XXXXXX") || die "cannot create a directory under ${TMPDIR:-/tmp}"
  DB_URL=$("$PG_TMP" start "$PG_DIR") || die "could not start PostgreSQL (scripts/pg-tmp start failed; see above)"
}

# Usage: stop_quietly TOOL DIR: `TOOL stop DIR` (scripts/pg-tmp, scripts/citus-tmp), quiet unless it
# fails. Safe to call when DIR is empty (never started) or gone already.
stop_quietly() {
  [[ -n $2 && -e $2 ]] || return 0
  local out
  out=$("$1" stop "$2" 2>&1) || { printf '%s\n' "$out" >&2; return 1; }
}

stop_cluster() { stop_quietly "$PG_TMP" "$PG_DIR"; }

# Start a throwaway Citus cluster (coordinator and two workers) when Citus is installed; sets
# CITUS_DIR and CITUS_URL, or says in one line why not and leaves them empty. Pair with stop_citus.
CITUS_DIR=
CITUS_URL=
start_citus() {
  local why
  if ! why=$("$CITUS_TMP" available 2>&1); then
    msg "the Citus suite is skipped: ${why#citus-tmp: }"
    return 0
  fi
  CITUS_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tributary-citus.XXXXXX") || die "cannot create a directory under ${TMPDIR:-/tmp}"
  CITUS_URL=$("$CITUS_TMP" start "$CITUS_DIR") || die "could not start the Citus cluster (scripts/citus-tmp start failed; see above)"
}

stop_citus() { stop_quietly "$CITUS_TMP" "$CITUS_DIR"; }

# Usage: stop_process PID [NAME]: TERM, up to 10 s grace, then KILL; reaps it.
stop_process() {
  local pid=$1 name=${2:-process $1} i
  kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    msg "$name did not stop within 10 s of SIGTERM; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}
