"""Host processes QEMU connects to over a Unix socket (vhost-user backends
such as virtiofsd): each started before QEMU, ready once its socket listens,
and stopped after QEMU, its output kept in the run's directory."""
import contextlib
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import UklError

START_TIMEOUT = 10.0    # seconds until the socket listens
STOP_GRACE = 3.0        # seconds to exit after SIGTERM before SIGKILL
SO_ACCEPTCON = 0x10000  # /proc/net/unix's flag of a listening socket


@dataclass(frozen=True)
class Daemon:
    name: str           # for messages: what it serves
    argv: list[str]
    socket: Path        # the Unix socket it listens on and QEMU connects to
    log: Path           # its stdout and stderr


def listening(path: Path) -> bool:
    """Whether a socket bound at PATH accepts connections.  Connecting to see
    would take the one connection a vhost-user backend serves."""
    try:
        lines = Path("/proc/net/unix").read_text().splitlines()[1:]
    except OSError:
        return False
    return any(len(f) >= 8 and f[7] == str(path) and int(f[3], 16) & SO_ACCEPTCON
               for f in map(str.split, lines))


def _start(d: Daemon) -> subprocess.Popen:
    d.socket.unlink(missing_ok=True)            # a stale one from an earlier run
    with open(d.log, "wb") as log:
        log.write(f"# {shlex.join(d.argv)}\n".encode())
        log.flush()
        try:
            # Like QEMU, it dies with this process, even when that is SIGKILLed,
            # and a terminal's Ctrl-C, which asks the program to stop, does not
            # reach it: the program may still write to its volume.
            proc = subprocess.Popen(["setpriv", "--pdeathsig", "KILL", *d.argv],
                                    stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, process_group=0)
        except OSError as e:
            raise UklError(f"{d.name}: cannot start {d.argv[0]}: {e.strerror}") from None
    deadline = time.monotonic() + START_TIMEOUT
    while not listening(d.socket):
        if proc.poll() is not None or time.monotonic() > deadline:
            _stop(proc)
            said = [line for line in d.log.read_text(errors="replace").splitlines()[1:]
                    if line.strip()]
            why = (f"exited with {proc.returncode}" if proc.returncode is not None and
                   proc.returncode >= 0 else f"did not listen within {START_TIMEOUT:g}s")
            raise UklError(f"{d.name}: {Path(d.argv[0]).name} {why}"
                           + (f": {said[-1].strip()}" if said else "") + f" [log: {d.log}]")
        time.sleep(0.02)
    return proc


def _stop(proc: subprocess.Popen):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait()


@contextlib.contextmanager
def running(daemons: list[Daemon]):
    """DAEMONS started, in order, and listening; all stopped on leaving.  One
    that cannot start is a UklError, and those started before it are stopped."""
    procs = []
    try:
        for d in daemons:
            procs.append(_start(d))
        yield
    finally:
        for proc in reversed(procs):
            _stop(proc)
