"""Boot a kernel and initramfs under QEMU, with the program's output on its own channels."""
import dataclasses
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import net
from .errors import UklError
from .image import CONSOLE, STATUS, STDERR, STDOUT
from .layout import OUT
from .proc import need

FAILURE_PATTERNS = [r"Kernel panic", r"Oops:", r"\bBUG:", r"general protection fault(?! ip:)",
                    r"WARNING:", r"Unable to handle kernel", r"double fault"]
CONSOLE_TAIL = 25


@dataclass
class Machine:
    """Everything that decides the QEMU command line."""
    kernel: Path
    initrd: Path
    workdir: Path
    smp: int = 1
    memory_mb: int = 512
    accel: str = "tcg"
    cpu: str = "max"
    icount: bool = False
    disk: Path | None = None        # raw image, attached as virtio-blk /dev/vda
    cmdline_extra: list[str] = field(default_factory=list)
    ports: list[tuple[int, int]] = field(default_factory=list)   # (host, guest) TCP ports
    plugin: Path | None = None      # bench/switches.c, writing to workdir/switches.jsonl

    def serial(self, port: str) -> Path:
        return self.workdir / f"{port}.log"

    def cmdline(self) -> str:
        return " ".join(["console=ttyS0", "panic=-1", "oops=panic", *self.cmdline_extra])

    def argv(self) -> list[str]:
        accel = "kvm" if self.accel == "kvm" else ("tcg,thread=single" if self.icount else "tcg")
        argv = ["qemu-system-x86_64", "-machine", "pc", "-accel", accel, "-cpu", self.cpu,
                "-m", f"{self.memory_mb}M", "-smp", str(self.smp), "-nodefaults",
                "-no-user-config", "-display", "none", "-no-reboot",
                "-kernel", str(self.kernel), "-initrd", str(self.initrd),
                "-append", self.cmdline()]
        if self.icount:
            argv += ["-icount", "shift=0"]
        if self.plugin:
            argv += ["-plugin", f"file={self.plugin},out={self.workdir / 'switches.jsonl'}"]
        if self.disk:
            argv += ["-drive", f"file={self.disk},if=virtio,format=raw"]
        # User-mode networking: the guest is 10.0.2.15; published ports listen
        # on the host's loopback only.
        fwd = "".join(f",hostfwd=tcp:127.0.0.1:{h}-:{g}" for h, g in self.ports)
        argv += ["-netdev", f"user,id=net0{fwd}", "-device", "virtio-net-pci,netdev=net0"]
        for port in (CONSOLE, STDOUT, STDERR, STATUS):
            argv += ["-serial", f"file:{self.serial(port)}"]
        return argv


@dataclass
class Boot:
    status: int | None
    console: Path
    failure: str | None
    stopped: bool = False           # by the host (stop event), not by the program

    def console_tail(self) -> str:
        lines = self.console.read_text(errors="replace").splitlines()
        return "\n".join(lines[-CONSOLE_TAIL:])


class _Pump:
    """Copies what the guest writes to a serial file onto a host stream, as it arrives."""

    def __init__(self, path: Path, sink):
        self.path, self.sink, self.offset = path, sink, 0

    def __call__(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return
        if data and self.sink is not None:
            self.sink.write(data)
            self.sink.flush()
        self.offset += len(data)


STOP_GRACE = 3.0     # seconds QEMU gets to exit after SIGTERM before it is killed


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        proc.kill()
        print(f"ukl: the guest did not stop within {STOP_GRACE:.0f}s; killed it",
              file=sys.stderr)


class _Readiness:
    """Reports, once, the 'ready' line the guest writes when its ports listen."""

    def __init__(self, path: Path, on_ready):
        self.path, self.on_ready, self.done = path, on_ready, on_ready is None

    def __call__(self):
        if not self.done and b"ready" in self.path.read_bytes():
            self.done = True
            self.on_ready()


def boot(m: Machine, timeout: float, stdout=None, stderr=None, on_ready=None,
         stop: threading.Event | None = None) -> Boot:
    """Boot M until the guest powers off, TIMEOUT passes or STOP is set.
    ON_READY is called once when every published guest port listens."""
    need("qemu-system-x86_64")
    relay = net.Relay(m.ports)
    m = dataclasses.replace(m, ports=relay.forwards)
    m.workdir.mkdir(parents=True, exist_ok=True)
    for port in (CONSOLE, STDOUT, STDERR, STATUS):
        m.serial(port).write_bytes(b"")
    (m.workdir / "qemu.cmd").write_text(shlex.join(m.argv()) + "\n")
    pumps = [_Pump(m.serial(STDOUT), stdout), _Pump(m.serial(STDERR), stderr),
             _Readiness(m.serial(STATUS), on_ready)]
    stopped = False
    with open(m.workdir / "qemu.log", "wb") as qlog:
        proc = subprocess.Popen(m.argv(), stdin=subprocess.DEVNULL, stdout=qlog,
                                stderr=subprocess.STDOUT)
        relay.start()
        deadline = time.monotonic() + timeout
        timed_out = False
        try:
            while proc.poll() is None:
                for pump in pumps:
                    pump()
                if stop is not None and stop.is_set():
                    stopped = True
                    break
                if time.monotonic() > deadline:
                    timed_out = True
                    break
                time.sleep(0.05)
        finally:
            if proc.poll() is None:
                _stop(proc)
            proc.wait()
            relay.close()
    for pump in pumps:
        pump()
    console = m.serial(CONSOLE)
    text = console.read_text(errors="replace")
    failure = None
    for pattern in FAILURE_PATTERNS:
        hit = re.search(f"^.*{pattern}.*$", text, re.M)
        if hit:
            failure = f"kernel reported: {hit.group(0).strip()}"
            break
    if failure is None and timed_out:
        failure = f"timed out after {timeout:.0f}s"
    status_text = m.serial(STATUS).read_text(errors="replace")
    status = re.search(r"status (\d+)", status_text)
    if stopped:
        return Boot(None, console, failure, stopped=True)
    if failure is None and not status:
        qemu_msg = (m.workdir / "qemu.log").read_text(errors="replace").strip()
        failure = f"guest reported no exit status (qemu exit {proc.returncode}" + \
                  (f": {qemu_msg.splitlines()[-1]})" if qemu_msg else ")")
    return Boot(int(status.group(1)) if status else None, console, failure)


def choose_accel(probe) -> str:
    """TCG unless KVM is usable: nested KVM here fails, so a probe boot decides, once."""
    forced = os.environ.get("UKL_ACCEL")
    if forced:
        if forced not in ("tcg", "kvm"):
            raise UklError(f"UKL_ACCEL must be tcg or kvm, not {forced!r}")
        return forced
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "tcg"
    cache = OUT / "accel"
    if not cache.exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text("kvm" if probe() else "tcg")
    return cache.read_text().strip()
