"""Run external commands with a log file, a progress line and one-line errors."""
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from .errors import UklError
from .layout import LOGS

SETUP_HINT = "run ./setup.sh"


def need(tool: str) -> str:
    """TOOL's path; the sbin directories count, which a user's PATH may leave out."""
    path = shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin")
    if not path:
        raise UklError(f"missing dependency: {tool} is not installed ({SETUP_HINT})")
    return path


class Progress:
    """Shows 'step, elapsed time, last log line' on stderr while a step runs."""

    def __init__(self, step: str, log: Path):
        self.step, self.log = step, log
        self.start = time.monotonic()
        self.tty = sys.stderr.isatty()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self):
        if not self.tty:
            print(f"ukl: {self.step} (log: {self.log})", file=sys.stderr, flush=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        elapsed = time.monotonic() - self.start
        status = "failed" if exc[0] else "done"
        self._print(f"ukl: {self.step}: {status} in {elapsed:.0f}s", final=True)

    def _last_line(self) -> str:
        try:
            with open(self.log, "rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - 4096))
                lines = f.read().decode(errors="replace").strip().splitlines()
                return lines[-1].strip() if lines else ""
        except OSError:
            return ""

    def _print(self, text: str, final: bool = False):
        if self.tty:
            width = shutil.get_terminal_size((100, 20)).columns - 1
            end = "\n" if final else ""
            sys.stderr.write("\r\033[K" + text[:width] + end)
        elif final:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def _loop(self):
        period = 0.5 if self.tty else 30.0
        while not self.stop.wait(period):
            elapsed = time.monotonic() - self.start
            self._print(f"ukl: {self.step} [{elapsed:.0f}s] {self._last_line()}",
                        final=not self.tty)


def run(cmd, step: str, log_name: str, cwd=None, env=None) -> Path:
    """Run cmd, logging to out/logs/<log_name>.log; raise UklError on failure."""
    if "/" not in str(cmd[0]):
        need(cmd[0])
    LOGS.mkdir(parents=True, exist_ok=True)
    log = LOGS / f"{log_name}.log"
    full_env = dict(os.environ, **(env or {}))
    with open(log, "wb") as out, Progress(step, log):
        out.write(f"$ {shlex.join(map(str, cmd))}\n".encode())
        out.flush()
        proc = subprocess.Popen(cmd, cwd=cwd, env=full_env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            rc = proc.wait()
        except BaseException:        # interrupted: the step is redone next time
            proc.kill()
            proc.wait()
            raise
    if rc != 0:
        raise UklError(f"{step} failed (exit {rc}): {last_error(log)} [log: {log}]")
    return log


def last_error(log: Path) -> str:
    """The most telling line of a failed log: the first error, else the last line."""
    return first_error(log.read_text(errors="replace"))


def first_error(text: str) -> str:
    """The first compiler/make error line in text, else its last line."""
    lines = text.splitlines()
    for pattern in (r"\berror\b:(?! ld returned)", r"\bld: |\*\*\*|\bfatal\b|\bE: "):
        for line in lines:
            if re.search(pattern, line, re.I) and not line.startswith("$ "):
                return line.strip()
    return lines[-1].strip() if lines else "no output"


def capture(cmd, cwd=None) -> str:
    """Run a short command and return its stdout; raise UklError on failure."""
    need(cmd[0])
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if res.returncode != 0:
        msg = (res.stderr or res.stdout).strip().splitlines()
        raise UklError(f"{shlex.join(map(str, cmd))} failed: {msg[-1] if msg else res.returncode}")
    return res.stdout
