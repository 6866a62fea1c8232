"""-v: a read-write directory is a virtiofs share served by virtiofsd (9p
without root), a read-only one a 9p share with readonly=on; each is mounted
before the program, and /init stops with status 125 if it cannot; a file is
copied in.  virtiofsd missing or failing to start is a one-line error, and
QEMU is not started.  A missing directory is made before QEMU starts (not by a
dry run), owned by the user who ran sudo; one that cannot be is a one-line error."""
import os
import socket
import sys
from pathlib import Path

import pytest

from ukl import api, cli, configs
from ukl.build import programs
from ukl.errors import UklError
from ukl.guest import daemons, volumes
from ukl.guest.features import volumes as feature


@pytest.fixture
def as_root(monkeypatch):
    monkeypatch.setattr(feature.os, "geteuid", lambda: 0)


def test_a_read_write_volume_is_virtiofs_and_a_read_only_one_9p(guest, tmp_path, as_root):
    share = tmp_path / "a,b"
    share.mkdir()
    copied = tmp_path / "f.conf"
    copied.write_text("conf")
    vols = [volumes.Volume(share, "/data", "rw"), volumes.Volume(tmp_path, "/conf", "ro"),
            volumes.Volume(copied, "/etc/f.conf", "copy")]
    g = guest(api.Options(volumes=vols))
    argv, run = g.argv, tmp_path / "run"
    # virtiofs: the guest's RAM shared with virtiofsd, which QEMU connects to.
    assert argv[argv.index("-machine") + 1] == "pc,memory-backend=ram"
    assert "memory-backend-memfd,id=ram,size=512M,share=on" in argv
    assert f"socket,id=uklvol0,path={run}/uklvol0.sock" in argv
    assert "vhost-user-fs-pci,chardev=uklvol0,tag=uklvol0" in argv
    [daemon] = g.spec.daemons
    assert daemon.argv == [str(feature.VIRTIOFSD), f"--socket-path={run}/uklvol0.sock",
                           "-o", f"source={tmp_path}/a\\,b", "-o", "cache=auto",
                           "-o", "no_writeback"]
    assert daemon.log == run / "virtiofsd-uklvol0.log"
    # 9p, read-only on the host's side too.
    assert f"local,id=uklvol1,path={tmp_path},security_model=none,readonly=on" in argv
    assert "virtio-9p-pci,fsdev=uklvol1,mount_tag=uklvol1" in argv
    setup = g.hooks("setup")
    assert "mkdir -p /data && mount -t virtiofs uklvol0 /data ||" in setup
    assert "msize=262144,ro uklvol1 /conf ||" in setup
    assert 'echo "status 125" >/dev/$ukl_status' in setup
    assert g.files["etc/f.conf"][1] == b"conf"
    assert "mount" not in guest().hooks("setup")
    assert "memory-backend" not in " ".join(guest().argv)


@pytest.fixture
def fake_build(monkeypatch, tmp_path, fake_busybox):
    """`ukl run hello` in this process, without building: a UKL hello, its run
    directory under tmp_path."""
    fake = api.Built(programs.Program("example", "hello", Path("/hello.c")),
                     configs.CONFIGS["ukl"], Path("/k/bzImage"), b"\x7fUKL\n")
    monkeypatch.setattr(api, "build", lambda program, config: fake)
    monkeypatch.setattr(api, "RUNS", tmp_path / "runs")
    monkeypatch.setattr(cli.signal, "signal", lambda *args: None)
    monkeypatch.setenv("UKL_ACCEL", "tcg")


def _cli(*argv) -> int:
    try:
        cli.main(list(argv))
    except SystemExit as e:
        return e.code or 0
    return 0


def test_a_missing_directory_is_made_before_qemu_and_not_by_a_dry_run(
        fake_build, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(feature.os, "geteuid", lambda: 1000)      # 9p: no virtiofsd
    data = tmp_path / "new" / "data"
    seen = []

    def boot(m, *args, **kwargs):
        seen.append(data.is_dir())
        raise UklError("QEMU is not started in a fast test")
    monkeypatch.setattr(api.qemu, "boot", boot)
    assert _cli("run", "--dry-run", "hello", "-v", f"{data}:/data") == 0
    assert f"path={data},security_model=none" in capsys.readouterr().out
    assert not (tmp_path / "new").exists()
    assert _cli("run", "hello", "-v", f"{data}:/data:ro") == 1
    assert seen == [True]
    umask = os.umask(0)
    os.umask(umask)
    assert {(p.stat().st_mode & 0o777) for p in (data, data.parent)} == {0o755 & ~umask}


def test_what_is_made_belongs_to_the_user_who_ran_sudo(tmp_path, monkeypatch):
    chowned = []
    monkeypatch.setattr(volumes.os, "chown", lambda *args: chowned.append(args))
    monkeypatch.setattr(volumes.os, "geteuid", lambda: 0)
    monkeypatch.setenv("SUDO_UID", "1234")
    monkeypatch.setenv("SUDO_GID", "5678")
    new = tmp_path / "a" / "b"
    volumes.make_missing([volumes.Volume(new, "/data", "rw"),
                          volumes.Volume(tmp_path, "/t", "rw")])
    assert chowned == [(new.parent, 1234, 5678), (new, 1234, 5678)]     # not tmp_path
    monkeypatch.delenv("SUDO_UID")
    monkeypatch.delenv("SUDO_GID")
    volumes.make_missing([volumes.Volume(tmp_path / "c", "/data", "rw")])
    assert (tmp_path / "c").is_dir() and len(chowned) == 2             # already ours


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_as_root_under_sudo_the_made_directory_is_owned_by_the_sudo_user(tmp_path, monkeypatch):
    monkeypatch.setenv("SUDO_UID", "1234")
    monkeypatch.setenv("SUDO_GID", "5678")
    volumes.make_missing([volumes.Volume(tmp_path / "d", "/data", "rw")])
    st = (tmp_path / "d").stat()
    assert (st.st_uid, st.st_gid) == (1234, 5678)


def test_a_directory_that_cannot_be_made_is_a_one_line_error(fake_build, tmp_path, monkeypatch,
                                                              capsys):
    plain = tmp_path / "plain"
    plain.write_text("a file")
    with pytest.raises(UklError, match=f"cannot make {plain}/d: {plain} is not a directory"):
        volumes.parse_volume(f"{plain}/d:/data")
    # Checked before the build, a dry run's too (root may write anywhere: pretend).
    with monkeypatch.context() as m:
        m.setattr(api, "build", lambda *args: pytest.fail("built"))
        m.setattr(volumes.os, "access", lambda path, mode: False)
        assert _cli("run", "--dry-run", "hello", "-v", f"{tmp_path}/new/d:/data") == 2
    assert capsys.readouterr().err == (
        f"ukl: error: argument -v: -v {tmp_path}/new/d:/data: cannot make "
        f"{tmp_path}/new/d: {tmp_path} is not writable\n")

    def refuse(self, mode):
        raise PermissionError(13, "Permission denied")
    with monkeypatch.context() as m, pytest.raises(UklError) as e:
        m.setattr(volumes.Path, "mkdir", refuse)
        volumes.make_missing([volumes.Volume(tmp_path / "new", "/data", "rw")])
    assert str(e.value) == f"-v {tmp_path}/new:/data: cannot make {tmp_path}/new: " \
                           "Permission denied"


def test_without_root_a_read_write_volume_is_9p(guest, tmp_path, monkeypatch):
    monkeypatch.setattr(feature.os, "geteuid", lambda: 1000)
    g = guest(api.Options(volumes=[volumes.Volume(tmp_path, "/data", "rw")]))
    assert g.spec.daemons == []
    assert f"local,id=uklvol0,path={tmp_path},security_model=none" in g.argv
    assert "msize=262144 uklvol0 /data ||" in g.hooks("setup")


def test_a_missing_virtiofsd_is_refused_before_anything_is_built(tmp_path, monkeypatch,
                                                                  as_root):
    monkeypatch.setattr(feature, "VIRTIOFSD", tmp_path / "virtiofsd")
    opts = api.Options(volumes=[volumes.Volume(tmp_path, "/data", "rw")])
    with pytest.raises(UklError, match="virtiofsd, which is missing"):
        api.validate(opts, "ukl")
    api.validate(api.Options(volumes=[volumes.Volume(tmp_path, "/data", "ro")]), "ukl")


def _daemon(tmp_path, code: str) -> daemons.Daemon:
    sock = tmp_path / "d.sock"
    return daemons.Daemon("test", [sys.executable, "-c", code, str(sock)], sock,
                          tmp_path / "d.log")


def test_a_daemon_runs_while_its_socket_listens_and_is_stopped_after(tmp_path):
    d = _daemon(tmp_path, "import socket, sys, time\n"
                          "s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])\n"
                          "time.sleep(0.3); s.listen(); time.sleep(60)")
    with daemons.running([d]):
        assert daemons.listening(d.socket)
        with socket.socket(socket.AF_UNIX) as c:
            c.connect(str(d.socket))
    assert not daemons.listening(d.socket)
    assert d.log.read_text().startswith(f"# {sys.executable} -c ")


def test_a_daemon_that_exits_is_a_one_line_error_with_its_last_words(tmp_path):
    d = _daemon(tmp_path, "import sys; print('cannot serve', sys.argv[1]); sys.exit(3)")
    with pytest.raises(UklError) as e:
        with daemons.running([d]):
            pytest.fail("ran without its daemon")
    assert str(e.value) == (f"test: {Path(sys.executable).name} exited with 3: "
                            f"cannot serve {d.socket} [log: {d.log}]")


def test_virtiofsd_failing_to_start_stops_ukl_run_before_qemu(tmp_path, monkeypatch, capsys,
                                                              fake_build, as_root):
    failing = tmp_path / "virtiofsd"
    failing.write_text("#!/bin/sh\necho 'fuse: cannot serve' >&2\nexit 1\n")
    failing.chmod(0o755)
    monkeypatch.setattr(feature, "VIRTIOFSD", failing)
    (tmp_path / "data").mkdir()
    with pytest.raises(SystemExit) as e:
        cli.main(["run", "hello", "-v", f"{tmp_path / 'data'}:/data"])
    assert e.value.code == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(f"ukl: error: -v {tmp_path / 'data'}:/data: virtiofsd exited with 1: "
                          "fuse: cannot serve [log: ")
    assert not (tmp_path / "runs" / "hello-ukl" / "qemu.log").exists()
