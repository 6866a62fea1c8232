"""Running the `ukl` command as a user does, and what a bad input must print."""
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

UKL = [sys.executable, "-m", "ukl.cli"]


def ukl(*args, env=None, cwd=None):
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([*UKL, *args], capture_output=True, text=True, env=full_env, cwd=cwd)


def assert_one_line_error(res, *needles):
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("ukl: error: ") or last.startswith("ukl-cc: error: "), last
    for needle in needles:
        assert needle in last, last


START_TIMEOUT = 300
# A build step's progress ("[30s] ...", ": done in 62s"): a cold build of the
# app is not the boot, so START_TIMEOUT counts from the last of these.
BUILD_PROGRESS = re.compile(r"^ukl: .*(\[\d+s\] |: done in \d+s$)")


def until_started(lines):
    """LINES, failing once START_TIMEOUT passes with no build progress."""
    deadline = time.monotonic() + START_TIMEOUT
    for line in lines:
        yield line
        if BUILD_PROGRESS.match(line):
            deadline = time.monotonic() + START_TIMEOUT
        assert time.monotonic() < deadline, f"nothing within {START_TIMEOUT}s: {line!r}"


class Run:
    """`ukl run ARGS` in the background, as a user's shell starts it."""

    def __init__(self, *args, session=False):
        """SESSION: in a session of its own, as a terminal's foreground job."""
        self.proc = subprocess.Popen([*UKL, "run", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     start_new_session=session)

    def wait_for(self, stream, text: str) -> str:
        for line in until_started(stream):
            if text in line:
                return line
        raise AssertionError(f"{text!r} never came; stderr: {self.proc.stderr.read()[-2000:]}")

    def signal(self, sig) -> float:
        self.proc.send_signal(sig)
        return time.monotonic()

    def kill_qemu(self):
        """SIGKILL to the guest's QEMU, as a crash of the host process would end it."""
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                pid, comm, _, ppid = stat.read_text().split()[:4]
            except OSError:
                continue
            if int(ppid) == self.proc.pid and comm.startswith("(qemu-system"):
                os.kill(int(pid), signal.SIGKILL)
                return
        raise AssertionError("no QEMU process under ukl run")

    def finish(self, timeout=60) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()
