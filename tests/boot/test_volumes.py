"""Read-write volumes (issue 19, part 2; issue 29): a host directory mounted
live in the guest over virtiofs.  Redis's data survives a killed guest (the
AOF, fsynced on every write) and a graceful stop (the RDB), and so do SQLite's
commits in WAL mode (whose index is a shared writable mapping), under UKL and
on Linux; a shared writable mapping's msync reaches the host's file; a full
volume gives the program ENOSPC."""
import os
import signal
import sqlite3
import subprocess
import time

import pytest

from ukl.build import programs
from ukl.guest import net
from uklcli import Run, ukl

KEYS = 5000
AOF = ("--appendonly", "yes", "--appendfsync", "always")


def start_redis(data, config, *extra) -> tuple[Run, int, float]:
    """`ukl run redis` with its data directory on a volume: the run, its host
    port and the seconds until it served its data."""
    port = net.free_port()
    args = programs.resolve("redis").args
    started = time.monotonic()
    run = Run("redis", "--config", config, "-p", f"{port}:6379", "-v", f"{data}:/data",
              "--", *args, *extra)
    run.wait_for(run.proc.stderr, "is ready")
    while cli(port, "PING") != "PONG":        # LOADING: the data is being read
        time.sleep(0.5)
    return run, port, time.monotonic() - started


def cli(port, *args, stdin=None) -> str:
    res = subprocess.run(["redis-cli", "-p", str(port), *args], input=stdin,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def set_keys(port, prefix: str):
    """KEYS SETs, each acknowledged (redis-cli --pipe counts the replies)."""
    cmds = "".join(f"SET {prefix}:{i} {i}\r\n" for i in range(KEYS))
    summary = cli(port, "--pipe", stdin=cmds)
    assert f"errors: 0, replies: {KEYS}" in summary, summary


def found(port, prefix: str) -> int:
    return sum(v == str(i) for i, v in enumerate(
        cli(port, "MGET", *(f"{prefix}:{i}" for i in range(KEYS))).split("\n")))


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp", "baseline"])
def test_redis_data_survives_a_killed_guest_and_a_graceful_stop(tmp_path, config):
    # 1. The AOF, fsynced before each reply, then QEMU killed.
    run, port, _ = start_redis(tmp_path, config, *AOF)
    with run:
        set_keys(port, "aof")
        run.kill_qemu()
        status, _, _ = run.finish()
    assert status != 0
    assert (tmp_path / "appendonlydir").is_dir()

    # 2. All of it is back; then more keys, and a graceful stop saves the RDB.
    run, port, restart = start_redis(tmp_path, config, *AOF)
    with run:
        after_kill = found(port, "aof")
        set_keys(port, "rdb")
        run.signal(signal.SIGTERM)
        status, out, err = run.finish()
    print(f"{config}: {KEYS} keys written, {after_kill} found after SIGKILL, "
          f"serving again {restart:.1f}s after ukl run")
    assert after_kill == KEYS
    assert status == 0, err
    assert "DB saved on disk" in out

    # 3. The RDB alone (no AOF) holds both sets.
    run, port, restart = start_redis(tmp_path, config, "--appendonly", "no")
    with run:
        from_rdb = found(port, "aof") + found(port, "rdb")
        run.signal(signal.SIGTERM)
        run.finish()
    print(f"{config}: {2 * KEYS} keys written, {from_rdb} found in the RDB, "
          f"serving again {restart:.1f}s after ukl run")
    assert from_rdb == 2 * KEYS


@pytest.mark.skipif(os.geteuid() != 0, reason="a full filesystem is made with a small tmpfs, "
                                              "which needs root")
@pytest.mark.parametrize("config", ["ukl", "baseline"])
def test_a_full_volume_gives_enospc(tmp_path, config):
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "ukl-test", tmp_path], check=True)
    try:
        res = ukl("run", "fill", "--config", config, "-v", f"{tmp_path}:/data", "--",
                  "/data/fill")
    finally:
        subprocess.run(["umount", tmp_path], check=True)
    assert res.returncode == 0, res.stderr
    # write() reports the full disk, and fsync has nothing more to report, as
    # on a local filesystem.  (Over 9p the guest's client reported it again,
    # from the error it records on the file's pages: netfs's mapping_set_error.)
    assert res.stdout == "write after 1024 KiB: No space left on device\nfsync: ok\n"


COMMITS = 300


@pytest.mark.parametrize("config", ["ukl", "baseline"])
def test_sqlite_commits_in_wal_mode_survive_a_killed_guest(tmp_path, config):
    with Run("sqlite-wal", "--config", config, "-v", f"{tmp_path}:/data", "--",
             "/data/commits.db", str(COMMITS)) as run:
        assert run.wait_for(run.proc.stdout, "commits") == f"{COMMITS} commits\n"
        run.kill_qemu()
        status, _, err = run.finish()
    assert status != 0, err
    # Not checkpointed: the commits are in the WAL, which the host's SQLite reads.
    assert (tmp_path / "commits.db-wal").stat().st_size > 0
    with sqlite3.connect(tmp_path / "commits.db") as db:
        rows = db.execute("SELECT n, text FROM commits ORDER BY n").fetchall()
    assert rows == [(n, f"commit {n}") for n in range(1, COMMITS + 1)]


@pytest.mark.parametrize("config", ["ukl", "baseline"])
def test_a_shared_writable_mapping_reaches_the_host_file_at_msync(tmp_path, config):
    res = ukl("run", "mapshared", "--config", config, "-v", f"{tmp_path}:/data", "--",
              "/data/mapped", "written through a mapping")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "mapped, wrote and synced 25 bytes\n"
    assert (tmp_path / "mapped").read_text() == "written through a mapping"
