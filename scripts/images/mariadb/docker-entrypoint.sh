#!/bin/sh
# MariaDB from Debian's packages under the contract of the official mariadb image: on first start
# it initialises /var/lib/mysql, sets the root password (MARIADB_ROOT_PASSWORD, or an empty or random
# one when MARIADB_ALLOW_EMPTY_ROOT_PASSWORD / MARIADB_RANDOM_ROOT_PASSWORD say so) for root@localhost
# and root@MARIADB_ROOT_HOST (default %), creates MARIADB_DATABASE and MARIADB_USER with
# MARIADB_PASSWORD (all privileges on that database), runs /docker-entrypoint-initdb.d/*.sql and *.sh,
# all on a server without networking, then runs the command. MYSQL_* names are accepted for each
# MARIADB_* one. Arguments starting with '-' are options to mariadbd.
set -eu

if [ "${1#-}" != "$1" ]; then set -- mariadbd "$@"; fi

env_of() { # the MARIADB_ variable $1, else its MYSQL_ alias, else $2
  eval "v=\${MARIADB_$1:-\${MYSQL_$1:-}}"
  printf '%s' "${v:-${2:-}}"
}

if [ "$1" = mariadbd ] || [ "$1" = mysqld ]; then
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld /var/lib/mysql
  if [ ! -d /var/lib/mysql/mysql ]; then
    root_password="$(env_of ROOT_PASSWORD)"
    if [ -z "$root_password" ] && [ -n "$(env_of RANDOM_ROOT_PASSWORD)" ]; then
      root_password="$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')"
      echo "GENERATED ROOT PASSWORD: $root_password"
    fi
    if [ -z "$root_password" ] && [ -z "$(env_of ALLOW_EMPTY_ROOT_PASSWORD)" ]; then
      echo 'error: Database is uninitialized and password option is not specified' >&2
      echo '  You need to specify one of MARIADB_ROOT_PASSWORD, MARIADB_ALLOW_EMPTY_ROOT_PASSWORD and MARIADB_RANDOM_ROOT_PASSWORD' >&2
      exit 1
    fi
    root_host="$(env_of ROOT_HOST %)"
    database="$(env_of DATABASE)"
    user="$(env_of USER)"
    password="$(env_of PASSWORD)"

    echo 'Initializing database files'
    mariadb-install-db --user=mysql --datadir=/var/lib/mysql --skip-test-db \
      --auth-root-authentication-method=normal --rpm > /dev/null
    echo 'Database files initialized'

    "$@" --user=mysql --skip-networking --socket=/run/mysqld/mysqld.sock --skip-log-bin &
    pid=$!
    i=0
    until mariadb --protocol=socket --socket=/run/mysqld/mysqld.sock -uroot -e 'SELECT 1' > /dev/null 2>&1; do
      i=$((i + 1))
      if [ "$i" -ge 600 ] || ! kill -0 "$pid" 2> /dev/null; then echo 'error: the temporary server did not start' >&2; exit 1; fi
      sleep 0.1
    done

    sql_string() { printf "'%s'" "$(printf '%s' "$1" | sed "s/\\\\/\\\\\\\\/g; s/'/\\\\'/g")"; }
    {
      echo "SET @@SESSION.SQL_LOG_BIN=0;"
      # Only root@localhost (and MariaDB's own accounts) survive: no anonymous users.
      echo "DELETE FROM mysql.global_priv WHERE user NOT IN ('mysql.sys', 'mariadb.sys', 'root', 'PUBLIC') OR (user = 'root' AND host <> 'localhost');"
      echo "FLUSH PRIVILEGES;"
      echo "ALTER USER 'root'@'localhost' IDENTIFIED BY $(sql_string "$root_password");"
      if [ "$root_host" != localhost ]; then
        echo "CREATE USER 'root'@$(sql_string "$root_host") IDENTIFIED BY $(sql_string "$root_password");"
        echo "GRANT ALL ON *.* TO 'root'@$(sql_string "$root_host") WITH GRANT OPTION;"
        echo "GRANT PROXY ON ''@'%' TO 'root'@$(sql_string "$root_host") WITH GRANT OPTION;"
      fi
      if [ -n "$database" ]; then echo "CREATE DATABASE IF NOT EXISTS \`$database\`;"; fi
      if [ -n "$user" ] && [ -n "$password" ]; then
        echo "CREATE USER $(sql_string "$user")@'%' IDENTIFIED BY $(sql_string "$password");"
        if [ -n "$database" ]; then echo "GRANT ALL ON \`$database\`.* TO $(sql_string "$user")@'%';"; fi
      fi
      echo "FLUSH PRIVILEGES;"
    } | mariadb --protocol=socket --socket=/run/mysqld/mysqld.sock -uroot

    for f in /docker-entrypoint-initdb.d/*; do
      case "$f" in
        *.sh) echo "running $f"; . "$f" ;;
        *.sql) echo "running $f"; mariadb --protocol=socket --socket=/run/mysqld/mysqld.sock -uroot \
          --password="$root_password" ${database:+"$database"} < "$f" ;;
      esac
    done

    kill "$pid" && wait "$pid"
    echo
    echo 'MariaDB init process done. Ready for start up.'
    echo
  fi
  set -- "$@" --user=mysql
fi

exec "$@"
