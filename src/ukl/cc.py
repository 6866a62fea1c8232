"""ukl-cc: a C compiler driver that builds an unmodified program for UKL.

Compiling works like gcc, with the UKL C library's headers and no red zone.
Linking produces a relocatable object instead of an executable: crt, program
and libc partially linked and checked.  Only the kernel's UKL interface
(__ukl_*) is left undefined; `ukl` resolves it against the kernel it boots
(see kernel.link).
"""
import functools
import os
import re
import subprocess
import sys
from pathlib import Path

from . import libc
from .errors import UklError
from .proc import capture, first_error, need

# The bounds of .eh_frame that the bare-metal libunwind scans, for C++.
EH_FRAME_LDS = Path(__file__).with_name("eh_frame.lds")
KERNEL_ABI = "__ukl_"
# Defined by the final link of the executable.
LINKER_PROVIDED = {"_GLOBAL_OFFSET_TABLE_", "__eh_frame_start", "__eh_frame_end",
                   "__eh_frame_hdr_start", "__eh_frame_hdr_end", "__dso_handle"}
COMPILE_ONLY = {"-c", "-S", "-E", "-M", "-MM"}


def _left_for_final_link(symbol: str) -> bool:
    return symbol.startswith(KERNEL_ABI) or symbol in LINKER_PROVIDED


def run_gcc(cmd: list[str], failure: str):
    """Run a compiler command; on failure show its messages and raise with the first error."""
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        raise UklError(f"{failure}: {first_error(res.stderr)}")


@functools.cache
def _gcc_include() -> str:
    return capture(["gcc", "-print-file-name=include"]).strip()


def libc_includes(sysroot: Path) -> list[str]:
    """Only SYSROOT's C headers and gcc's own (stddef.h, ...), never the host's."""
    return ["-nostdinc", "-isystem", str(sysroot / "include"), "-isystem", _gcc_include()]


def gcc_command(sysroot: Path) -> list[str]:
    return ["gcc", *libc.UKL_CFLAGS, *libc_includes(sysroot)]


def _split_output(args: list[str]) -> tuple[list[str], str]:
    rest, output, it = [], "a.out", iter(args)
    for arg in it:
        if arg == "-o":
            output = next(it, output)
        elif arg.startswith("-o") and len(arg) > 2:
            output = arg[2:]
        else:
            rest.append(arg)
    return rest, output


def undefined_symbols(obj: Path) -> dict[str, str]:
    """name -> nm type ('U' strong, 'w'/'v' weak) of every undefined symbol."""
    syms = {}
    for line in capture(["nm", "-u", "-P", str(obj)]).splitlines():
        parts = line.split()
        if len(parts) >= 2:
            syms[parts[0]] = parts[1]
    return syms


DYNAMIC_LOADING = {"dlopen", "dlsym", "dladdr", "dlinfo", "dlclose", "dlmopen", "dlvsym"}


def check_undefined(obj: Path):
    missing = sorted(s for s, kind in undefined_symbols(obj).items()
                     if kind == "U" and not _left_for_final_link(s))
    if not missing:
        return
    more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
    loading = sorted(DYNAMIC_LOADING & set(missing))
    if loading:
        raise UklError(f"undefined symbol {loading[0]}{more}: a UKL program is one static "
                       f"image inside the kernel and cannot load code at run time")
    raise UklError(f"undefined symbol {missing[0]}{more}: neither the program nor the "
                   f"UKL C library provides it")


def check_kernel_entries(obj: Path):
    """UKL code enters the kernel only with `cli; call __ukl_syscall`: a SYSCALL at
    CPL0 would switch to the user GS base and crash the kernel, and the kernel
    relies on that exact sequence (atomic like SYSCALL, 6 bytes to rewind on a
    restart, the only place where UKL code runs with interrupts off)."""
    func, insns = None, []          # instructions of the current function, in order
    stray_cli = "{} disables interrupts, which UKL code may do only to enter the kernel " \
                "(cli; call __ukl_syscall)"
    for line in capture(["objdump", "-dr", "--no-show-raw-insn", str(obj)]).splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            func, insns = m.group(1), []
        elif "R_X86_64_" in line:
            entry = insns[-2:] == ["cli", "call"]
            if "__ukl_syscall" in line and not entry:
                raise UklError(f"{func} calls __ukl_syscall without the cli before it")
            if entry and "__ukl_syscall" not in line:
                raise UklError(stray_cli.format(func))
        elif m := re.match(r"^\s+[0-9a-f]+:\t(\S+)", line):
            insns.append(m.group(1))
            if insns[-1] == "syscall":
                raise UklError(f"{func} uses the SYSCALL instruction, which cannot run "
                               f"under UKL; use the C library's syscall()")
            if insns[-2:-1] == ["cli"] and insns[-1] != "call":
                raise UklError(stray_cli.format(func))


def link(args: list[str], output: Path, sysroot: Path, libs: list[str] = ()):
    """Partially link crt, ARGS, LIBS and libc into OUTPUT, checked."""
    lib = sysroot / "lib"
    partial = output.with_name(output.name + ".r.o")
    cmd = [*gcc_command(sysroot), "-nostdlib", "-nostartfiles", "-static", "-no-pie",
           "-Wl,-r", str(lib / "crt1.o"), str(lib / "crti.o"), *args, f"-L{lib}",
           "-Wl,--start-group", *libs, "-lc", "-Wl,--end-group",
           str(lib / "crtn.o"), "-o", str(partial)]
    run_gcc(cmd, "link failed")
    try:
        check_undefined(partial)
        check_kernel_entries(partial)
        os.replace(partial, output)
    finally:
        partial.unlink(missing_ok=True)


def compile_or_link(args: list[str]) -> int:
    need("gcc")
    sysroot = libc.require("ukl")
    if COMPILE_ONLY & set(args):
        return subprocess.call([*gcc_command(sysroot), *args])
    rest, output = _split_output(args)
    link(rest, Path(output), sysroot)
    return 0


def main(argv=None):
    try:
        sys.exit(compile_or_link(list(sys.argv[1:] if argv is None else argv)))
    except UklError as e:
        print(f"ukl-cc: error: {e}", file=sys.stderr)
        sys.exit(1)
