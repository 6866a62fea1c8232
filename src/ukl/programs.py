"""Resolve a PROGRAM argument and compile it for UKL or for the baseline."""
import os
from pathlib import Path

from . import cc, libc
from .errors import UklError
from .layout import EXAMPLES, PROGRAMS

CFLAGS = ["-O2", "-Wall"]


def examples() -> list[str]:
    return sorted(p.stem for p in EXAMPLES.glob("*.c"))


def source(program: str) -> Path:
    candidate = EXAMPLES / f"{program}.c"
    if "/" not in program and candidate.exists():
        return candidate
    path = Path(program)
    if path.suffix == ".c" and path.is_file():
        return path.resolve()
    raise UklError(f"unknown program {program!r}: not an example ({', '.join(examples())}) "
                   f"and not a C source file")


def name(program: str) -> str:
    return source(program).stem


def build(program: str, flavor: str) -> Path:
    """Compile PROGRAM; 'ukl' gives a UKL object, 'baseline' a static musl executable."""
    src = source(program)
    out_dir = PROGRAMS / flavor
    out_dir.mkdir(parents=True, exist_ok=True)
    if flavor == "ukl":
        out = out_dir / f"{src.stem}.o"
        tmp = out_dir / f"{src.stem}.o.new"
        sysroot = libc.require("ukl")
        obj = out_dir / f"{src.stem}.c.o"
        cc.run_gcc([*cc.gcc_command(sysroot), *CFLAGS, "-c", str(src), "-o", str(obj)],
                   f"{src.name} failed to compile")
        cc.link([str(obj)], tmp, sysroot)
    else:
        out = out_dir / src.stem
        tmp = out_dir / f"{src.stem}.new"
        gcc = libc.require("plain") / "bin" / "musl-gcc"
        cc.run_gcc([str(gcc), *CFLAGS, "-static", str(src), "-o", str(tmp)],
                   f"{src.name} failed to compile")
    os.replace(tmp, out)
    return out
