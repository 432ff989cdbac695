#!/bin/bash
# Initialise the cluster on first start (user/db/password from POSTGRES_*), then run it.
set -euo pipefail
BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
: "${POSTGRES_USER:=envfactory}" "${POSTGRES_DB:=envfactory}" "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
mkdir -p "$PGDATA" /run/postgresql
chown -R postgres:postgres "$PGDATA" /run/postgresql
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp); echo "$POSTGRES_PASSWORD" > "$pwfile"; chown postgres "$pwfile"
  gosu postgres "$BIN/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256
  rm -f "$pwfile"
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  gosu postgres "$BIN/postgres" -D "$PGDATA" -c listen_addresses='' & pid=$!
  until gosu postgres "$BIN/pg_isready" -q -h /run/postgresql; do sleep 0.2; done
  gosu postgres psql -h /run/postgresql -U "$POSTGRES_USER" -d postgres -v ON_ERROR_STOP=1 \
      -c "CREATE DATABASE \"$POSTGRES_DB\""
  kill "$pid"; wait "$pid" || true
fi
exec gosu postgres "$BIN/postgres" -D "$PGDATA" -c listen_addresses='*'
