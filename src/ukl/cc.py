"""ukl-cc: a C compiler driver that builds an unmodified program for UKL.

Compiling works like gcc, with the UKL C library's headers and no red zone.
Linking produces an ordinary static executable that carries the UKL program:
crt, program and the UKL libc partially linked and checked, in a section that
is not loaded.  Only the kernel's UKL interface (__ukl_*) is left undefined in
it; `ukl` resolves that against the kernel it boots (see kernel.link).
`ukl-cc --baseline` builds the same program for stock Linux.
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


TRACE = re.compile(r"^.*: (reference to|definition of) \w+$", re.M)


def run_gcc(cmd: list[str], failure: str) -> str:
    """Run a compiler command and show its messages, except the linker's
    symbol traces (-y), which it returns; on failure raise with the first error."""
    res = subprocess.run(cmd, capture_output=True, text=True)
    shown = "".join(line for line in res.stderr.splitlines(keepends=True)
                    if not TRACE.match(line))
    sys.stderr.write(shown)
    if res.returncode != 0:
        raise UklError(f"{failure}: {first_error(shown)}")
    return "\n".join(m.group(0) for m in TRACE.finditer(res.stderr))


@functools.cache
def _gcc_include() -> str:
    return capture(["gcc", "-print-file-name=include"]).strip()


def libc_includes(sysroot: Path) -> list[str]:
    """Only SYSROOT's C headers and gcc's own (stddef.h, ...), never the host's."""
    return ["-nostdinc", "-isystem", str(sysroot / "include"), "-isystem", _gcc_include()]


# gcc -B: the assembler that turns an inline-assembly SYSCALL into the UKL entry.
TOOLCHAIN = Path(__file__).with_name("toolchain")


def gcc_command(sysroot: Path) -> list[str]:
    return ["gcc", *libc.UKL_CFLAGS, f"-B{TOOLCHAIN}/", *libc_includes(sysroot)]


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


# Linked like any libc function; they fail when called (see the musl series).
DYNAMIC_LOADING = {"dlopen", "dlsym", "dladdr", "dlinfo", "dlclose"}


def check_undefined(obj: Path):
    missing = sorted(s for s, kind in undefined_symbols(obj).items()
                     if kind == "U" and not _left_for_final_link(s))
    if not missing:
        return
    more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
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
                               f"under UKL (ukl-cc rewrites it only when it stands alone "
                               f"on a line of inline assembly); use the C library's syscall()")
            if insns[-2:-1] == ["cli"] and insns[-1] != "call":
                raise UklError(stray_cli.format(func))


def link(args: list[str], output: Path, sysroot: Path, libs: list[str] = ()):
    """Partially link crt, ARGS, LIBS and libc into OUTPUT, checked."""
    lib = sysroot / "lib"
    partial = output.with_name(output.name + ".r.o")
    traced = [f"-Wl,-y,{s}" for s in sorted(DYNAMIC_LOADING)]
    cmd = [*gcc_command(sysroot), "-nostdlib", "-nostartfiles", "-static", "-no-pie",
           "-Wl,-r", *traced, str(lib / "crt1.o"), str(lib / "crti.o"), *args, f"-L{lib}",
           "-Wl,--start-group", *libs, "-lc", "-Wl,--end-group",
           str(lib / "crtn.o"), "-o", str(partial)]
    trace = run_gcc(cmd, "link failed")
    try:
        check_undefined(partial)
        check_kernel_entries(partial)
        _warn_dynamic_loading(trace)
        os.replace(partial, output)
    finally:
        partial.unlink(missing_ok=True)


def _warn_dynamic_loading(trace: str):
    """One line naming the dynamic-loading functions the program itself calls."""
    used = sorted({m.group(1) for m in re.finditer(r"^(?!.*libc\.a\().*: reference to (\w+)$",
                                                      trace, re.M)})
    if used:
        print(f"ukl-cc: warning: {', '.join(used)} linked: under UKL they fail at run time "
              f"(a UKL program cannot load code)", file=sys.stderr)


def link_host_executable(args: list[str], output: Path, sysroot: Path):
    """An ordinary static executable from ARGS and SYSROOT's C library."""
    lib = sysroot / "lib"
    run_gcc(["gcc", *libc.UKL_CFLAGS, *libc_includes(sysroot), "-static", "-no-pie",
             "-nostdlib", "-nostartfiles", str(lib / "crt1.o"), str(lib / "crti.o"), *args,
             str(TOOLCHAIN / "host-entry.S"), f"-L{lib}", "-Wl,--start-group", "-lc",
             "-Wl,--end-group", str(lib / "crtn.o"), "-o", str(output)], "link failed")


UKL_SECTION = ".ukl.object"


def link_program(args: list[str], output: Path):
    """What `ukl-cc -o OUTPUT` writes: an ordinary static executable of the
    program (so configure scripts can run what they build) that carries the
    checked UKL object in a non-loaded section for `ukl run`."""
    ukl_obj = output.with_name(output.name + ".ukl.o")
    host = output.with_name(output.name + ".host")
    try:
        link(args, ukl_obj, libc.require("ukl"))
        link_host_executable(args, host, libc.require("plain"))
        capture(["objcopy", "--add-section", f"{UKL_SECTION}={ukl_obj}", str(host)])
        os.replace(host, output)
    finally:
        ukl_obj.unlink(missing_ok=True)
        host.unlink(missing_ok=True)


# Build systems pass these for shared objects; a UKL program is one static
# executable, so they become the ordinary (small code model, non-PIC) code.
IGNORED = {"-fPIC", "-fpic", "-fPIE", "-fpie", "-pie", "-static-pie", "-rdynamic"}
REFUSED = {
    "-shared": "a UKL program is one static executable, not a shared library",
    "-mred-zone": "kernel code has no red zone: interrupts and system calls write below %rsp",
    "-mcmodel=kernel": "UKL programs run at user addresses (the default small code model)",
    "-fsanitize=address": "the sanitizer run-time libraries are not available for UKL",
    "-fsanitize=thread": "the sanitizer run-time libraries are not available for UKL",
}
# Arguments that ask gcc something instead of building.
QUERIES = ("-v", "--version", "-dumpversion", "-dumpmachine", "-dumpspecs", "--help")


def _flags(args: list[str]) -> list[str]:
    for arg in args:
        if arg in REFUSED:
            raise UklError(f"{arg} cannot be used: {REFUSED[arg]}")
    return [a for a in args if a not in IGNORED]


def _is_query(args: list[str]) -> bool:
    inputs = [a for a in args if not a.startswith("-") or a.startswith("-l")]
    return any(a in QUERIES or a.startswith("-print-") for a in args) or not inputs


def compile_or_link(args: list[str]) -> int:
    """ukl-cc [--baseline] GCC-ARGS: like gcc, for UKL (or for the stock baseline)."""
    baseline = "--baseline" in args
    args = _flags([a for a in args if a != "--baseline"])
    need("gcc")
    sysroot = libc.require("plain" if baseline else "ukl")
    compile_cmd = (["gcc", *libc_includes(sysroot)] if baseline else gcc_command(sysroot))
    if COMPILE_ONLY & set(args) or _is_query(args):
        return subprocess.call([*compile_cmd, *args])
    rest, output = _split_output(args)
    if baseline:
        return subprocess.call([str(sysroot / "bin" / "musl-gcc"), "-static", "-no-pie",
                                *rest, "-o", output])
    link_program(rest, Path(output))
    return 0


def main(argv=None):
    try:
        sys.exit(compile_or_link(list(sys.argv[1:] if argv is None else argv)))
    except UklError as e:
        print(f"ukl-cc: error: {e}", file=sys.stderr)
        sys.exit(1)
