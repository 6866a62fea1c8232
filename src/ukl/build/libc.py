"""Build musl twice from the pinned source: patched for UKL ("ukl"), and plain
for the baseline ("baseline").  Both sysroots also get the pinned kernel's
UAPI headers (<linux/*.h>, <asm/*.h>), as a distribution's musl toolchain has."""
import os
import shutil
from pathlib import Path

from . import cc, fetch, kernel, series, steps
from ..configs import ukl_kernel
from ..errors import UklError
from ..layout import KBUILD, OUT, SYSROOTS
from ..proc import run

KINDS = ("ukl", "baseline")
# In both sysroots: under UKL it declares the shortcuts, elsewhere it makes
# them the system calls they stand for (see the musl series).
SHORTCUT_HEADER = "include/ukl/shortcut.h"


def _thunks(kind: str) -> list[str]:
    """UKL code takes the speculation thunks of the UKL kernel it will run in."""
    return kernel.thunk_cflags(ukl_kernel()) if kind == "ukl" else []


def variant(kind: str) -> str:
    """What a C library and the programs built with it are called under out/:
    the kind, and "ukl-thunks" for UKL code built with the kernel's thunks."""
    if kind not in KINDS:
        raise UklError(f"a C library is built 'ukl' or 'baseline', not {kind!r}")
    return f"{kind}-thunks" if _thunks(kind) else kind


def sysroot(kind: str) -> Path:
    return SYSROOTS / variant(kind)


def _inputs(kind: str) -> tuple[Path, list[str], str, str]:
    """Source tree, CFLAGS, musl's gcc wrapper, and the key of the source."""
    if kind == "ukl":
        if not _thunks(kind):
            return series.tree("musl"), ["-O2", *cc.UKL_CFLAGS], "no", series.series_hash("musl")
        # The thunks of musl's assembly come from ukl-cc's assembler.
        assembler = (cc.TOOLCHAIN / "as").read_text()
        return series.tree("musl"), ["-O2", *cc.UKL_CFLAGS, f"-B{cc.TOOLCHAIN}/",
                                     *_thunks(kind)], "no", \
            steps.key_of(series.series_hash("musl"), assembler)
    return fetch.unpack("musl"), ["-O2", *cc.FRAME_CFLAGS], "gcc", \
        steps.key_of(fetch.pin_digest("musl"), series.series_hash("musl"))


def build(kind: str) -> Path:
    """Build and install musl into out/sysroot/<kind>; return the sysroot."""
    src, cflags, wrapper, source_key = _inputs(kind)
    key = steps.key_of(source_key, fetch.pin_digest("kernel"), cflags)

    def make(root: Path):
        bdir = OUT / "musl-build" / variant(kind)
        shutil.rmtree(bdir, ignore_errors=True)
        bdir.mkdir(parents=True)
        env = {"CC": "gcc", "CFLAGS": " ".join(cflags)}
        run([src / "configure", f"--prefix={root}", "--disable-shared",
             f"--enable-wrapper={wrapper}"], f"configure musl ({kind})", f"musl-{kind}",
            cwd=bdir, env=env)
        jobs = (os.cpu_count() or 1) + 1
        run(["make", f"-j{jobs}"], f"build musl ({kind})", f"musl-{kind}", cwd=bdir)
        run(["make", "install"], f"install musl ({kind})", f"musl-{kind}", cwd=bdir)
        run(["make", "-C", series.tree("linux"), f"O={KBUILD / 'uapi-headers'}",
             f"INSTALL_HDR_PATH={root}", "headers_install"],
            f"install kernel UAPI headers ({kind})", f"musl-{kind}")
        if kind == "baseline":        # one source builds for both: the shortcuts are calls
            (root / "include" / "ukl").mkdir(exist_ok=True)
            shutil.copy(series.tree("musl") / SHORTCUT_HEADER, root / "include" / "ukl")
        (root / cc.CODEGEN_FILE).write_text(" ".join(_thunks(kind)))
    return steps.stamped(sysroot(kind), key, make)


def key(kind: str) -> str:
    """What the built C library depends on: the key of everything built with it."""
    recorded = steps.recorded(sysroot(kind))
    if recorded is None:
        raise UklError(f"the {kind} C library is not built: run `ukl build` first")
    return recorded


def require(kind: str) -> Path:
    key(kind)
    return sysroot(kind)
