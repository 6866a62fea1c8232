"""Graceful stop (issue 19, part 1): SIGTERM or SIGINT to `ukl run` reaches the
program in the guest as the same signal, `ukl run` exits with the program's
status, and the guest is killed after --stop-timeout or at a second signal."""
import os
import signal
import socket
import time

import pytest

from ukl.build import programs
from ukl.guest import net
from uklcli import Run


@pytest.mark.parametrize("config,cpl", [("ukl", 0), ("ukl-ret-byp", 0), ("baseline", 3)])
def test_sigterm_reaches_the_program_and_its_out_files_come_back(tmp_path, config, cpl):
    with Run("stopsignal", "--config", config, "--out", str(tmp_path), "--", "handle") as run:
        assert run.wait_for(run.proc.stdout, "waiting") == f"waiting at CPL{cpl}\n"
        run.signal(signal.SIGTERM)
        status, out, err = run.finish()
    assert status == 0, err
    assert out == "caught Terminated\n"
    assert "ukl: sent SIGTERM to stopsignal; waiting up to 10s" in err
    assert (tmp_path / "stopped.txt").read_text() == "stopped by signal 15\n"


def test_ctrl_c_to_the_terminal_s_process_group_stops_the_program_not_qemu():
    """A terminal's Ctrl-C goes to every process of the foreground job."""
    with Run("stopsignal", "--", "handle", session=True) as run:
        run.wait_for(run.proc.stdout, "waiting at CPL0")
        os.killpg(run.proc.pid, signal.SIGINT)
        status, out, err = run.finish()
    assert status == 0, err
    assert out == "caught Interrupt\n"


def test_sigint_with_the_default_action_kills_the_program():
    with Run("stopsignal") as run:
        run.wait_for(run.proc.stdout, "waiting at CPL0")
        run.signal(signal.SIGINT)
        status, _, err = run.finish()
    assert status == 130
    assert err.strip().splitlines()[-1].startswith(
        "ukl: stopsignal was killed by SIGINT (exit 130)")


def test_a_program_that_ignores_sigterm_is_killed_after_the_stop_timeout():
    with Run("stopsignal", "--stop-timeout", "2", "--", "ignore") as run:
        run.wait_for(run.proc.stdout, "waiting at CPL0")
        sent = run.signal(signal.SIGTERM)
        status, _, err = run.finish()
        waited = time.monotonic() - sent
    assert status == 137
    assert err.strip().splitlines()[-1] == \
        "ukl: stopsignal did not exit within 2s of SIGTERM: killed the guest (exit 137)"
    assert 2 <= waited < 10


def test_a_second_signal_kills_at_once():
    with Run("stopsignal", "--", "ignore") as run:       # the default timeout: 10 s
        run.wait_for(run.proc.stdout, "waiting at CPL0")
        sent = run.signal(signal.SIGINT)
        run.wait_for(run.proc.stderr, "ukl: sent SIGINT to stopsignal")
        run.signal(signal.SIGINT)
        status, _, err = run.finish()
        waited = time.monotonic() - sent
    assert status == 137
    assert err.strip().splitlines()[-1] == \
        "ukl: a second SIGINT: killed the guest (exit 137)"
    assert waited < 8


@pytest.mark.parametrize("config", ["ukl", "baseline"])
def test_redis_saves_its_data_at_sigterm(tmp_path, config):
    port = net.free_port()
    args = [a if a != "/data" else "/out" for a in programs.resolve("redis").args]
    with Run("redis", "--config", config, "-p", f"{port}:6379", "--out", str(tmp_path),
             "--", *args) as run:
        run.wait_for(run.proc.stderr, "is ready")
        with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
            s.sendall(b"*3\r\n$3\r\nSET\r\n$8\r\ngreeting\r\n$11\r\nhello there\r\n")
            assert s.recv(100) == b"+OK\r\n"
        run.signal(signal.SIGTERM)
        status, out, err = run.finish()
    assert status == 0, err
    assert "DB saved on disk" in out
    rdb = (tmp_path / "dump.rdb").read_bytes()
    assert rdb.startswith(b"REDIS") and b"greeting" in rdb and b"hello there" in rdb
