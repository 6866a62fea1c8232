"""The postgres recipe as the Docker image runs it (issue 29, items 4 and 5):
the first start initialises a volume's cluster from POSTGRES_USER,
POSTGRES_PASSWORD and POSTGRES_DB, the server runs as postgres and serves
psql on the host; SIGTERM to `ukl run` is a fast shutdown that the next
start finds clean, and after QEMU is killed the next start recovers every
committed row from the WAL.  PL/pgSQL, the Snowball dictionaries and
pg_stat_statements are linked in, and found by CREATE EXTENSION, LANGUAGE C
and LOAD; so are the encoding conversions and libpqwalreceiver, which a
subscription uses.  Under UKL and on Linux."""
import os
import signal
import subprocess
import time

import pytest

from ukl.guest import net
from uklcli import Run, assert_one_line_error, ukl, until_started

# The same tests on stock Linux need a second build of PostgreSQL (about six
# minutes), which CI's hour cannot hold: UKL_POSTGRES_BASELINE=1 runs them.
CONFIGS = ["ukl", pytest.param("baseline", marks=pytest.mark.skipif(
    not os.environ.get("UKL_POSTGRES_BASELINE"),
    reason="a second PostgreSQL build; set UKL_POSTGRES_BASELINE=1 (README)"))]
PGDATA = "/var/lib/postgresql/data"
ROWS = 200


def start(config, *args, data=None, env=()) -> tuple[Run, int, str]:
    """`ukl run postgres`, as `docker run postgres` is typed: the run, its host
    port, and the server's log until it was ready."""
    port = net.free_port()
    volume = ["-v", f"{data}:{PGDATA}"] if data else []
    run = Run("postgres", "--config", config, "-p", f"{port}:5432", *volume,
              *(w for kv in env for w in ("-e", kv)), *(["--", *args] if args else []))
    log = []
    for line in until_started(run.proc.stderr):
        log.append(line)
        # The port listens before the server accepts connections (a recovery).
        text = "".join(log)
        if "ukl: postgres is ready" in text and "ready to accept connections" in text:
            return run, port, text
    raise AssertionError("".join(log))


def psql(port, sql, user="postgres", db="postgres", password="secret") -> str:
    res = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(port), "-U", user, "-d", db,
                          "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql],
                         env={**os.environ, "PGPASSWORD": password}, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


@pytest.mark.parametrize("config", CONFIGS)
def test_a_volume_is_initialised_once_and_keeps_every_commit(tmp_path, config):
    alice = {"user": "alice", "db": "shop"}
    # 1. The first start initialises the cluster, as the image does.
    run, port, _ = start(config, data=tmp_path, env=["POSTGRES_PASSWORD=secret",
                                                  "POSTGRES_USER=alice", "POSTGRES_DB=shop"])
    with run:
        assert psql(port, "select current_user, current_database()", **alice) == "alice|shop"
        status = psql(port, "select pg_read_file('/proc/self/status')", **alice)
        assert "\nUid:\t999\t999\t999\t999\n" in status, status
        psql(port, "create table t (n int primary key); "
                   "insert into t select generate_series(1, 100)", **alice)
        run.signal(signal.SIGTERM)
        code, _, err = run.finish()
    assert code == 0, err
    assert "received fast shutdown request" in err and "database system is shut down" in err
    assert (tmp_path / "PG_VERSION").stat().st_uid == 999

    # 2. The next start finds it shut down cleanly, and needs no password to.
    run, port, log = start(config, data=tmp_path)
    with run:
        assert psql(port, "select count(*) from t", **alice) == "100"
        for n in range(101, ROWS + 1):          # each its own commit
            psql(port, f"insert into t values ({n})", **alice)
        run.kill_qemu()
        code, _, err = run.finish()
    assert code != 0
    assert "database system was shut down at" in log, log
    assert "not properly shut down" not in log

    # 3. After the kill, recovery from the WAL finds every commit.
    run, port, log = start(config, data=tmp_path)
    with run:
        assert psql(port, "select count(*), sum(n) from t", **alice) == \
            f"{ROWS}|{ROWS * (ROWS + 1) // 2}"
        run.signal(signal.SIGINT)
        code, _, err = run.finish()
    assert code == 0, err
    assert "not properly shut down; automatic recovery in progress" in log, log
    assert "redo done" in log


@pytest.mark.parametrize("config", CONFIGS)
def test_the_linked_in_modules_load_without_dlopen(config):
    run, port, _ = start(config, "-c", "shared_preload_libraries=pg_stat_statements",
                         "-c", "wal_level=logical", env=["POSTGRES_PASSWORD=secret"])
    with run:
        psql(port, "create function twice(n int) returns int language plpgsql as "
                   "$$ begin return 2 * n; end $$")
        assert psql(port, "select twice(21)") == "42"
        assert psql(port, "select to_tsvector('english', 'The quick foxes jumped')") == \
            "'fox':3 'jump':4 'quick':2"
        psql(port, "create extension pg_stat_statements")
        assert int(psql(port, "select sum(calls) from pg_stat_statements "
                              "where query like 'select twice%'")) >= 1
        # LANGUAGE C and LOAD, by both of a library's names; an absent one fails.
        psql(port, "create function handler() returns language_handler language c "
                   "as '$libdir/plpgsql', 'plpgsql_call_handler'")
        psql(port, "load 'plpgsql'; load '$libdir/dict_snowball'")
        res = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
                              "-XAtqc", "load 'pgcrypto'"], capture_output=True, text=True,
                             env={**os.environ, "PGPASSWORD": "secret"}, timeout=60)
        assert res.returncode != 0 and 'could not access file "pgcrypto"' in res.stderr
        # The encoding conversions, each its own library.
        assert psql(port, "select convert_to('caf\u00e9', 'LATIN1'), "
                          "convert_to('\u65e5\u672c', 'EUC_JP')") == "\\x636166e9|\\xc6fccbdc"
        # libpqwalreceiver, with its own libpq: a subscription to another
        # database of the same server copies its table, in a worker process.
        # (Its slot is made first: CREATE SUBSCRIPTION cannot make one in its
        # own cluster, as PostgreSQL's documentation says.)
        psql(port, "create database pub")
        psql(port, "create table t(a int primary key); insert into t values (1), (2), (3); "
                   "create publication p for table t", db="pub")
        psql(port, "select pg_create_logical_replication_slot('s', 'pgoutput')", db="pub")
        psql(port, "create table t(a int primary key)")
        psql(port, "create subscription s connection 'host=/var/run/postgresql dbname=pub "
                   "user=postgres password=secret' publication p with (create_slot = false)")
        deadline = time.monotonic() + 120
        while psql(port, "select count(*) from t") != "3":
            assert time.monotonic() < deadline, "the subscription copied nothing in 120s"
            time.sleep(1)
        run.signal(signal.SIGTERM)
        assert run.finish()[0] == 0


def test_a_first_start_without_a_password_is_refused():
    res = ukl("run", "postgres")
    assert_one_line_error(res, "POSTGRES_PASSWORD is not set")
