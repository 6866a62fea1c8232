"""Linux's tools on the program: a function_graph trace (--ftrace) and core
dumps (--core), both brought out through --out."""
import re
import shutil
from pathlib import Path

from . import image
from .. import symbols
from ..errors import UklError

USER_TOP = 0x0000_8000_0000_0000       # lower addresses are the program's
_FRAME = re.compile(r"^( => )(0x[0-9a-f]+|[0-9a-f]{16})$")


def check(built, ftrace: tuple, core: bool, out: Path | None):
    """Before boot: the options need --out, and the functions must exist."""
    for flag, wanted in (("--ftrace", ftrace), ("--core", core)):
        if wanted and out is None:
            raise UklError(f"{flag} needs --out HOSTDIR to bring its files out")
    if ftrace:
        known = {name for _, name in symbols.nm(built.vmlinux)}
        for name in ftrace:
            if name not in known:
                raise UklError(f"--ftrace: the kernel has no function named {name!r}")


def finish(built, ftrace: tuple, core: bool, out: Path):
    """After the guest's /out arrived in OUT: name the program's frames in the
    trace, and put the program's ELF beside its core."""
    trace = out / image.TRACE_FILE
    if ftrace and trace.exists():
        _name_program_frames(trace, symbols.nm(built.elf))
    if core:
        shutil.copyfile(built.elf, out / "program")


def _name_program_frames(trace: Path, table: list):
    """Stack-trace lines the kernel could only print as addresses (the
    program's code has no kallsyms) get the program's symbol, e.g.
    ' => 0x401a2b' becomes ' => 0x401a2b <write+0x1b> [program]'."""
    lines = trace.read_text(errors="replace").splitlines(keepends=True)
    for i, line in enumerate(lines):
        m = _FRAME.match(line.rstrip("\n"))
        if m and int(m.group(2), 16) < USER_TOP:
            where = symbols.locate(table, int(m.group(2), 16))
            if where:
                lines[i] = f"{line.rstrip()} <{where}> [program]\n"
    tmp = trace.with_suffix(".tmp")
    tmp.write_text("".join(lines))
    tmp.replace(trace)
