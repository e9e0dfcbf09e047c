#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the reference server's tests and demos.
#
#   scripts/pg-cluster.sh start DIR   # install PostgreSQL if missing, create/start a cluster in
#                                     # DIR on a free localhost port (trust auth), print its URL
#   scripts/pg-cluster.sh url DIR     # print the URL of the running cluster in DIR
#   scripts/pg-cluster.sh stop DIR    # stop it (the files stay; start again reuses them)
#
# Idempotent: start on a running cluster prints its URL, stop on a stopped one does nothing.
# The URL is postgres://optimist@127.0.0.1:PORT/optimist. PostgreSQL refuses to run as root,
# so as root the cluster belongs to a system user, optimist-pg (created when missing).
set -euo pipefail

usage() { echo "usage: $0 start|stop|url DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
CMD=$1
mkdir -p "$2"
DIR="$(cd "$2" && pwd)"
DATA="$DIR/data"
DB_USER=optimist
DB_NAME=optimist
OS_USER=optimist-pg

# Debian keeps the server programs off PATH, one directory per major version: take the newest.
find_bin() {
    local d
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$d/initdb" ]; then echo "$d"; return 0; fi
    done
    return 1
}

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

install_postgres() {
    echo "pg-cluster: installing Debian's postgresql" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
}

# Runs a command as the cluster's owner.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u "$OS_USER" -- "$@"; else "$@"; fi
}

url() { echo "postgres://$DB_USER@127.0.0.1:$(cat "$DIR/port")/$DB_NAME"; }

running() { [ -f "$DATA/PG_VERSION" ] && as_owner "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start() {
    if [ "$(id -u)" -eq 0 ]; then
        id -u "$OS_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$OS_USER"
        chown -R "$OS_USER" "$DIR"
        if ! runuser -u "$OS_USER" -- test -w "$DIR"; then
            echo "pg-cluster: $OS_USER cannot reach $DIR (a parent directory is closed to other users)" >&2
            exit 1
        fi
    fi
    if running; then url; return 0; fi
    if [ ! -f "$DATA/PG_VERSION" ]; then
        rm -rf "$DATA"
        as_owner "$BIN/initdb" -D "$DATA" -U "$DB_USER" --auth=trust -E UTF8 --locale=C >"$DIR/initdb.log" 2>&1 \
            || { cat "$DIR/initdb.log" >&2; exit 1; }
    fi
    as_owner mkdir -p "$DIR/sock"
    # A free port: try random ones until one is free and the server starts on it (another
    # process may take a port between the check and the start).
    local attempt port
    for attempt in 1 2 3 4 5 6 7 8 9 10; do
        port=$((20000 + RANDOM % 40000))
        # A cluster started again keeps its port when it can, so its URL stays the same.
        if [ "$attempt" -eq 1 ] && [ -f "$DIR/port" ]; then port=$(cat "$DIR/port"); fi
        port_in_use "$port" && continue
        echo "$port" | as_owner tee "$DIR/port" >/dev/null
        if as_owner "$BIN/pg_ctl" -D "$DATA" -l "$DIR/server.log" -w -t 60 \
            -o "-p $port -k '$DIR/sock' -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null; then
            break
        fi
        running && break
        port=""
    done
    if [ -z "$port" ]; then echo "pg-cluster: the server did not start; see $DIR/server.log" >&2; tail -20 "$DIR/server.log" >&2 || true; exit 1; fi
    if [ "$(as_owner "$BIN/psql" -h 127.0.0.1 -p "$port" -U "$DB_USER" -d postgres -tAc \
            "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")" != 1 ]; then
        as_owner "$BIN/createdb" -h 127.0.0.1 -p "$port" -U "$DB_USER" "$DB_NAME"
    fi
    url
}

stop() {
    if running; then as_owner "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null; fi
}

case "$CMD" in
    start)
        BIN=$(find_bin) || { install_postgres; BIN=$(find_bin); }
        start ;;
    stop)
        BIN=$(find_bin) || exit 0   # nothing installed: nothing runs
        stop ;;
    url)
        BIN=$(find_bin) || { echo "pg-cluster: PostgreSQL is not installed" >&2; exit 1; }
        running || { echo "pg-cluster: no cluster runs in $DIR" >&2; exit 1; }
        url ;;
    *) usage ;;
esac
