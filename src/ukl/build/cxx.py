"""The C++ runtime for UKL programs: LLVM's libc++, libc++abi, libunwind and
compiler-rt builtins, built once from the pinned source with the UKL code
flags against the UKL musl headers.

Kernel-model code (sign-extended 32-bit addresses) also links into ordinary
static executables below 2 GB, so the baseline uses the same archives.
"""
import os
import shutil
from pathlib import Path

from . import cc, fetch, libc, steps
from ..configs import Config
from ..layout import CACHE, OUT
from ..proc import run

# Built once for all clones: CACHE/cxx-<key>/, the newest two kept.
BUILD = OUT / "cxx-build"


def _flags(sysroot: Path) -> str:
    """The UKL code flags; the sysroot has <linux/futex.h>, which libc++'s atomics use."""
    return " ".join([*cc.UKL_CFLAGS, *cc.libc_includes(sysroot)])


def _cmake(src: Path, build: Path, root: Path, flags: str, step: str, *options: str):
    common = ["-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_INSTALL_PREFIX={root}",
              "-DCMAKE_C_COMPILER=gcc", "-DCMAKE_CXX_COMPILER=g++", "-DCMAKE_ASM_COMPILER=gcc",
              *(f"-DCMAKE_{lang}_FLAGS={flags}" for lang in ("C", "CXX", "ASM")),
              "-DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY",
              "-DCMAKE_POSITION_INDEPENDENT_CODE=OFF"]
    run(["cmake", "-S", src, "-B", build, *common, *options], f"configure {step}", "cxx")
    run(["ninja", "-C", build, f"-j{(os.cpu_count() or 1) + 1}"], f"build {step}", "cxx")


RUNTIMES = [
    "-DLLVM_ENABLE_RUNTIMES=libunwind;libcxxabi;libcxx", "-DLLVM_INCLUDE_TESTS=OFF",
    "-DLLVM_INCLUDE_DOCS=OFF",
    # No program headers exist for the app inside vmlinux: the unwinder
    # scans [__eh_frame_start, __eh_frame_end), which app.lds defines.
    "-DLIBUNWIND_ENABLE_SHARED=OFF", "-DLIBUNWIND_IS_BAREMETAL=ON",
    "-DLIBUNWIND_INCLUDE_TESTS=OFF", "-DLIBUNWIND_ENABLE_ASSERTIONS=OFF",
    "-DLIBUNWIND_USE_COMPILER_RT=OFF",
    "-DLIBCXXABI_ENABLE_SHARED=OFF", "-DLIBCXXABI_USE_LLVM_UNWINDER=ON",
    "-DLIBCXXABI_ENABLE_STATIC_UNWINDER=ON", "-DLIBCXXABI_INCLUDE_TESTS=OFF",
    "-DLIBCXXABI_USE_COMPILER_RT=OFF", "-DLIBCXXABI_ENABLE_ASSERTIONS=OFF",
    "-DLIBCXX_ENABLE_SHARED=OFF", "-DLIBCXX_HAS_MUSL_LIBC=ON", "-DLIBCXX_CXX_ABI=libcxxabi",
    "-DLIBCXX_ENABLE_STATIC_ABI_LIBRARY=ON", "-DLIBCXX_INCLUDE_TESTS=OFF",
    "-DLIBCXX_INCLUDE_BENCHMARKS=OFF", "-DLIBCXX_USE_COMPILER_RT=OFF",
    "-DLIBCXX_HAS_GCC_S_LIB=OFF", "-DLIBCXX_HAS_ATOMIC_LIB=OFF",
    "-DLIBCXX_ENABLE_ABI_LINKER_SCRIPT=OFF",
]

BUILTINS = [
    "-DCOMPILER_RT_BAREMETAL_BUILD=ON",
    "-DCOMPILER_RT_DEFAULT_TARGET_TRIPLE=x86_64-pc-linux-gnu",
    "-DCMAKE_C_COMPILER_TARGET=x86_64-pc-linux-gnu",
]


def _replace_red_zone_builtin(src: Path, root: Path, flags: str):
    """compiler-rt's x86_64/floatundixf.S stores below %rsp; use the C version."""
    archive = root / "lib" / "libclang_rt.builtins-x86_64.a"
    obj = BUILD / "floatundixf.o"
    run(["gcc", "-O2", *flags.split(), "-fno-builtin", "-c",
         src / "compiler-rt/lib/builtins/floatundixf.c", "-o", obj],
        "build floatundixf without the red zone", "cxx")
    run(["ar", "d", archive, "floatundixf.S.o"], "drop floatundixf.S", "cxx")
    run(["ar", "rs", archive, obj], "add floatundixf.c", "cxx")


def build(config: Config) -> Path:
    """Build the runtime, with the UKL C library of CONFIG's kernel, once for
    every clone; return its prefix."""
    ukl = libc.of_kind(config, "ukl")
    flags = _flags(libc.build(ukl))
    # The sysroot's path is left out: libc.key says what is in it.
    key = steps.key_of(fetch.pin_digest("llvm"), cc.UKL_CFLAGS, RUNTIMES, BUILTINS,
                       libc.key(ukl))

    def make(root: Path):
        src = fetch.unpack("llvm")
        shutil.rmtree(BUILD, ignore_errors=True)
        _cmake(src / "runtimes", BUILD / "runtimes", root, flags,
               "libc++, libc++abi, libunwind", *RUNTIMES)
        run(["ninja", "-C", BUILD / "runtimes", "install"], "install the C++ runtime", "cxx")
        _cmake(src / "compiler-rt/lib/builtins", BUILD / "builtins", root, flags,
               "compiler-rt builtins", *BUILTINS, f"-DLLVM_CMAKE_DIR={src}/llvm/cmake/modules")
        (root / "lib").mkdir(parents=True, exist_ok=True)
        shutil.copy(BUILD / "builtins/lib/linux/libclang_rt.builtins-x86_64.a", root / "lib")
        _replace_red_zone_builtin(src, root, flags)
    return steps.shared(CACHE, "cxx", key, make, 2)


def compile_flags(root: Path) -> list[str]:
    return ["-nostdinc++", "-isystem", str(root / "include" / "c++" / "v1")]


def libraries(root: Path) -> list[str]:
    return [f"-L{root / 'lib'}", "-lc++", "-lclang_rt.builtins-x86_64"]
