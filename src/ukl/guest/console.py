"""What the guest says, and what it means: the serial channels, the lines the
guest's init writes to the host, and the judgement of a finished boot.

The init script (image.py) writes these lines and qemu.boot reads them; both
take them from here.
"""
import re
import sys
from dataclasses import dataclass
from pathlib import Path

# The serial ports the guest uses, in QEMU's -serial order.
CONSOLE, STDOUT, STDERR, STATUS = "ttyS0", "ttyS1", "ttyS2", "ttyS3"
CHANNELS = (CONSOLE, STDOUT, STDERR, STATUS)

# The STATUS channel's protocol: init writes each on a line of its own.
READY = "ready"                    # every published guest port listens
STATUS_LINE = "status {status}"    # the program exited with this status (a shell expression)
_STATUS_RE = re.compile(r"^status (\d+)$", re.M)

# Kernel console messages that fail a run, matched after the timestamp.  An
# ordinary process's faults are logged too ("segfault at", "traps: ...
# general protection fault ip:"), and are not kernel failures.  A WARNING
# fails when it starts the message, as WARN() splats and lockdep's and RCU's
# reports do; one that follows a subsystem's prefix is advice, as the
# speculation mitigations print at boot ("RETBleed: WARNING: ..."), and so
# are the hw-vuln pointer and the notice any process gets by passing
# mount(2) the deprecated MS_MANDLOCK.
FAILURE_PATTERNS = [r"Kernel panic", r"Oops:", r"\bBUG:", r"general protection fault(?! ip:)",
                    r"^WARNING:(?! See \S+/hw-vuln/)(?! The mand mount option)",
                    r"Unable to handle kernel", r"double fault",
                    r"^INFO: task \S+ blocked for more than",
                    r"^rcu: INFO: rcu_\w+ (self-)?detected stalls?"]
TAIL_LINES = 25
# Kernel console lines that `ukl run` repeats on the terminal as they come.
STARTED = re.compile(r"ukl: \S+ runs \S+ at CPL0")
NOTICE_PATTERNS = [r"ukl: unknown option", r"ukl: option \S+ is not built in",
                   STARTED.pattern, r"ukl: \S+ refused as CPL0 code"]
_TIMESTAMP_RE = re.compile(r"^\[ *\d+\.\d+\] ")


@dataclass
class Verdict:
    status: int | None        # the program's exit status, if the guest reported one
    failure: str | None       # why the run failed, or None


def is_ready(status_text: str) -> bool:
    return re.search(f"^{READY}$", status_text, re.M) is not None


def exit_status(status_text: str) -> int | None:
    hit = _STATUS_RE.search(status_text)
    return int(hit.group(1)) if hit else None


def notice(line: str) -> str | None:
    """LINE of the kernel console without its timestamp, if a user must see it."""
    if any(re.search(p, line) for p in NOTICE_PATTERNS):
        return _TIMESTAMP_RE.sub("", line.strip())
    return None


def kernel_failure(console: str) -> str | None:
    """The first console line that shows the kernel failed, or None."""
    for line in console.splitlines():
        message = _TIMESTAMP_RE.sub("", line.strip())
        if any(re.search(p, message) for p in FAILURE_PATTERNS):
            return f"kernel reported: {line.strip()}"
    return None


def judge(console: str, status_text: str, timed_out: float | None = None,
          stopped: bool = False, qemu_exit: str = "") -> Verdict:
    """A finished boot: a kernel failure first, then a timeout (TIMED_OUT is the
    limit in seconds that passed), then the program's status.  A guest the
    host STOPPED has no status to miss; QEMU_EXIT says how QEMU ended."""
    status = exit_status(status_text)
    failure = kernel_failure(console)
    if failure is None and timed_out:
        failure = f"timed out after {timed_out:.0f}s"
    if failure is None and status is None and not stopped:
        failure = "guest reported no exit status" + (f" ({qemu_exit})" if qemu_exit else "")
    return Verdict(None if stopped else status, failure)


def show_tail(console: Path, lines: int = TAIL_LINES, out=None):
    """The end of the kernel console, on stderr."""
    text = console.read_text(errors="replace").splitlines()[-lines:]
    print("\n".join([f"--- console tail ({console}) ---", *text]), file=out or sys.stderr)
