"""Stamped build steps, the one stamp scheme every build step uses.

A step builds DEST, then writes DEST/.ukl-step holding its key.  A missing or
different stamp (an interrupted build, a changed pin or flag) builds again:
from scratch by default, or in place for steps whose output is incremental
(a kernel build directory, a git tree).  Nothing half-built is ever used.
A step's key is what later steps depend on: `recorded(DEST)` gives it.
"""
import fcntl
import hashlib
import json
import re
import shutil
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

STAMP = ".ukl-step"
_held = threading.local()           # locks this thread holds, with their depth
_in_use: dict[Path, object] = {}    # directory -> its open, shared-locked in-use file


def key_of(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def recorded(dest: Path) -> str | None:
    """The key DEST was completed for, or None."""
    stamp = dest / STAMP
    return stamp.read_text() if stamp.exists() else None


def is_done(dest: Path, key: str) -> bool:
    return recorded(dest) == key


def mark(dest: Path, key: str):
    """DEST is complete for KEY."""
    (dest / STAMP).write_text(key)


def forget(dest: Path):
    """DEST is no longer complete: its step runs again."""
    (dest / STAMP).unlink(missing_ok=True)


@contextmanager
def lock(dest: Path):
    """One process at a time works on DEST; nested use in one process is allowed."""
    dest = dest.resolve()
    held = _held.__dict__.setdefault("depth", {})
    depth = held.get(dest, 0)
    held[dest] = depth + 1
    try:
        if depth:
            yield
            return
        dest.parent.mkdir(parents=True, exist_ok=True)
        with open(dest.parent / f".{dest.name}.lock", "w") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            yield
    finally:
        held[dest] -= 1


def stamped(dest: Path, key: str, build: Callable[[Path], None], clean: bool = True) -> Path:
    """Run BUILD(DEST) unless DEST is complete for KEY; return DEST.
    CLEAN: start from an empty DEST.  Other processes wait and use the result."""
    with lock(dest):
        if is_done(dest, key):
            return dest
        if dest.is_file() or dest.is_symlink():       # what an older layout left there
            dest.unlink()
        if clean:
            shutil.rmtree(dest, ignore_errors=True)
        else:
            forget(dest)
        dest.mkdir(parents=True, exist_ok=True)
        build(dest)
        mark(dest, key)
    return dest


def hold(dest: Path):
    """This process uses DEST until it exits: reclaim() leaves it alone."""
    if dest not in _in_use:
        dest.parent.mkdir(parents=True, exist_ok=True)
        f = open(dest.parent / f".{dest.name}.in-use", "w")
        fcntl.flock(f, fcntl.LOCK_SH)
        _in_use[dest] = f


def reclaim(dest: Path) -> bool:
    """Remove DEST unless a process holds it; whether it was removed."""
    with open(dest.parent / f".{dest.name}.in-use", "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        # The lock files stay: a process waiting on one must find the same file.
        shutil.rmtree(dest, ignore_errors=True)
    return True


def prune(root: Path, name: str, keep: int):
    """Reclaim ROOT/NAME-<key>/ builds beyond the newest KEEP used, unless held
    (a user touches the stamp)."""
    mine = re.compile(re.escape(name) + r"-[0-9a-f]{16}")
    builds = sorted((p for p in root.iterdir() if p.is_dir() and mine.fullmatch(p.name)),
                    key=lambda p: (p / STAMP).stat().st_mtime if (p / STAMP).exists() else 0,
                    reverse=True)
    for old in builds[keep:]:
        reclaim(old)


def shared(root: Path, name: str, key: str, build: Callable[[Path], None], keep: int) -> Path:
    """ROOT/NAME-<key>/, built by BUILD unless done, held by this process, and
    NAME's builds beyond the newest KEEP used reclaimed."""
    dest = root / f"{name}-{key[:16]}"
    hold(dest)
    stamped(dest, key, build)
    (dest / STAMP).touch()
    prune(root, name, keep)
    return dest
