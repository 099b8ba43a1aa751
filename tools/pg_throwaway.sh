#!/usr/bin/env bash
# A throwaway PostgreSQL server on 127.0.0.1, for the tests and for trying the team store.
#   tools/pg_throwaway.sh start DIR   makes a cluster in DIR, starts it on a free port, prints its URL
#   tools/pg_throwaway.sh stop DIR    stops it (DIR can then be deleted)
# PG_FSYNC=off makes it faster and not crash-safe (tests only; the benchmarks keep the default, on).
# initdb refuses to run as root: under root the cluster belongs to the `postgres` user instead.
set -euo pipefail
action="${1:?start or stop}"
dir="$(mkdir -p "${2:?a folder}" && cd "$2" && pwd)"

bindir="$(pg_config --bindir 2>/dev/null || true)"
if [ ! -x "$bindir/initdb" ]; then
  bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
fi
[ -x "$bindir/initdb" ] || { echo "no PostgreSQL server found: install it (Debian: apt-get install -y postgresql)" >&2; exit 2; }

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$action" in
start)
  password="$(python3 -c 'import secrets; print(secrets.token_hex(12))')"
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
  printf '%s\n' "$password" > "$dir/pw" && chmod 600 "$dir/pw"
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir/pw"; fi
  as_owner "$bindir/initdb" -D "$dir/data" -U wheypoint --pwfile="$dir/pw" -A scram-sha-256 --no-sync \
    --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
  rm -f "$dir/pw"
  as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start -o \
    "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir/data -c fsync=${PG_FSYNC:-on} -c max_connections=200" \
    >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
  echo "postgresql://wheypoint:$password@127.0.0.1:$port/postgres"
  ;;
stop)
  if [ -d "$dir/data" ]; then as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true; fi
  ;;
*) echo "start or stop, not $action" >&2; exit 2 ;;
esac
