#!/bin/sh
# FerretDB (tools/ferretdb-runner: FerretDB 1.24 embedded, SQLite handler) on every address, port
# 27017, data in /state. Arguments starting with '-' are options to the runner (see its -h).
# It prints the server's MongoDB URI once it listens.
set -eu

if [ "${1#-}" != "$1" ]; then set -- ferretdb "$@"; fi

if [ "$1" = ferretdb ]; then
  shift
  exec ferretdb-runner -dir /state -listen 0.0.0.0:27017 -log-level "${FERRETDB_LOG_LEVEL:-warn}" "$@"
fi

exec "$@"
