"""`ukl oci` (issue 19, part 4): an image containerd imports, with urunc's
annotations, whose kernel and initrd serve Redis when booted the way urunc
boots them.  urunc itself needs KVM, which this machine lacks: QEMU runs
under TCG here, with user networking in place of urunc's tap device."""
import json
import os
import socket
import subprocess
import tarfile
import time

import pytest

from ukl import configs, oci
from ukl.guest import image as image_, net
from uklcli import ukl

BOOT_TIMEOUT = 300


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    dest = tmp_path_factory.mktemp("oci") / "redis.tar"
    res = ukl("oci", "redis", "--config", "ukl-ret-byp", "-o", str(dest))
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == str(dest)
    layout = dest.parent / "layout"
    with tarfile.open(dest) as t:
        t.extractall(layout)
    return dest, layout


def test_the_image_carries_the_program_busybox_and_no_test_fixtures(image):
    """A plain `ukl oci` image: no test or bench program in the guest's /bin."""
    _, layout = image
    _, _, files = oci.read_layout(layout)
    initrd = image_.read(files[oci.INITRD])
    assert sorted(n for n in initrd if n.startswith("bin/")) == ["bin/busybox"]
    assert "app/redis" in initrd and "init" in initrd
    for fixture in ("ukl-intruder", "ukl-busy", "cpl"):
        assert not any(n.rsplit("/", 1)[-1] == fixture for n in initrd), fixture


@pytest.mark.skipif(os.geteuid() != 0, reason="containerd runs as root")
def test_containerd_imports_the_image(image, tmp_path):
    tar, layout = image
    sock = tmp_path / "containerd.sock"
    daemon = subprocess.Popen(["containerd", "--address", str(sock), "--root",
                               str(tmp_path / "root"), "--state", str(tmp_path / "state"),
                               "--log-level", "error"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(100):
            if sock.exists():
                break
            time.sleep(0.1)
        ctr = lambda *a: subprocess.run(["ctr", "--address", str(sock), *a],
                                        capture_output=True, text=True, timeout=120)
        res = ctr("image", "import", str(tar))
        assert res.returncode == 0, res.stderr
        listed = ctr("image", "ls")
    finally:
        daemon.terminate()
        daemon.wait()
    index = json.loads((layout / "index.json").read_text())
    digest = index["manifests"][0]["digest"]
    line = next(ln for ln in listed.stdout.splitlines()
                if ln.startswith("docker.io/library/ukl-redis:latest "))
    assert digest in line


def test_the_image_has_urunc_annotations_and_urunc_json(image):
    _, layout = image
    manifest, config, files = oci.read_layout(layout)
    assert manifest["annotations"] == oci.annotations()
    assert config["config"]["Labels"] == oci.annotations()
    assert config["config"]["Env"] == configs.get("ukl-ret-byp").kernel_args()
    urunc = json.loads(files["urunc.json"])
    assert urunc["com.urunc.unikernel.unikernelType"] == "bGludXg="        # "linux"
    assert urunc["com.urunc.unikernel.hypervisor"] == "cWVtdQ=="           # "qemu"
    assert set(urunc) == set(oci.annotations())


def test_its_kernel_serves_redis_booted_as_urunc_boots_it(image, tmp_path):
    _, layout = image
    _, config, files = oci.read_layout(layout)
    (tmp_path / "kernel").write_bytes(files[".boot/kernel"])
    (tmp_path / "initrd").write_bytes(files[".boot/initrd"])
    port = net.free_port()
    cmdline = oci.urunc_cmdline(config["config"]["Env"], "10.0.2.15", "10.0.2.2",
                                "255.255.255.0")
    # urunc's QEMU command (its qemu.go and linux.go), but TCG for KVM and
    # user networking for its tap device.
    argv = ["qemu-system-x86_64", "-m", "256M", "-L", "/usr/share/qemu", "-cpu", "max",
            "-nographic", "-vga", "none", "-kernel", str(tmp_path / "kernel"),
            "-net", "nic,model=virtio", "-net", f"user,hostfwd=tcp:127.0.0.1:{port}-:6379",
            "-initrd", str(tmp_path / "initrd"), "-no-reboot", "-serial", "stdio",
            "-nodefaults", "-append", cmdline]
    console = tmp_path / "console.log"
    with open(console, "wb") as log:
        guest = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT)
        try:
            reply = _ping(port, guest)
            assert reply == b"+PONG\r\n", console.read_text(errors="replace")[-2000:]
            with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
                s.sendall(b"SET k from-oci\r\nGET k\r\n")
                got = b""
                while b"from-oci" not in got:
                    got += s.recv(100) or b"!"
                    assert not got.endswith(b"!"), got
                assert got == b"+OK\r\n$8\r\nfrom-oci\r\n"
                s.sendall(b"SHUTDOWN NOSAVE\r\n")
            assert guest.wait(BOOT_TIMEOUT) == 0
        finally:
            guest.kill()
    text = console.read_text(errors="replace")
    assert "ip=10.0.2.15::10.0.2.2:255.255.255.0:urunc:eth0:off" in text
    assert "IP-Config: Complete" in text
    assert "Ready to accept connections" in text
    assert "ukl: /app/redis exited with status 0" in text


def _ping(port, guest) -> bytes:
    """PING until Redis answers (QEMU's forward accepts before the guest listens)."""
    deadline = time.monotonic() + BOOT_TIMEOUT
    while time.monotonic() < deadline and guest.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(b"PING\r\n")
                reply = s.recv(100)
                if reply:
                    return reply
        except OSError:
            pass
        time.sleep(1)
    return b""
