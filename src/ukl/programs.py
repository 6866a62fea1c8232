"""Resolve a PROGRAM argument and compile it for UKL or for the baseline."""
import os
from pathlib import Path

from . import cc, cxx, libc
from .errors import UklError
from .layout import EXAMPLES, PROGRAMS

CFLAGS = ["-O2", "-Wall"]
SUFFIXES = (".c", ".cpp")


def examples() -> list[str]:
    return sorted(p.stem for p in EXAMPLES.iterdir() if p.suffix in SUFFIXES)


def source(program: str) -> Path:
    for suffix in SUFFIXES:
        candidate = EXAMPLES / f"{program}{suffix}"
        if "/" not in program and candidate.exists():
            return candidate
    path = Path(program)
    if path.suffix in SUFFIXES and path.is_file():
        return path.resolve()
    raise UklError(f"unknown program {program!r}: not an example ({', '.join(examples())}) "
                   f"and not a C or C++ source file")


def name(program: str) -> str:
    return source(program).stem


def _compiler(src: Path, sysroot: Path, ukl: bool) -> list[str]:
    base = cc.gcc_command(sysroot) if ukl else ["gcc", *cc.libc_includes(sysroot)]
    if src.suffix == ".cpp":
        return ["g++", *cxx.compile_flags(), *base[1:]]
    return base


def _link_baseline_cxx(obj: Path, out: Path, sysroot: Path):
    lib = sysroot / "lib"
    cc.run_gcc(["gcc", "-static", "-no-pie", "-nostdlib", f"-Wl,-T,{cc.EH_FRAME_LDS}",
                str(lib / "crt1.o"), str(lib / "crti.o"), str(obj), f"-L{lib}",
                "-Wl,--start-group", *cxx.libraries(), "-lc", "-Wl,--end-group",
                str(lib / "crtn.o"), "-o", str(out)], "link failed")


def build(program: str, flavor: str) -> Path:
    """Compile PROGRAM; 'ukl' gives a UKL object, 'baseline' a static musl executable."""
    src = source(program)
    ukl, is_cxx = flavor == "ukl", src.suffix == ".cpp"
    if is_cxx:
        cxx.build()
    out_dir = PROGRAMS / flavor
    out_dir.mkdir(parents=True, exist_ok=True)
    sysroot = libc.require("ukl" if ukl else "plain")
    out = out_dir / (f"{src.stem}.o" if ukl else src.stem)
    tmp = out.with_name(out.name + ".new")
    if not ukl and not is_cxx:
        gcc = sysroot / "bin" / "musl-gcc"
        cc.run_gcc([str(gcc), *CFLAGS, "-static", str(src), "-o", str(tmp)],
                   f"{src.name} failed to compile")
    else:
        obj = out_dir / f"{src.name}.o"
        cc.run_gcc([*_compiler(src, sysroot, ukl), *CFLAGS, "-c", str(src), "-o", str(obj)],
                   f"{src.name} failed to compile")
        if ukl:
            cc.link([str(obj)], tmp, sysroot, cxx.libraries() if is_cxx else [])
        else:
            _link_baseline_cxx(obj, tmp, sysroot)
    os.replace(tmp, out)
    return out
