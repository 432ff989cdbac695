#!/usr/bin/env bash
# Start a throwaway PostgreSQL cluster for the store tests and print its URL.
#
# Idempotent: a second run finds the cluster already up and only prints the URL.
# Usage:  eval "$(scripts/start-postgres.sh)"      # prints: export ENVFACTORY_TEST_POSTGRES_URL=...
#         URL=$(scripts/start-postgres.sh --url)  # prints the bare URL
# Stop:   scripts/start-postgres.sh stop
# Knobs (env): PG_TEST_PORT (55432), PG_TEST_DATA (/tmp/pgdata), PG_TEST_DB (envfactory_test).
set -euo pipefail

PORT="${PG_TEST_PORT:-55432}"
DATA="$(realpath -m "${PG_TEST_DATA:-/tmp/pgdata}")"
DB="${PG_TEST_DB:-envfactory_test}"
SOCK="/tmp"
LOG="${DATA}.log"

log() { echo "start-postgres: $*" >&2; }

find_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

BIN="$(find_bin || true)"
if [ -z "$BIN" ]; then
  log "installing Debian's postgresql package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2
  BIN="$(find_bin)"
fi

# The server refuses to run as root: run it as the `postgres` OS user when we are root,
# from / (the caller's directory, e.g. a clone under /root, may be closed to that user).
as_pg() {
  if [ "$(id -u)" = 0 ]; then
    (cd / && su postgres -s /bin/sh -c "$(printf '%q ' "$@")")
  else
    "$@"
  fi
}

if [ "${1:-}" = "stop" ]; then
  as_pg "$BIN/pg_ctl" -D "$DATA" -m fast stop >&2 || true
  exit 0
fi

if [ ! -f "$DATA/PG_VERSION" ]; then
  log "initdb $DATA"
  mkdir -p "$DATA"
  [ "$(id -u)" = 0 ] && chown postgres: "$DATA"
  as_pg "$BIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >&2
fi
touch "$LOG"; [ "$(id -u)" = 0 ] && chown postgres: "$LOG"

if ! as_pg "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
  log "starting on port $PORT"
  as_pg "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 \
    -o "-p $PORT -k $SOCK -c listen_addresses=127.0.0.1 -c fsync=off" start >&2
fi

for _ in $(seq 1 60); do
  "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" && break
  sleep 0.5
done

exists="$("$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -Atc \
  "SELECT 1 FROM pg_database WHERE datname = '$DB'")"
if [ "$exists" != "1" ]; then
  "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres "$DB"
fi

URL="postgresql+psycopg://postgres@127.0.0.1:${PORT}/${DB}"
if [ "${1:-}" = "--url" ]; then
  echo "$URL"
else
  echo "export ENVFACTORY_TEST_POSTGRES_URL='$URL'"
fi
