"""Build the kernel at each patch of the series, as `git bisect` would meet it.

The tree and build directory sit under out/bisect/ in the same shape as
out/tree/linux and out/kbuild/<flavor>, so the compiler cache's relative
paths match and patches that leave a file alone reuse its object.  Each
patch is built with the flavor's configuration, taken afresh from tinyconfig
and the fragments: an option that a later patch adds is simply not there yet.
"""
import re
import subprocess
import time
from pathlib import Path

from . import cc, kernel, series, steps
from ..errors import UklError
from ..layout import OUT, TREES
from ..proc import run

BISECT = OUT / "bisect"
WARNING = re.compile(r"^(\S+:\d+:\d+: warning: .*|.*objtool: .*)$", re.M)


def _git(tree: Path, *args) -> str:
    res = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True)
    if res.returncode:
        last = (res.stderr.strip().splitlines() or ["no message"])[-1]
        raise UklError(f"git {args[0]} in {tree} failed: {last}")
    return res.stdout


def _fresh_tree() -> Path:
    """A worktree of the pinned source at 'upstream', with nothing applied."""
    base = TREES / "linux"
    if not (base / ".git").exists():
        base = series.tree("linux")          # only for its git objects and 'upstream'
    tree = BISECT / "tree" / "linux"
    if not (tree / ".git").exists():
        tree.parent.mkdir(parents=True, exist_ok=True)
        _git(base, "worktree", "prune")
        _git(base, "worktree", "add", "-q", "--detach", str(tree), "upstream")
    if Path(_git(tree, "rev-parse", "--absolute-git-dir").strip(), "rebase-apply").exists():
        _git(tree, "am", "--abort")
    _git(tree, "checkout", "-q", "-f", "--detach", "upstream")
    _git(tree, "clean", "-q", "-f", "-d")
    return tree


def _build(tree: Path, bdir: Path, flavor: str, label: str) -> Path:
    make = ["make", "-C", str(tree), f"O={bdir}", "CC=ccache gcc"]
    env = {**cc.ccache_env(), "ARCH": "x86_64"}
    run([*make, "tinyconfig"], f"{label}: configure", "bisect-config", env=env)
    run([tree / "scripts/kconfig/merge_config.sh", "-m", "-O", bdir, bdir / ".config",
         *kernel.fragments(flavor)], f"{label}: merge fragments", "bisect-config",
        cwd=tree, env=env)
    run([*make, "olddefconfig"], f"{label}: configure", "bisect-config", env=env)
    return run([*make, f"-j{kernel.jobs()}", "bzImage"], f"{label}: build", "bisect-build",
               env=env)


def check(flavor: str = "ukl") -> list[str]:
    """Apply the series one patch at a time and build each; return one line
    per patch.  Raises at the first patch that does not apply or build, or
    that adds a compiler or objtool warning."""
    kernel.build_dir(flavor)                  # an unknown flavor is refused
    with steps.lock(BISECT / "tree"):         # one bisect at a time owns the tree
        return _check(flavor)


def _check(flavor: str) -> list[str]:
    patches = series.patches("linux")
    tree, bdir = _fresh_tree(), BISECT / "kbuild" / flavor
    bdir.mkdir(parents=True, exist_ok=True)
    lines, known = [], set()
    for i, patch in enumerate(patches, 1):
        label = f"bisect {i}/{len(patches)}"
        try:
            _git(tree, "am", "-q", "--keep-cr", str(patch))
        except UklError as e:
            raise UklError(f"{patch.name} does not apply ({e})")
        start = time.monotonic()
        log = _build(tree, bdir, flavor, label)
        warnings = set(WARNING.findall(log.read_text(errors="replace")))
        new = sorted(warnings - known)
        if new:
            raise UklError(f"{patch.name} adds a warning: {new[0]}")
        known |= warnings
        lines.append(f"{patch.name}: builds ({flavor}, {time.monotonic() - start:.0f} s)")
        print(lines[-1], flush=True)
    return lines
