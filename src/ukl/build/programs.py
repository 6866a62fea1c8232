"""Resolve a PROGRAM argument once, then build it for UKL or for the baseline.

A PROGRAM is an example name, a C or C++ file, a file linked by ukl-cc (or by
`ukl-cc --baseline`, or any static executable, for the baseline only), or an
app recipe name.
"""
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from . import cc, cxx, debs, libc, recipes
from ..configs import Config
from ..errors import UklError
from ..layout import EXAMPLES, PROGRAMS, TEST_PROGRAMS
from ..proc import capture

CFLAGS = ["-O2", "-g", "-Wall", *cc.FRAME_CFLAGS]   # -g: gdb and core files show source lines
SUFFIXES = (".c", ".cpp")
ET_EXEC, ET_DYN = 2, 3


@dataclass(frozen=True)
class Program:
    """What the argument named; everything after resolve() uses only this."""
    kind: str                     # "example", "source", "linked", "executable", "recipe"
                                  # or "binary" (a host executable, run unmodified)
    name: str                     # its name in the guest: /app/<name>
    path: Path | None = None      # the source or linked file (not for recipes)
    recipe: recipes.Recipe | None = None
    loads: tuple = ()             # a Debian package's binary: (file, guest path) it needs
    made_dirs: tuple = ()         # and the package's directories

    # A recipe's default arguments, guest ports, guest files (guest path ->
    # path in the built tree) and empty guest directories; none for the rest.
    @property
    def args(self) -> tuple:
        return self.recipe.args if self.recipe else ()

    @property
    def ports(self) -> tuple:
        return self.recipe.ports if self.recipe else ()

    @property
    def files(self) -> dict:
        return self.recipe.files if self.recipe else {}

    @property
    def dirs(self) -> tuple:
        return self.recipe.dirs if self.recipe else self.made_dirs

    @property
    def run(self) -> recipes.Run:
        """How a recipe says it runs (its user, variables, setup script...)."""
        return self.recipe.run if self.recipe else recipes.Run()


def examples() -> list[str]:
    return sorted(p.stem for p in EXAMPLES.iterdir() if p.suffix in SUFFIXES)


def _elf_kind(path: Path) -> str | None:
    """'linked' (ukl-cc output), 'executable', or None if not a runnable ELF file."""
    with open(path, "rb") as f:
        head = f.read(18)
    if head[:4] != b"\x7fELF":
        return None
    if cc.UKL_SECTION in capture(["readelf", "-S", "-W", str(path)]):
        return "linked"
    return "executable" if int.from_bytes(head[16:18], "little") == ET_EXEC else None


def resolve(arg: str) -> Program:
    if "/" not in arg:
        for where in (EXAMPLES, TEST_PROGRAMS):
            for suffix in SUFFIXES:
                if (where / f"{arg}{suffix}").exists():
                    return Program("example", arg, where / f"{arg}{suffix}")
        if recipes.path(arg).is_file():
            return Program("recipe", arg, recipe=recipes.load(arg))
    path = Path(arg)
    if path.is_file():
        if path.suffix in SUFFIXES:
            return Program("source", path.stem, path.resolve())
        kind = _elf_kind(path)
        if kind:
            return Program(kind, path.name, path.resolve())
        raise UklError(f"{arg} is neither a C or C++ file nor a program linked by ukl-cc")
    raise UklError(f"unknown program {arg!r}: not an example ({', '.join(examples())}), "
                   f"not an app recipe ({', '.join(recipes.names())}) and not a file")


def binary(arg: str) -> Program:
    """A host executable run as it is (`ukl run --binary`): any x86-64 ELF
    executable, static or dynamic, but not one ukl-cc linked."""
    path = Path(arg)
    if not path.is_file():
        raise UklError(f"--binary {arg}: no such file")
    with open(path, "rb") as f:
        head = f.read(20)
    if head[:4] != b"\x7fELF" or head[4] != 2 or int.from_bytes(head[18:20], "little") != 62:
        raise UklError(f"--binary {arg}: not an x86-64 ELF executable")
    if int.from_bytes(head[16:18], "little") not in (ET_EXEC, ET_DYN):
        raise UklError(f"--binary {arg}: not an executable (ELF type "
                       f"{int.from_bytes(head[16:18], 'little')})")
    if _elf_kind(path) == "linked":
        raise UklError(f"--binary {arg}: linked by ukl-cc; run it without --binary")
    return Program("binary", path.name, path.resolve())


def deb(package: str, entrypoint: str | None = None) -> Program:
    """A Debian package's program as Debian builds it (`ukl run --deb`), with
    the package's files and the libraries the program loads."""
    dest = debs.unpack(package)
    guest, path = debs.entrypoint(dest, package, entrypoint)
    version = (dest / "version").read_text()
    print(f"ukl: Debian's {package.split('=')[0]} {version}: {guest} runs as /app/{Path(guest).name}",
          file=sys.stderr)
    return Program("binary", Path(guest).name, path, loads=tuple(debs.guest_files(dest, path)),
                   made_dirs=tuple(debs.guest_dirs(dest)))


def closure(path: Path) -> list[tuple[Path, str]]:
    """What a dynamic executable maps from the host before its main(): its ELF
    interpreter and the libraries it needs, as (host path, guest path), the
    same paths in the guest.  Nothing for a static one."""
    interp = capture(["readelf", "-l", "-W", str(path)])
    if "Requesting program interpreter" not in interp:
        return []
    loader = interp.split("Requesting program interpreter: ", 1)[1].split("]", 1)[0]
    listed = capture([loader, "--list", str(path)])
    files = {loader}
    for line in listed.splitlines():
        parts = line.split()
        if "=>" in parts and len(parts) > parts.index("=>") + 1:
            files.add(parts[parts.index("=>") + 1])
        elif parts and parts[0].startswith("/"):
            files.add(parts[0])
    return [(Path(f).resolve(), f) for f in sorted(files) if f.startswith("/")]


def _compiler(src: Path, sysroot: Path, ukl: bool, runtime: Path | None) -> list[str]:
    base = cc.gcc_command(sysroot) if ukl else ["gcc", *cc.libc_includes(sysroot)]
    if runtime:
        return ["g++", *cxx.compile_flags(runtime), *base[1:]]
    return base


def _link_baseline_cxx(obj: Path, out: Path, sysroot: Path, runtime: Path):
    cc.run_gcc(["gcc", "-static", "-no-pie", "-nostdlib", f"-Wl,-T,{cc.EH_FRAME_LDS}",
                *cc.crt_link(sysroot, [str(obj)], cxx.libraries(runtime)), "-o", str(out)],
               "link failed")


def _compile(src: Path, config: Config, out: Path):
    ukl, is_cxx = config.ukl, src.suffix == ".cpp"
    runtime = cxx.build(config) if is_cxx else None
    sysroot = libc.build(config)
    if not ukl and not is_cxx:
        cc.run_gcc([str(sysroot / "bin" / "musl-gcc"), *CFLAGS, "-static", str(src), "-o",
                    str(out)], f"{src.name} failed to compile")
        return
    obj = out.with_name(f"{src.name}.o")
    cc.run_gcc([*_compiler(src, sysroot, ukl, runtime), *CFLAGS, "-c", str(src), "-o", str(obj)],
               f"{src.name} failed to compile")
    if ukl:
        cc.link([str(obj)], out, sysroot, cxx.libraries(runtime) if runtime else [])
    else:
        _link_baseline_cxx(obj, out, sysroot, runtime)


def _from_linked(path: Path, elf_kind: str, kind: str, out: Path):
    """The UKL object a ukl-cc output carries, or the ordinary executable."""
    if kind == "ukl":
        if elf_kind != "linked":
            raise UklError(f"{path} is an ordinary executable, not linked by ukl-cc: "
                           f"build it with CC=ukl-cc, or run it with --baseline")
        capture(["objcopy", "--dump-section", f"{cc.UKL_SECTION}={out}", str(path),
                 str(out.with_name(out.name + ".discard"))])
        out.with_name(out.name + ".discard").unlink()
    elif elf_kind == "linked":
        raise UklError(f"{path} was linked for UKL; build the baseline with "
                       f"CC='ukl-cc --baseline'")
    else:
        shutil.copyfile(path, out)


def built_tree(program: Program, config: Config) -> Path | None:
    """Where a recipe's files are, once built; None for other programs."""
    return recipes.build(program.recipe, config) / "src" if program.recipe else None


def build(program: Program, config: Config) -> Path:
    """For a UKL configuration, the UKL object for kernel.link; otherwise a
    static executable."""
    kind = config.kind
    out_dir = PROGRAMS / libc.variant(config)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / (f"{program.name}.o" if kind == "ukl" else program.name)
    tmp = out.with_name(f"{out.name}.{os.getpid()}.new")    # two `ukl`s may build it
    try:
        if program.kind in ("example", "source"):
            _compile(program.path, config, tmp)
        elif program.kind == "recipe":
            _from_linked(recipes.binary(program.recipe, config), "linked" if kind == "ukl"
                         else "executable", kind, tmp)
        else:
            _from_linked(program.path, program.kind, kind, tmp)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out
