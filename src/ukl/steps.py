"""Stamped build steps: a directory is either complete for its key or rebuilt from scratch.

A step builds into DEST, then writes DEST/.ukl-step with its key last.  A
missing or different stamp (an interrupted build, a changed pin or flag)
removes DEST and builds again, so nothing half-built is ever used.
"""
import fcntl
import hashlib
import json
import shutil
from pathlib import Path
from typing import Callable

STAMP = ".ukl-step"


def key_of(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def is_done(dest: Path, key: str) -> bool:
    stamp = dest / STAMP
    return stamp.exists() and stamp.read_text() == key


def stamped(dest: Path, key: str, build: Callable[[Path], None]) -> Path:
    """Run BUILD(DEST) unless DEST is complete for KEY; return DEST.
    One process at a time builds a DEST; the others wait and use its result."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest.parent / f".{dest.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_done(dest, key):
            return dest
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir()
        build(dest)
        (dest / STAMP).write_text(key)
    return dest
