"""Boot a kernel and initramfs under QEMU, with the program's output on its own channels."""
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import console, daemons, net
from .. import configs
from .spec import GuestSpec
from ..build import steps
from ..layout import OUT
from ..proc import capture, need


@dataclass
class Machine:
    """The QEMU command line: the guest's spec, its initramfs and how it runs."""
    spec: GuestSpec
    initrd: Path
    accel: str = "tcg"
    # Published ports: the relay listens on the host ports and hands each
    # connection to QEMU's forward of the guest port on a private host port.
    relay: net.Relay | None = field(default=None, compare=False)
    # Without a relay (a dry run): what stands for the private ports.
    forward_placeholder: str = "HOSTFWD{index}"

    @property
    def workdir(self) -> Path:
        return self.spec.workdir

    def serial(self, port: str) -> Path:
        return self.workdir / f"{port}.log"

    def cmdline(self) -> str:
        return " ".join(["console=ttyS0", "panic=-1", "oops=panic", *self.spec.kernel_args])

    def forwards(self) -> list[tuple[str, int]]:
        if self.relay:
            return [(str(h), g) for h, g in self.relay.forwards]
        return [(self.forward_placeholder.format(index=i), g)
                for i, (_, g) in enumerate(self.spec.ports)]

    def argv(self) -> list[str]:
        spec = self.spec
        accel = "kvm" if self.accel == "kvm" else ("tcg,thread=single" if spec.icount else "tcg")
        machine, memory = "pc", []
        if spec.shared_memory:      # a vhost-user daemon maps the guest's RAM
            machine += ",memory-backend=ram"
            memory = ["-object", f"memory-backend-memfd,id=ram,size={spec.memory_mb}M,share=on"]
        argv = ["qemu-system-x86_64", "-machine", machine, *memory, "-accel", accel,
                "-cpu", spec.cpu, "-m", f"{spec.memory_mb}M", "-smp", str(spec.smp),
                "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
                "-kernel", str(spec.kernel), "-initrd", str(self.initrd),
                "-append", self.cmdline(),
                "-monitor", f"unix:{self.workdir / MONITOR},server=on,wait=off"]
        if spec.icount:
            argv += ["-icount", "shift=0" + ("" if spec.icount_sleep else ",sleep=off")]
        argv += spec.devices
        # User-mode networking: the guest is 10.0.2.15; published ports listen
        # on the host's loopback only.
        fwd = "".join(f",hostfwd=tcp:127.0.0.1:{h}-:{g}" for h, g in self.forwards())
        argv += ["-netdev", f"user,id=net0{fwd}", "-device", "virtio-net-pci,netdev=net0"]
        for port in console.CHANNELS:
            argv += ["-serial", f"file:{self.serial(port)}"]
        return argv


@dataclass
class Boot:
    status: int | None
    console: Path
    failure: str | None
    stopped: bool = False           # by the host (stop event), not by the program


MONITOR = "monitor.sock"       # QEMU's human monitor, in the run directory
CONTROL = "control.sock"       # the guest's control port (features.control)


def monitor(workdir: Path, command: str, timeout: float = 10) -> str:
    """Run one command in the QEMU monitor of the guest running in WORKDIR;
    return what it printed."""
    def until_prompt(s: socket.socket) -> str:
        data = b""
        while not data.endswith(b"(qemu) "):
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        return data.decode(errors="replace")

    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(timeout)
        s.connect(str(workdir / MONITOR))
        until_prompt(s)
        s.sendall(command.encode() + b"\n")
        return until_prompt(s).rsplit("(qemu) ", 1)[0]


class Pump:
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


class _Notices:
    """A sink for the console's pump: repeats on stderr, as they come, the
    kernel lines a user must see, naming CONFIG where one says what runs
    at CPL0."""

    def __init__(self, config: str):
        self.partial, self.config = b"", config

    def write(self, data: bytes):
        *lines, self.partial = (self.partial + data).split(b"\n")
        for line in lines:
            text = console.notice(line.decode(errors="replace"))
            if text:
                where = f" under {self.config}" if console.STARTED.search(text) else ""
                print(f"ukl: the kernel says{where}: {text}", file=sys.stderr, flush=True)

    def flush(self):
        pass


STOP_GRACE = 3.0     # seconds QEMU gets to exit after SIGTERM before it is killed


class Stop:
    """Signals that ask the program in the guest to stop, as the host gets
    them: the first goes to the program, as the same signal; a second, or
    TIMEOUT seconds without an exit, kills the guest (as `docker stop`)."""

    def __init__(self, name: str, timeout: float):
        self.name, self.timeout = name, timeout
        self.asked: list[tuple[signal.Signals, float]] = []
        self.killed: str | None = None      # why the guest was killed, if it was
        self._conn: socket.socket | None = None
        self._sent = False

    def ask(self, sig: int):
        self.asked.append((signal.Signals(sig), time.monotonic()))

    def connect(self, path: Path):
        """Hold the control port open, so that the guest's reads wait for lines."""
        if self._conn is None and path.exists():
            conn = socket.socket(socket.AF_UNIX)
            try:
                conn.connect(str(path))
                self._conn = conn
            except OSError:
                conn.close()

    def must_kill(self) -> bool:
        """Deliver what was asked; whether the guest must be killed now."""
        if not self.asked:
            return False
        sig, since = self.asked[0]
        if len(self.asked) > 1:
            self.killed = f"a second {self.asked[1][0].name}"
        elif time.monotonic() - since > self.timeout:
            self.killed = f"{self.name} did not exit within {self.timeout:g}s of {sig.name}"
        elif not self._sent:
            self._sent = True
            try:
                self._conn.sendall(sig.name.removeprefix("SIG").encode() + b"\n")
            except (AttributeError, OSError):
                self.killed = f"{self.name} could not be sent {sig.name}"
                return True
            print(f"ukl: sent {sig.name} to {self.name}; waiting up to {self.timeout:g}s "
                  f"(again to kill it now)", file=sys.stderr, flush=True)
        return self.killed is not None

    def close(self):
        if self._conn is not None:
            self._conn.close()


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

    def __init__(self, path: Path, callbacks: list):
        self.path, self.callbacks = path, [c for c in callbacks if c]
        self.done = not self.callbacks

    def __call__(self):
        if not self.done and console.is_ready(self.path.read_text(errors="replace")):
            self.done = True
            for callback in self.callbacks:
                callback()


def boot(m: Machine, timeout: float, stdout=None, stderr=None, on_ready=None,
         stop: threading.Event | None = None, stop_by_signal: Stop | None = None,
         on_start=None) -> Boot:
    """Boot M until the guest powers off, TIMEOUT passes or STOP is set.
    ON_READY is called once when every published guest port listens;
    STOP_BY_SIGNAL delivers the host's signals to the program (features.control);
    ON_START gets QEMU's process once it runs."""
    need("qemu-system-x86_64")
    m.workdir.mkdir(parents=True, exist_ok=True)
    for port in console.CHANNELS:
        m.serial(port).write_bytes(b"")
    (m.workdir / "qemu.cmd").write_text(shlex.join(m.argv()) + "\n")
    pumps = [Pump(m.serial(console.STDOUT), stdout), Pump(m.serial(console.STDERR), stderr),
             _Readiness(m.serial(console.STATUS), [on_ready, m.relay and m.relay.open]),
             Pump(m.serial(console.CONSOLE), _Notices(m.spec.config))]
    stopped = timed_out = False
    try:
        with daemons.running(m.spec.daemons), open(m.workdir / "qemu.log", "wb") as qlog:
            # With signals delivered to the program, QEMU gets a process group
            # of its own: a terminal's Ctrl-C reaches `ukl run`, not QEMU.
            # QEMU dies with this process, even when it is SIGKILLed.
            proc = subprocess.Popen(["setpriv", "--pdeathsig", "KILL", *m.argv()],
                                    stdin=subprocess.DEVNULL, stdout=qlog,
                                    stderr=subprocess.STDOUT,
                                    process_group=0 if stop_by_signal else None)
            if on_start:
                on_start(proc)
            if m.relay:
                m.relay.start()
            deadline = time.monotonic() + timeout
            try:
                while proc.poll() is None:
                    for pump in pumps:
                        pump()
                    if stop is not None and stop.is_set():
                        stopped = True
                        break
                    if stop_by_signal is not None:
                        stop_by_signal.connect(m.workdir / CONTROL)
                        if stop_by_signal.must_kill():
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
    finally:
        if stop_by_signal is not None:
            stop_by_signal.close()
        if m.relay:
            m.relay.close()
    for pump in pumps:
        pump()
    qemu_msg = (m.workdir / "qemu.log").read_text(errors="replace").strip()
    qemu_exit = f"qemu exit {proc.returncode}" + \
        (f": {qemu_msg.splitlines()[-1]}" if qemu_msg else "")
    verdict = console.judge(m.serial(console.CONSOLE).read_text(errors="replace"),
                            m.serial(console.STATUS).read_text(errors="replace"),
                            timeout if timed_out else None, stopped, qemu_exit)
    return Boot(verdict.status, m.serial(console.CONSOLE), verdict.failure, stopped)


ACCEL = OUT / "accel"


def _decided() -> str | None:
    """UKL_ACCEL, or "tcg" without a usable /dev/kvm; None if a probe must decide."""
    forced = configs.forced_accel()
    if forced:
        return forced
    return None if os.access("/dev/kvm", os.R_OK | os.W_OK) else "tcg"


def _probe_key() -> str:
    return steps.key_of(capture(["qemu-system-x86_64", "--version"]))


def choose_accel(probe) -> str:
    """TCG unless KVM is usable: nested KVM here fails, so a probe boot decides, once."""
    decided = _decided()
    if decided:
        return decided
    done = steps.stamped(ACCEL, _probe_key(),
                         lambda d: (d / "choice").write_text("kvm" if probe() else "tcg"))
    return (done / "choice").read_text().strip()


def known_accel() -> str:
    """What choose_accel picks, without a probe boot: an earlier probe's
    choice, or TCG (for a dry run)."""
    decided = _decided()
    if decided:
        return decided
    if steps.is_done(ACCEL, _probe_key()):
        return (ACCEL / "choice").read_text().strip()
    return "tcg"
