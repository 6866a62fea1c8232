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

from . import fetch, steps
from ..errors import UklError
from ..layout import KERNEL_PATCHES, MUSL_PATCHES, TREES
from ..proc import capture, run

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


APPLIED = "refs/ukl/applied"      # the commit the series was last applied or exported at


def _applied(tree: Path) -> str:
    applied = subprocess.run([*GIT, "-C", str(tree), "rev-parse", "-q", "--verify", APPLIED],
                             capture_output=True, text=True).stdout.strip()
    legacy = tree / ".git" / "ukl-series"          # how trees recorded it before the ref
    if not applied and legacy.exists():
        applied = (legacy.read_text().split() + ["", ""])[1]
    return applied


def _has_local_work(tree: Path) -> bool:
    head = _git(tree, "rev-parse", "HEAD").strip()
    applied = _applied(tree)
    return head != applied or bool(_git(tree, "status", "--porcelain",
                                        "--untracked-files=no").strip())


def _record(tree: Path):
    _git(tree, "update-ref", APPLIED, "HEAD")
    (tree / ".git" / "info" / "exclude").write_text(f"/{steps.STAMP}\n")


def _create(name: str, tree: Path):
    pin_name, _ = _component(name)
    work = tree.with_name(f".{tree.name}.new")
    shutil.rmtree(work, ignore_errors=True)
    fetch.unpack(pin_name, dest=work)
    steps.forget(work)                   # the tree's own stamp records the pin
    pin = fetch.pin(pin_name)
    message = f"upstream: Debian {pin['package']} {pin['version']}"
    for step in (["init", "-q"], ["add", "-f", "-A", "."],
                 ["commit", "-q", "-m", message], ["tag", "upstream"]):
        run([*GIT, "-C", work, *step], f"import {name} into git ({step[0]})", f"tree-{name}")
    os.rename(work, tree)


def _apply(name: str, tree: Path):
    """Upstream plus the series."""
    if (tree / ".git" / "rebase-apply").exists():         # an earlier apply that failed
        _git(tree, "am", "--abort")
    _git(tree, "checkout", "-q", "-f", "-B", "ukl", "upstream")
    _git(tree, "clean", "-q", "-f", "-d")
    series = patches(name)
    if series:
        try:
            run([*GIT, "-C", tree, "am", "-q", "--keep-cr", *series],
                f"apply {name} series ({len(series)} patches)", f"tree-{name}")
            _keep_notes(tree, series)
        except UklError:
            subprocess.run([*GIT, "-C", str(tree), "am", "--abort"], capture_output=True)
            raise
    _record(tree)


def _notes(patch: Path) -> str:
    """What a patch says below its first `---`, before its diffstat: our own
    history, which `git am` leaves out of the commit."""
    rest = patch.read_text(errors="replace").split("\n---\n", 1)[1:]
    before_diff = rest[0].split("\ndiff --git", 1)[0] if rest else ""
    end = before_diff.find("\n---\n")
    return before_diff[:end].strip("\n") if end > 0 else ""


def _keep_notes(tree: Path, series: list[Path]):
    """Put each patch's notes back at the end of its commit's message, after a
    `---` line, so that `ukl patches export` writes them where they were."""
    notes = [_notes(p) for p in series]
    if not any(notes):
        return
    parent = _git(tree, "rev-parse", "upstream").strip()
    for commit, note in zip(_git(tree, "rev-list", "--reverse", "upstream..HEAD").split(), notes):
        headers, body = _git(tree, "cat-file", "commit", commit).split("\n\n", 1)
        kept = [h for h in headers.splitlines() if h.startswith(("tree ", "author ", "committer "))]
        message = body.rstrip("\n") + (f"\n---\n{note}\n" if note else "\n")
        raw = "\n".join([kept[0], f"parent {parent}", *kept[1:]]) + "\n\n" + message
        res = subprocess.run([*GIT, "-C", str(tree), "hash-object", "-t", "commit", "-w",
                              "--stdin"], input=raw, text=True, capture_output=True)
        if res.returncode:
            raise UklError(f"cannot keep the notes of {commit} in {tree}: {res.stderr.strip()}")
        parent = res.stdout.strip()
    _git(tree, "update-ref", "HEAD", parent)


def tree(name: str) -> Path:
    """The patched tree for building.  Local work in it is used, never discarded."""
    path = TREES / name

    def apply(tree: Path):
        if not (tree / ".git").exists():
            shutil.rmtree(tree)
            _create(name, tree)
        elif _has_local_work(tree):
            raise UklError(f"{tree} has work that is not in the {name} series: "
                           f"run `ukl patches export {name}` or `ukl patches reset {name}`")
        _apply(name, tree)
    return steps.stamped(path, series_hash(name), apply, clean=False)


def reset(name: str) -> Path:
    path = TREES / name
    if (path / ".git").exists():
        with steps.lock(path):
            steps.forget(path)
            _apply(name, path)
            steps.mark(path, series_hash(name))
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
    _record(path)
    steps.mark(path, series_hash(name))
    return patches(name)


def signoff_errors(patch: Path) -> list[str]:
    """A patch's author must sign it off (Documentation/process/submitting-patches.rst)."""
    text = patch.read_text(errors="replace")
    head = text.split("\n---\n", 1)[0]
    author = re.search(r"^From: (.+)$", head, re.M)
    signers = re.findall(r"^Signed-off-by: (.+)$", head, re.M)
    if not author:
        return ["no From: line"]
    if author.group(1).strip() not in (s.strip() for s in signers):
        return [f"no Signed-off-by: from its author, {author.group(1).strip()}"]
    return []


def checkpatch(name: str = "linux") -> tuple[str, int]:
    """Run the kernel's checkpatch.pl over a series, and check each patch's
    sign-off; return the report and how many errors it found (warnings are
    reported, not counted).

    Patches go in on stdin: given a path that git tracks, checkpatch would
    check the .patch file as a source file instead of as a patch."""
    # The series leaves checkpatch.pl alone: any tree of the pinned source has it,
    # and a series that no longer applies is checked all the same.
    script = (TREES / "linux" if (TREES / "linux" / ".git").exists() else tree("linux")) \
        / "scripts/checkpatch.pl"
    report = []
    for p in patches(name):
        res = subprocess.run(["perl", script, "--no-tree", "--terse", "-"],
                             stdin=open(p, "rb"), capture_output=True, text=True)
        lines = [*res.stdout.strip().splitlines(), *(f"-:1: ERROR: {e}" for e in
                                                     signoff_errors(p))]
        report.append(f"{p.name}: " + ("\n".join(lines).replace("\n", f"\n{p.name}: ")
                                       or "no output"))
    text = "\n".join(report) + "\n"
    return text, len(re.findall(r": ERROR:", text))
