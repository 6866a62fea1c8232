"""Patch series <-> git trees.

Each patched component lives in out/tree/<name> as a git repository whose
'upstream' tag is the pristine Debian source and whose commits are the
series, one per patch.  `ukl patches edit` hands out that tree to work in;
`ukl patches export` turns its commits back into the series.
"""
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from . import fetch
from .errors import UklError
from .layout import KERNEL_PATCHES, MUSL_PATCHES, TREES
from .proc import capture, run

COMPONENTS = {"linux": ("kernel", KERNEL_PATCHES), "musl": ("musl", MUSL_PATCHES)}
GIT = ["git", "-c", "user.name=ukl", "-c", "user.email=ukl@localhost",
       "-c", "gc.auto=0", "-c", "advice.detachedHead=false", "-c", "core.abbrev=7"]


def _component(name: str):
    if name not in COMPONENTS:
        raise UklError(f"unknown component {name!r}; valid: {', '.join(COMPONENTS)}")
    return COMPONENTS[name]


COVER_LETTER = "0000-cover-letter.patch"


def patches(name: str) -> list[Path]:
    """The series in order; a cover letter describes it and is not applied."""
    return sorted(p for p in _component(name)[1].glob("*.patch") if p.name != COVER_LETTER)


def series_hash(name: str) -> str:
    """The pinned source and the series applied to it."""
    h = hashlib.sha256(fetch.pin_digest(_component(name)[0]).encode())
    for p in patches(name):
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def _git(tree: Path, *args) -> str:
    return capture([*GIT, "-C", str(tree), *args])


def _stamp(tree: Path) -> Path:
    return tree / ".git" / "ukl-series"


def _create(name: str, tree: Path):
    pin_name, _ = _component(name)
    work = tree.with_name(f".{tree.name}.new")
    shutil.rmtree(work, ignore_errors=True)
    fetch.unpack(pin_name, dest=work)
    (work / ".ukl-pin").unlink()         # the series' own stamp records the pin
    pin = fetch.pin(pin_name)
    message = f"upstream: Debian {pin['package']} {pin['version']}"
    for step in (["init", "-q"], ["add", "-f", "-A", "."],
                 ["commit", "-q", "-m", message], ["tag", "upstream"]):
        run([*GIT, "-C", work, *step], f"import {name} into git ({step[0]})", f"tree-{name}")
    os.rename(work, tree)


def _apply(name: str, tree: Path):
    """Upstream plus the series; the stamp exists only once all of it applied."""
    _stamp(tree).unlink(missing_ok=True)
    if (tree / ".git" / "rebase-apply").exists():         # an earlier apply that failed
        _git(tree, "am", "--abort")
    _git(tree, "checkout", "-q", "-f", "-B", "ukl", "upstream")
    _git(tree, "clean", "-q", "-f", "-d")
    series = patches(name)
    if series:
        try:
            run([*GIT, "-C", tree, "am", "-q", "--keep-cr", *series],
                f"apply {name} series ({len(series)} patches)", f"tree-{name}")
        except UklError:
            subprocess.run([*GIT, "-C", str(tree), "am", "--abort"], capture_output=True)
            raise
    _stamp(tree).write_text(f"{series_hash(name)} {_git(tree, 'rev-parse', 'HEAD').strip()}\n")


def tree(name: str) -> Path:
    """The patched tree for building.  Local work in it is used, never discarded."""
    path = TREES / name
    if not (path / ".git").exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _create(name, path)
        _apply(name, path)
        return path
    recorded = _stamp(path).read_text().split() if _stamp(path).exists() else ["", ""]
    if recorded[0] == series_hash(name):
        return path
    head = _git(path, "rev-parse", "HEAD").strip()
    dirty = _git(path, "status", "--porcelain", "--untracked-files=no").strip()
    if dirty or head != recorded[1]:
        raise UklError(f"{path} has work that is not in the {name} series: "
                       f"run `ukl patches export {name}` or `ukl patches reset {name}`")
    _apply(name, path)
    return path


def reset(name: str) -> Path:
    path = TREES / name
    if (path / ".git").exists():
        _apply(name, path)
        return path
    return tree(name)


def export(name: str) -> list[Path]:
    """Write the tree's commits since 'upstream' back as the series."""
    path = TREES / name
    if not (path / ".git").exists():
        raise UklError(f"no tree for {name}: run `ukl patches edit {name}` first")
    if any((path / ".git" / d).exists() for d in ("rebase-merge", "rebase-apply")):
        raise UklError(f"{path} is in the middle of a rebase or am: finish it first")
    if _git(path, "status", "--porcelain", "--untracked-files=no").strip():
        raise UklError(f"{path} has uncommitted changes: commit them first")
    out_dir = _component(name)[1]
    staging = out_dir.with_name(out_dir.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    _git(path, "format-patch", "-q", "--no-signature", "--zero-commit",
         "-o", str(staging), "upstream..HEAD")
    for old in patches(name):
        old.unlink()
    out_dir.mkdir(parents=True, exist_ok=True)
    for new in sorted(staging.glob("*.patch")):
        os.replace(new, out_dir / new.name)
    staging.rmdir()
    _stamp(path).write_text(f"{series_hash(name)} {_git(path, 'rev-parse', 'HEAD').strip()}\n")
    return patches(name)


def checkpatch(name: str = "linux") -> tuple[str, int]:
    """Run the kernel's checkpatch.pl over a series; return its report and
    how many errors it found (warnings are reported, not counted).

    Patches go in on stdin: given a path that git tracks, checkpatch would
    check the .patch file as a source file instead of as a patch."""
    script = tree("linux") / "scripts/checkpatch.pl"
    report = []
    for p in patches(name):
        res = subprocess.run(["perl", script, "--no-tree", "--terse", "-"],
                             stdin=open(p, "rb"), capture_output=True, text=True)
        report.append(f"{p.name}: " + (res.stdout.strip().replace("\n", f"\n{p.name}: ")
                                       or "no output"))
    text = "\n".join(report) + "\n"
    return text, len(re.findall(r": ERROR:", text))
