#!/bin/sh
# redis-server from Debian's packages under the contract of the official redis image: arguments
# starting with '-' (or a .conf file) are given to redis-server; the server runs as the redis user,
# in /data, reachable on every address with protected mode off (as the official image's default
# configuration is, for a server inside a container reached through a published port).
set -eu

if [ "${1#-}" != "$1" ] || [ "${1%.conf}" != "$1" ]; then set -- redis-server "$@"; fi

if [ "$1" = redis-server ]; then
  shift
  conf=""
  if [ $# -gt 0 ] && [ "${1%.conf}" != "$1" ]; then conf="$1"; shift; fi # a config file comes first
  set -- redis-server ${conf:+"$conf"} --bind '* -::*' --protected-mode no "$@"
  if [ "$(id -u)" = 0 ]; then
    chown redis:redis /data 2> /dev/null || true
    exec setpriv --reuid=redis --regid=redis --init-groups "$@"
  fi
fi

exec "$@"
