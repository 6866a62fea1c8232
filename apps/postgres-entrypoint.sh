# What the Docker image's entrypoint does before it starts the server,
# sourced by /init as root: an empty $PGDATA is initialised as the image
# initialises it (initdb as postgres with POSTGRES_USER, POSTGRES_PASSWORD
# and POSTGRES_INITDB_ARGS; listen_addresses '*'; connections from other
# hosts by password, or POSTGRES_HOST_AUTH_METHOD; POSTGRES_DB created).
# initdb and the postgres it starts are ordinary executables, because a
# process that is no longer root cannot start a UKL program.
(
  bin=/usr/lib/postgresql/15/bin
  as_postgres() { su -s /bin/sh -c 'exec "$0" "$@"' -- postgres "$@"; }
  # The server checks that its library directory exists; the linked-in
  # modules need nothing in it.
  mkdir -p "$PGDATA" /var/run/postgresql /usr/lib/postgresql/15/lib
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  chmod 3777 /var/run/postgresql
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
    [ -n "$POSTGRES_PASSWORD" ] || [ "$auth" = trust ] ||
      ukl_fail "postgres: the database is uninitialized and POSTGRES_PASSWORD is not set (give -e POSTGRES_PASSWORD=..., or -e POSTGRES_HOST_AUTH_METHOD=trust to let anyone connect without one)"
    user=${POSTGRES_USER:-postgres}
    printf '%s\n' "$POSTGRES_PASSWORD" >/run/pgpass
    chown postgres /run/pgpass
    # shellcheck disable=SC2086  # POSTGRES_INITDB_ARGS is words, as the image splits it
    as_postgres $bin/initdb --username="$user" --pwfile=/run/pgpass --encoding=UTF8 \
      --locale=C $POSTGRES_INITDB_ARGS || ukl_fail "postgres: initdb failed (see the console)"
    rm -f /run/pgpass
    printf "\nlisten_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
    printf '\nhost all all all %s\n' "$auth" >>"$PGDATA/pg_hba.conf"
    db=${POSTGRES_DB:-$user}
    if [ "$db" != postgres ]; then
      echo "CREATE DATABASE \"$db\";" |
        as_postgres $bin/postgres --single -D "$PGDATA" -c exit_on_error=on postgres ||
        ukl_fail "postgres: could not create the database $db (see the console)"
    fi
    echo "PostgreSQL init process complete; ready for start up."
  fi
)
