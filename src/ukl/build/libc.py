"""Build musl twice from the pinned source: patched for UKL ("ukl"), and plain
for the baseline ("baseline").  Both sysroots also get the pinned kernel's
UAPI headers (<linux/*.h>, <asm/*.h>), as a distribution's musl toolchain has.

Every function takes the configuration whose C library it is: its kind, and
for UKL code the kernel it will run in (whose speculation thunks it takes).
A configuration's name is resolved by configs.get, as at a command line
(ukl-cc's, a process of its own, names "ukl" or "baseline")."""
import dataclasses
import os
import shutil
from pathlib import Path

from . import cc, fetch, kernel, series, steps
from .. import configs
from ..configs import Config
from ..errors import UklError
from ..layout import KBUILD, OUT, SYSROOTS
from ..proc import run

KINDS = ("ukl", "baseline")
# In both sysroots: under UKL it declares the shortcuts, elsewhere it makes
# them the system calls they stand for (see the musl series).
SHORTCUT_HEADER = "include/ukl/shortcut.h"


def _thunks(config: Config) -> list[str]:
    """UKL code takes the speculation thunks of the UKL kernel it will run in."""
    return kernel.thunk_cflags(config.kernel) if config.kind == "ukl" else []


def variant(config: Config | str) -> str:
    """What a C library and the programs built with it are called under out/:
    the kind, and "ukl-thunks" for UKL code built with the kernel's thunks."""
    config = configs.get(config)
    if config.kind not in KINDS:
        raise UklError(f"a C library is built 'ukl' or 'baseline', not {config.kind!r}")
    return f"{config.kind}-thunks" if _thunks(config) else config.kind


def sysroot(config: Config | str) -> Path:
    return SYSROOTS / variant(config)


def of_kind(config: Config, kind: str) -> Config:
    """The C library of KIND for code that runs in CONFIG's kernel (ukl-cc
    links a program with both)."""
    return dataclasses.replace(config, kind=kind)


def _inputs(config: Config) -> tuple[Path, list[str], str, str]:
    """Source tree, CFLAGS, musl's gcc wrapper, and the key of the source."""
    if config.kind == "ukl":
        if not _thunks(config):
            return series.tree("musl"), ["-O2", *cc.UKL_CFLAGS], "no", series.series_hash("musl")
        # The thunks of musl's assembly come from ukl-cc's assembler.
        assembler = (cc.TOOLCHAIN / "as").read_text()
        return series.tree("musl"), ["-O2", *cc.UKL_CFLAGS, f"-B{cc.TOOLCHAIN}/",
                                     *_thunks(config)], "no", \
            steps.key_of(series.series_hash("musl"), assembler)
    return fetch.unpack("musl"), ["-O2", *cc.FRAME_CFLAGS], "gcc", \
        steps.key_of(fetch.pin_digest("musl"), series.series_hash("musl"))


def build(config: Config | str) -> Path:
    """Build and install musl into out/sysroot/<variant>; return the sysroot."""
    config = configs.get(config)
    kind = config.kind
    src, cflags, wrapper, source_key = _inputs(config)
    key = steps.key_of(source_key, fetch.pin_digest("kernel"), cflags)

    def make(root: Path):
        bdir = OUT / "musl-build" / variant(config)
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
        (root / cc.CODEGEN_FILE).write_text(" ".join(_thunks(config)))
    return steps.stamped(sysroot(config), key, make)


def key(config: Config | str) -> str:
    """What the built C library depends on: the key of everything built with it."""
    config = configs.get(config)
    recorded = steps.recorded(sysroot(config))
    if recorded is None:
        raise UklError(f"the {variant(config)} C library is not built: run `ukl build` first")
    return recorded


def require(config: Config | str) -> Path:
    key(config)
    return sysroot(config)
