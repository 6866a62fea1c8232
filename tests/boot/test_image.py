"""`ukl image` and `ukl boot` (issue 39): the program as a disk a UEFI
machine boots, served to the host and keeping its data across reboots; the
same image under a plain QEMU line from the README, with a virtio or an
e1000 NIC."""
import os
import re
import shlex
import signal
import subprocess
import time

import pytest

from ukl.guest import net
from ukl.layout import ROOT
from uklcli import UKL, ukl

BOOT_TIMEOUT = 300


def make_image(tmp_path, program, *args, name="disk.img"):
    dest = tmp_path / name
    res = ukl("image", program, "-o", str(dest), *args)
    assert res.returncode == 0, res.stderr[-3000:]
    return dest


class Boot:
    """`ukl boot IMAGE` in the background, as a user starts it."""

    def __init__(self, image, *args):
        self.port = net.free_port()
        self.proc = subprocess.Popen([*UKL, "boot", str(image), "--timeout", str(BOOT_TIMEOUT),
                                      "-p", f"{self.port}:{args[0]}", *args[1:]],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def end(self) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=BOOT_TIMEOUT)
        return self.proc.returncode, out, err


def redis(port, *command) -> str:
    res = subprocess.run(["redis-cli", "-p", str(port), *command], capture_output=True,
                         text=True, timeout=60)
    return res.stdout.strip()


def until_serving(boot: Boot, *probe, expect="PONG"):
    deadline = time.monotonic() + BOOT_TIMEOUT
    while time.monotonic() < deadline:
        assert boot.proc.poll() is None, boot.end()
        if redis(boot.port, *probe) == expect:
            return
        time.sleep(1)
    raise AssertionError("the image never served")


def test_a_redis_image_serves_the_host_and_keeps_its_data_across_a_reboot(tmp_path):
    image = make_image(tmp_path, "redis", "--config", "ukl-ret-byp", "--data", "64M")
    assert (tmp_path / "disk-data.img").stat().st_size == 64 << 20
    first = Boot(image, 6379)
    until_serving(first, "PING")
    assert redis(first.port, "SET", "greeting", "from the image") == "OK"
    # As a VM host shuts it down: the power button, SIGTERM to Redis, which
    # saves and exits 0; then the machine powers off.
    first.proc.send_signal(signal.SIGTERM)
    status, console, err = first.end()
    assert status == 0, err[-2000:]
    assert "ukl: pressed the power button" in err
    assert "ukl: power button: SIGTERM to the program" in console
    assert "ukl: data disk" in err and "ukl: /app/redis exited with status 0" in console
    assert "efifb: probing for efifb" in console          # booted by UEFI, a screen too
    assert "Console: switching to colour frame buffer device" in console
    assert "IP-Config: Got DHCP answer" in console
    second = Boot(image, 6379)
    until_serving(second, "PING")
    assert redis(second.port, "GET", "greeting") == "from the image"
    redis(second.port, "SHUTDOWN", "NOSAVE")
    assert second.end()[0] == 0


def readme_line() -> str:
    text = (ROOT / "README.md").read_text()
    return re.search(r"^qemu-system-x86_64 -machine q35 .*OVMF.*$", text, re.M).group(0)


@pytest.fixture(scope="module")
def cpl_image(tmp_path_factory):
    return make_image(tmp_path_factory.mktemp("cpl"), "cpl", "--config", "ukl-ret-byp")


@pytest.mark.parametrize("nic", ["virtio-net-pci", "e1000"])
def test_the_readme_s_plain_qemu_line_boots_the_image(tmp_path, nic, cpl_image):
    image = cpl_image
    argv = []
    for word in shlex.split(readme_line()):
        if word.startswith("file=redis-data.img"):
            argv.pop()                                  # its -drive: no data disk here
            continue
        word = word.replace("file=redis.img", f"file={image}")
        word = word.replace("model=virtio-net-pci", f"model={nic}")
        argv.append(word.replace("6379-:6379", f"{net.free_port()}-:6379"))
    res = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=BOOT_TIMEOUT, cwd=tmp_path)
    console = res.stdout
    assert res.returncode == 0, console[-2000:]
    assert "CPL 0\n" in console.replace("\r\n", "\n")    # the program, at ring 0
    assert re.search(r"ukl: /app/cpl exited with status \d+", console)
    assert "IP-Config: Got DHCP answer from 10.0.2.2" in console
    if nic == "e1000":
        assert "e1000 0000:" in console and "eth0: Intel(R) PRO/1000" in console
    assert "reboot: Power down" in console


def test_a_crash_is_on_the_console_and_the_status_is_the_signal_s(tmp_path):
    image = make_image(tmp_path, "crash", "--format", "qcow2", "--", "null", name="crash.qcow2")
    assert image.read_bytes()[:4] == b"QFI\xfb"
    res = subprocess.run([*UKL, "boot", str(image), "--timeout", str(BOOT_TIMEOUT)],
                         capture_output=True, text=True, timeout=BOOT_TIMEOUT + 60)
    assert res.returncode == 139, res.stderr[-2000:]
    assert "segfault at 0" in res.stdout
    assert "ukl: /app/crash exited with status 139" in res.stdout


def test_an_image_s_program_runs_as_its_user_with_its_arguments_then_halts(tmp_path):
    image = make_image(tmp_path, "whoami", "--user", "nobody", "--on-exit", "halt",
                       "--", "/tmp")
    res = subprocess.run([*UKL, "boot", str(image), "--timeout", str(BOOT_TIMEOUT)],
                         capture_output=True, text=True, timeout=BOOT_TIMEOUT + 60)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "uid 65534 euid 65534" in res.stdout
    assert "created a file owned by 65534:65534" in res.stdout
    assert "reboot: System halted" in res.stdout


def psql(port, sql) -> subprocess.CompletedProcess:
    return subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-XAtq",
                           "-v", "ON_ERROR_STOP=1", "-c", sql],
                          env={**os.environ, "PGPASSWORD": "secret"}, capture_output=True,
                          text=True, timeout=120)


def until_psql(boot: Boot):
    deadline = time.monotonic() + BOOT_TIMEOUT
    while time.monotonic() < deadline:
        assert boot.proc.poll() is None, boot.end()
        if psql(boot.port, "select 1").stdout.strip() == "1":
            return
        time.sleep(2)
    raise AssertionError("postgres never served")


def test_a_postgres_image_initialises_its_data_disk_on_first_boot_and_keeps_its_rows(tmp_path):
    image = make_image(tmp_path, "postgres", "--data", "1G", "-e", "POSTGRES_PASSWORD=secret")
    first = Boot(image, 5432)
    until_psql(first)
    done = psql(first.port, "create table t (n int); insert into t select generate_series(1, 500)")
    assert done.returncode == 0, done.stderr
    first.proc.send_signal(signal.SIGTERM)       # the power button: SIGINT, a fast shutdown
    status, console, err = first.end()
    assert "PostgreSQL init process complete" in console
    assert "ukl: power button: SIGINT to the program" in console
    assert status == 0, err[-2000:]
    second = Boot(image, 5432)
    until_psql(second)
    assert psql(second.port, "select count(*), sum(n) from t").stdout.strip() == "500|125250"
    second.proc.send_signal(signal.SIGTERM)
    status, console, _ = second.end()
    assert "PostgreSQL init process complete" not in console     # initialised once
    assert status == 0
