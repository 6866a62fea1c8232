"""`ukl run --dry-run` changes nothing: it prints the QEMU command, with
placeholders for the private forward ports, binds no port and boots nothing."""
import shlex
import socket
from pathlib import Path

import pytest

from ukl import api, cli, configs
from ukl.build import programs
from ukl.guest import qemu


def _main(*argv):
    """The CLI in this process; it must succeed."""
    try:
        cli.main(list(argv))
    except SystemExit as e:
        assert e.code in (None, 0)


@pytest.fixture
def built(monkeypatch, fake_busybox, tmp_path):
    """api.build without building: a UKL hello, its run directory under tmp_path."""
    fake = api.Built(programs.Program("example", "hello", Path("/hello.c")),
                     configs.CONFIGS["ukl"], Path("/k/bzImage"), b"\x7fUKL\n")
    monkeypatch.setattr(api, "build", lambda program, config: fake)
    monkeypatch.setattr(api, "RUNS", tmp_path / "runs")
    monkeypatch.setattr(cli.signal, "signal", lambda *args: None)
    monkeypatch.setattr(cli.features.gdb, "script", lambda *args: tmp_path / "ukl.gdb")
    return fake


def test_a_dry_run_with_a_published_port_in_use_prints_and_binds_nothing(
        built, monkeypatch, capsys):
    bound = []
    real_bind = socket.socket.bind
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]

        def bind(self, address):
            bound.append(address)
            return real_bind(self, address)
        monkeypatch.setattr(socket.socket, "bind", bind)

        def no_boot(*args, **kwargs):
            raise AssertionError("a dry run booted something")
        monkeypatch.setattr(api, "_probe_kvm", no_boot)
        monkeypatch.setattr(qemu, "boot", no_boot)
        _main("run", "--dry-run", "hello", "-p", f"{port}:6379", "-p", "8080:80",
              "--gdb", "--gdb-port", str(port))
    assert bound == []
    argv = shlex.split(capsys.readouterr().out)
    assert argv[0] == "qemu-system-x86_64"
    assert argv[argv.index("-netdev") + 1] == (
        "user,id=net0,hostfwd=tcp:127.0.0.1:HOSTFWD0-:6379,hostfwd=tcp:127.0.0.1:HOSTFWD1-:80")


def test_a_dry_run_prints_the_same_command_twice(built, capsys):
    for _ in range(2):
        _main("run", "--dry-run", "hello", "-p", "6379:6379")
    first, second = capsys.readouterr().out.splitlines()
    assert first == second


def test_a_dry_run_with_a_volume_prints_virtiofsd_first_and_starts_nothing(
        built, monkeypatch, capsys, tmp_path):
    from ukl.guest import daemons
    from ukl.guest.features import volumes

    def no_start(*args, **kwargs):
        raise AssertionError("a dry run started a process")
    monkeypatch.setattr(volumes.os, "geteuid", lambda: 0)
    monkeypatch.setattr(daemons, "_start", no_start)
    monkeypatch.setattr(qemu, "boot", no_start)
    _main("run", "--dry-run", "hello", "-v", f"{tmp_path}:/data")
    daemon, machine = map(shlex.split, capsys.readouterr().out.splitlines())
    assert daemon[0] == str(volumes.VIRTIOFSD)
    assert machine[0] == "qemu-system-x86_64"
    assert not any(p.name.endswith(".sock") for p in (tmp_path / "runs").rglob("*"))


def test_a_dry_run_builds_no_tool_and_writes_no_initramfs(built, monkeypatch, capsys, tmp_path):
    def no_build(*args, **kwargs):
        raise AssertionError("a dry run built a tool the command line does not show")
    monkeypatch.setattr(cli.features.strace, "strace_binary", no_build)
    monkeypatch.setattr(cli.features.user.programs, "build", no_build)
    monkeypatch.setattr(cli.features.perf.perf, "binary", no_build)
    _main("run", "hello", "--dry-run", "--strace", "--baseline", "--user", "nobody")
    _main("run", "hello", "--dry-run", "--perf", "--out", str(tmp_path / "o"))
    assert "qemu-system-x86_64" in capsys.readouterr().out
    assert not list((tmp_path / "runs").rglob("initramfs.cpio.gz"))
