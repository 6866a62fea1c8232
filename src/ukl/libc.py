"""Build musl twice from the pinned source: patched for UKL, and plain for the baseline.
Both sysroots also get the pinned kernel's UAPI headers (<linux/*.h>, <asm/*.h>),
as a distribution's musl toolchain has."""
import hashlib
import os
import shutil
from pathlib import Path

from . import fetch, series
from .errors import UklError
from .layout import KBUILD, OUT, SYSROOTS
from .proc import run

# UKL code is an ordinary static executable's code (small code model, linked
# at a low user address), without a red zone: a system call is a `call`
# hidden in inline assembly, which writes below %rsp.
UKL_CFLAGS = ["-mno-red-zone", "-fno-pie"]


def sysroot(flavor: str) -> Path:
    return SYSROOTS / flavor


def build(flavor: str) -> Path:
    """Build and install musl into out/sysroot/<flavor>; return the sysroot."""
    if flavor == "ukl":
        src, cflags, wrapper = series.tree("musl"), ["-O2", *UKL_CFLAGS], "no"
        key = series.series_hash("musl")
    else:
        src, cflags, wrapper = fetch.unpack("musl"), ["-O2"], "gcc"
        key = fetch.pin_digest("musl")
    root = sysroot(flavor)
    digest = hashlib.sha256(f"{key} {fetch.pin_digest('kernel')} {cflags}".encode()).hexdigest()
    stamp = root / ".ukl-stamp"
    if stamp.exists() and stamp.read_text() == digest:
        return root
    bdir = OUT / "musl-build" / flavor
    shutil.rmtree(bdir, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)
    bdir.mkdir(parents=True)
    env = {"CC": "gcc", "CFLAGS": " ".join(cflags)}
    run([src / "configure", f"--prefix={root}", "--disable-shared",
         f"--enable-wrapper={wrapper}"], f"configure musl ({flavor})", f"musl-{flavor}",
        cwd=bdir, env=env)
    jobs = (os.cpu_count() or 1) + 1
    run(["make", f"-j{jobs}"], f"build musl ({flavor})", f"musl-{flavor}", cwd=bdir)
    run(["make", "install"], f"install musl ({flavor})", f"musl-{flavor}", cwd=bdir)
    run(["make", "-C", series.tree("linux"), f"O={KBUILD / 'uapi-headers'}",
         f"INSTALL_HDR_PATH={root}", "headers_install"],
        f"install kernel UAPI headers ({flavor})", f"musl-{flavor}")
    stamp.write_text(digest)
    return root


def require(flavor: str) -> Path:
    root = sysroot(flavor)
    if not (root / ".ukl-stamp").exists():
        raise UklError(f"the {flavor} C library is not built: run `ukl build` first")
    return root
