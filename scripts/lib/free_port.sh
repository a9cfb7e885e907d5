# shellcheck shell=bash
# A free TCP port on loopback, for the throwaway servers (pg-tmp, pgbouncer-tmp); sourced, not
# run. The caller defines die.

readonly FREE_PORT_MIN=20000
readonly FREE_PORT_MAX=60000

port_in_use() {
  local port=$1
  if command -v ss >/dev/null 2>&1 && [[ -n $(ss -Hltn "sport = :$port" 2>/dev/null) ]]; then
    return 0
  fi
  # A connect that succeeds means someone listens there.
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null
}

# From /dev/urandom: $RANDOM may repeat its sequence in subshells of older bash versions.
random_port() {
  local span=$((FREE_PORT_MAX - FREE_PORT_MIN + 1)) r
  r=$(od -An -N4 -tu4 /dev/urandom)
  printf '%s\n' $((FREE_PORT_MIN + ${r//[[:space:]]/} % span))
}

pick_free_port() {
  local port i
  for ((i = 0; i < 100; i++)); do
    port=$(random_port)
    if ! port_in_use "$port"; then
      printf '%s\n' "$port"
      return 0
    fi
  done
  die "found no free TCP port in $FREE_PORT_MIN-$FREE_PORT_MAX after 100 tries"
}
