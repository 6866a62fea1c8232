"""perf for the guest (`ukl run --perf`): tools/perf of the pinned kernel,
built static with the host's compiler through the kernel's ccache, with
only what recording and `perf script` need (no libelf: symbols are
resolved on the host, from vmlinux and the program's ELF)."""
import os
from pathlib import Path

from . import cc, series, steps
from ..layout import OUT
from ..proc import run

BUILD = OUT / "tools" / "perf"
# Features perf would look for; each needs a library the guest does not have.
WITHOUT = ["LIBELF", "LIBTRACEEVENT", "JEVENTS", "LIBPYTHON", "LIBPERL", "SLANG", "GTK2",
           "LIBNUMA", "LIBCAP", "LIBCRYPTO", "LIBZSTD", "LZMA", "ZLIB", "LIBBABELTRACE",
           "CAPSTONE", "LIBPFM4", "AIO", "SDT", "DEMANGLE", "LIBDEBUGINFOD", "LIBLLVM",
           "LIBUNWIND", "LIBDW_DWARF_UNWIND", "LIBBPF", "BPF_SKEL", "AUXTRACE"]


def binary() -> Path:
    """The static perf executable."""
    tree = series.tree("linux")
    jobs = (os.cpu_count() or 1) + 1
    flags = [f"NO_{f}=1" for f in WITHOUT] + ["LDFLAGS=-static", "WERROR=0"]

    def build(dest: Path):
        run(["make", "-C", tree / "tools" / "perf", f"O={dest}", f"-j{jobs}",
             "CC=ccache gcc", *flags, "perf"], "build perf for the guest", "perf",
            env=cc.ccache_env())
        run(["strip", dest / "perf"], "strip perf", "perf")
    steps.stamped(BUILD, steps.key_of(steps.recorded(tree), flags), build)
    return BUILD / "perf"
