"""Resolve a PROGRAM argument and compile it for UKL or for the baseline."""
import os
import subprocess
import sys
from pathlib import Path

from . import cc, libc
from .errors import UklError
from .proc import first_error
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


def _compile(cmd: list[str], what: str):
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        raise UklError(f"{what} failed to compile: {first_error(res.stderr)}")


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
        _compile([*cc._gcc_base(sysroot), *CFLAGS, "-c", str(src), "-o", str(obj)], src.name)
        cc.link([str(obj)], tmp, sysroot)
    else:
        out = out_dir / src.stem
        tmp = out_dir / f"{src.stem}.new"
        gcc = libc.require("plain") / "bin" / "musl-gcc"
        _compile([str(gcc), *CFLAGS, "-static", str(src), "-o", str(tmp)], src.name)
    os.replace(tmp, out)
    return out
