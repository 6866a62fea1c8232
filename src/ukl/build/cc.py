"""Compiling and linking UKL code: its flags, the C runtime link sequence, and
the checks a UKL object must pass (see ukl_cc for the compiler driver).

A UKL object is crt, program and the UKL libc partially linked, with only the
kernel's UKL interface (__ukl_*) left undefined; `ukl` resolves that against
the kernel it boots (see kernel.link).
"""
import functools
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

from ..errors import UklError
from ..layout import CACHE, OUT
from ..proc import capture, first_error

# The bounds of .eh_frame that the bare-metal libunwind scans, for C++.
EH_FRAME_LDS = Path(__file__).with_name("eh_frame.lds")
KERNEL_ABI = "__ukl_"
# Defined by the final link of the executable (ld's default script and ours).
LINKER_PROVIDED = {"_GLOBAL_OFFSET_TABLE_", "__eh_frame_start", "__eh_frame_end",
                   "__eh_frame_hdr_start", "__eh_frame_hdr_end", "__dso_handle",
                   "__executable_start", "__ehdr_start", "etext", "_etext", "__etext",
                   "edata", "_edata", "end", "_end", "__bss_start",
                   "__preinit_array_start", "__preinit_array_end", "__init_array_start",
                   "__init_array_end", "__fini_array_start", "__fini_array_end"}
# ld defines __start_SECTION and __stop_SECTION for sections named like C identifiers.
SECTION_BOUND = re.compile(r"__(start|stop)_[A-Za-z_]\w*")


# gcc's names for the kernel's speculation thunks, which UKL code built for a
# kernel with retpolines and return thunks calls (see kernel.thunk_cflags).
THUNK = re.compile(r"__x86_(indirect_thunk_\w+|return_thunk)")


def _left_for_final_link(symbol: str) -> bool:
    return (symbol.startswith(KERNEL_ABI) or symbol in LINKER_PROVIDED
            or THUNK.fullmatch(symbol) is not None
            or SECTION_BOUND.fullmatch(symbol) is not None)


TRACE = re.compile(r"^.*: (reference to|definition of) \w+$", re.M)


def ccache_env() -> dict:
    """The compiler cache outlives out/ (and a fresh clone): a kernel or app
    built again from the same sources, in a clone anywhere, is mostly cache
    hits.  The UKL assembler (gcc -B) is hashed with each compile."""
    return {"CCACHE_DIR": str(CACHE / "ccache"), "CCACHE_NOHASHDIR": "true",
            "CCACHE_BASEDIR": str(OUT), "CCACHE_MAXSIZE": "5G",
            "CCACHE_EXTRAFILES": str(TOOLCHAIN / "as")}


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


def ukl_cc_path() -> Path:
    """The installed ukl-cc command (scripts directory of this Python)."""
    path = Path(sysconfig.get_path("scripts")) / "ukl-cc"
    return path if path.exists() else Path(sys.executable).with_name("ukl-cc")


# gcc -B: the assembler that turns an inline-assembly SYSCALL into the UKL entry.
TOOLCHAIN = Path(__file__).with_name("toolchain")


# Programs and C libraries of both kinds keep frame pointers, so that perf's
# call graphs (`ukl run --perf`) walk the program's frames, as Fedora and
# Ubuntu now build their distributions.
FRAME_CFLAGS = ["-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer"]
# UKL code is an ordinary static executable's code (small code model, linked
# at a low user address), without a red zone: a system call is a `call`
# hidden in inline assembly, which writes below %rsp.
UKL_CFLAGS = ["-mno-red-zone", "-fno-pie", *FRAME_CFLAGS]
UKL_SECTION = ".ukl.object"      # where ukl-cc's output carries the UKL object
# In a UKL sysroot: the code-generation flags beyond UKL_CFLAGS that its C
# library was built with, and every program built against it must be.
CODEGEN_FILE = "ukl-codegen"


def codegen_flags(sysroot: Path) -> list[str]:
    recorded = sysroot / CODEGEN_FILE
    return recorded.read_text().split() if recorded.exists() else []


def gcc_command(sysroot: Path) -> list[str]:
    return ["gcc", *UKL_CFLAGS, *codegen_flags(sysroot), f"-B{TOOLCHAIN}/",
            *libc_includes(sysroot)]


def crt_link(sysroot: Path, objects: list[str], libs=()) -> list[str]:
    """The C runtime around OBJECTS, for a link without gcc's start files."""
    lib = sysroot / "lib"
    return [str(lib / "crt1.o"), str(lib / "crti.o"), *objects, f"-L{lib}",
            "-Wl,--start-group", *libs, "-lc", "-lgcc", "-Wl,--end-group",
            str(lib / "crtn.o")]


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


# Instructions that would act on the machine or take the kernel's own state
# at CPL0: refused at link time.  ukl-cc's assembler turns the ones that raise
# SIGSEGV under Linux into a trap that raises it under UKL too (toolchain/as),
# so the privileged ones and `int` are found here only in code it did not assemble.
NOT_ASSEMBLED = " (ukl-cc assembles it as a trap that raises that SIGSEGV; this one was " \
                "written as bytes or assembled without ukl-cc)"
PRIVILEGED = ("a privileged instruction: under Linux it raises SIGSEGV, at CPL0 it "
              "would act on the machine" + NOT_ASSEMBLED)
PORT_IO = ("a privileged instruction: under Linux it raises SIGSEGV unless ioperm() or "
           "iopl() allowed the port, at CPL0 it would always reach the port")
GS = "UKL code runs on the kernel's GS base and has none of its own (docs/design.md)"
REFUSED_INSNS = {
    **dict.fromkeys(["hlt", "lgdt", "lidt", "lldt", "ltr", "lmsw", "clts", "invd", "wbinvd",
                     "invlpg", "invpcid", "rdmsr", "wrmsr", "wrmsrns", "xsetbv", "sysret",
                     "sysretl", "sysretq", "sysexit", "sysexitl", "sysexitq"], PRIVILEGED),
    **dict.fromkeys(["in", "out", "insb", "insw", "insl", "outsb", "outsw", "outsl"], PORT_IO),
    **dict.fromkeys(["swapgs", "lgs", "rdgsbase", "wrgsbase"], GS),
    "sysenter": "32-bit system calls, which UKL code does not have",
}
INSN = re.compile(r"^\s+[0-9a-f]+:\t(?:(?:rep[nz]*|lock|data16|addr32) )*(\S+)\s*(.*)")


def function_symbols(obj: Path) -> set[str]:
    """The names of OBJ's symbols of type function."""
    return {line.split()[-1] for line in capture(["objdump", "-t", str(obj)]).splitlines()
            if re.match(r"^[0-9a-f]+ .{6}F ", line)}


def refused_instruction(mnemonic: str, operands: str) -> str | None:
    """Why UKL code may not contain this instruction, or None."""
    if mnemonic in REFUSED_INSNS:
        return REFUSED_INSNS[mnemonic]
    if "%gs" in operands:
        return GS
    if re.search(r",%(?:cr|dr|db)\d+$", operands):   # reading one is harmless (examples/cpl.c)
        return PRIVILEGED
    if mnemonic == "int" and operands.strip() != "$0x3":
        return "at CPL0 it enters that kernel vector; under Linux it raises SIGSEGV" + \
            NOT_ASSEMBLED
    return None


def check_kernel_entries(obj: Path):
    """UKL code enters the kernel only with `cli; call __ukl_syscall`: a SYSCALL at
    CPL0 would switch to the user GS base and crash the kernel, and the kernel
    relies on that exact sequence (atomic like SYSCALL, 6 bytes to rewind on a
    restart, the only place where UKL code runs with interrupts off)."""
    func, insns = None, []          # instructions of the current function, in order
    functions = function_symbols(obj)   # not the data that some assembly keeps in .text
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
        elif m := INSN.match(line):
            insns.append(m.group(1))
            why = func in functions and refused_instruction(m.group(1), m.group(2))
            if why:
                insn = f"{m.group(1)} {m.group(2)}".strip()
                raise UklError(f"{func} uses `{insn}`: {why}")
            if insns[-1] == "syscall":
                raise UklError(f"{func} uses the SYSCALL instruction, which cannot run "
                               f"under UKL (ukl-cc rewrites it only when it stands alone "
                               f"on a line of inline assembly); use the C library's syscall()")
            if insns[-2:-1] == ["cli"] and insns[-1] != "call":
                raise UklError(stray_cli.format(func))


# What a thunk replaces: a RET, or a JMP or CALL through a register or memory.
RAW_BRANCH = re.compile(r"^\s+[0-9a-f]+:\t(?:(?:rep[z]? )?ret|(?:jmp|call)\S*\s+\*)")
# musl's longjmp ends in `jmp *56(%rdi)`, with no register free for a thunk.
KNOWN_UNTHUNKED = {"__longjmp", "_longjmp", "longjmp"}


def unthunked(obj: Path) -> list[str]:
    """The functions of OBJ that still return or branch indirectly by themselves."""
    found, func = [], None
    for line in capture(["objdump", "-d", "--no-show-raw-insn", str(obj)]).splitlines():
        if m := re.match(r"^[0-9a-f]+ <(.+)>:$", line):
            func = m.group(1)
        elif RAW_BRANCH.match(line) and func not in found:
            found.append(func)
    return found


def _warn_unthunked(obj: Path):
    """Code built elsewhere (a prebuilt archive, an assembler ukl-cc did not run)
    may lack the kernel's thunks: say where, once."""
    left = [f for f in unthunked(obj) if f not in KNOWN_UNTHUNKED]
    if left:
        more = f" and {len(left) - 3} more" if len(left) > 3 else ""
        print(f"ukl-cc: warning: {', '.join(left[:3])}{more} return or branch without the "
              f"kernel's speculation thunks", file=sys.stderr)


# A partial link has no entry point: the one the program asked for (-e) is
# kept as this symbol, which kernel.link makes the executable's entry.
ENTRY = "__ukl_entry"
# ld options spelled with one dash that start like -eSYMBOL.
LD_E_WORDS = re.compile(r"-e(xport-dynamic|h-frame-hdr|xclude-libs|nable-|rror-|mit-relocs"
                        r"|nd-group)")


def entry_symbol(args: list[str]) -> str | None:
    """The entry point ARGS ask the linker for (-e SYM, -Wl,-e,SYM, --entry=SYM)."""
    words, it = [], iter(args)
    for arg in it:
        if arg == "-e":
            words += ["-e", next(it, "")]
        elif arg.startswith("-Wl,"):
            words += arg[4:].split(",")
    entry, it = None, iter(words)
    for word in it:
        if word in ("-e", "--entry"):
            entry = next(it, None)
        elif word.startswith("--entry="):
            entry = word.partition("=")[2]
        elif word.startswith("-e") and len(word) > 2 and not LD_E_WORDS.match(word):
            entry = word[2:]
    return entry


def has_entry(obj: Path) -> bool:
    return any(line.split()[0] == ENTRY
               for line in capture(["nm", "-P", "--defined-only", str(obj)]).splitlines())


def link(args: list[str], output: Path, sysroot: Path, libs: list[str] = ()):
    """Partially link crt, ARGS, LIBS and libc into OUTPUT, checked."""
    partial = output.with_name(output.name + ".r.o")
    traced = [f"-Wl,-y,{s}" for s in sorted(DYNAMIC_LOADING)]
    entry = entry_symbol(args)
    cmd = [*gcc_command(sysroot), "-nostdlib", "-nostartfiles", "-static", "-no-pie",
           "-Wl,-r", *traced, *crt_link(sysroot, args, libs),
           *([f"-Wl,--defsym={ENTRY}={entry}"] if entry else []), "-o", str(partial)]
    trace = run_gcc(cmd, "link failed")
    try:
        check_undefined(partial)
        check_kernel_entries(partial)
        _warn_dynamic_loading(trace)
        if codegen_flags(sysroot):
            _warn_unthunked(partial)
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
    entry = output.with_name(output.name + ".entry.o")     # assembled alone: ARGS may
    try:                                                   # hold -include or -D
        run_gcc(["gcc", "-c", str(TOOLCHAIN / "host-entry.S"), "-o", str(entry)],
                "assembling host-entry.S failed")
        run_gcc(["gcc", *UKL_CFLAGS, *libc_includes(sysroot), "-static", "-no-pie",
                 "-nostdlib", "-nostartfiles", *crt_link(sysroot, [*args, str(entry)]),
                 "-o", str(output)], "link failed")
    finally:
        entry.unlink(missing_ok=True)
