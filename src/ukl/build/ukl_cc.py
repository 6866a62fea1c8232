"""ukl-cc: a C compiler driver that builds an unmodified program for UKL.

Compiling works like gcc, with the UKL C library's headers and no red zone.
Linking produces an ordinary static executable that carries the UKL program
(cc.link's checked object) in a section that is not loaded.
`ukl-cc --baseline` builds the same program for stock Linux.
"""
import os
import subprocess
import sys
from pathlib import Path

from . import cc, libc
from ..errors import UklError
from ..proc import capture, need

COMPILE_ONLY = {"-c", "-S", "-E", "-M", "-MM"}


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


def link_program(args: list[str], output: Path):
    """What `ukl-cc -o OUTPUT` writes: an ordinary static executable of the
    program (so configure scripts can run what they build) that carries the
    checked UKL object in a non-loaded section for `ukl run`."""
    ukl_obj = output.with_name(output.name + ".ukl.o")
    host = output.with_name(output.name + ".host")
    try:
        cc.link(args, ukl_obj, libc.require("ukl"))
        cc.link_host_executable(args, host, libc.require("baseline"))
        capture(["objcopy", "--add-section", f"{cc.UKL_SECTION}={ukl_obj}", str(host)])
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
    sysroot = libc.require("baseline" if baseline else "ukl")
    compile_cmd = (["gcc", *cc.FRAME_CFLAGS, *cc.libc_includes(sysroot)] if baseline
                   else cc.gcc_command(sysroot))
    if "-c" in args:                    # ccache: setup.sh installs it
        # The assembler by its contents (CCACHE_EXTRAFILES), not its path:
        # a clone elsewhere hits the same entries.
        env = {**cc.ccache_env(), "CCACHE_IGNOREOPTIONS": "-B*"}
        cache = [f"{k}={v}" for k, v in env.items()]
        return subprocess.call(["env", *cache, "ccache", *compile_cmd, *args])
    if COMPILE_ONLY & set(args) or _is_query(args):
        return subprocess.call([*compile_cmd, *args])
    rest, output = _split_output(args)
    if baseline:
        return subprocess.call([str(sysroot / "bin" / "musl-gcc"), *cc.FRAME_CFLAGS,
                                "-static", "-no-pie", *rest, "-o", output])
    link_program(rest, Path(output))
    return 0


def main(argv=None):
    try:
        sys.exit(compile_or_link(list(sys.argv[1:] if argv is None else argv)))
    except UklError as e:
        print(f"ukl-cc: error: {e}", file=sys.stderr)
        sys.exit(1)
