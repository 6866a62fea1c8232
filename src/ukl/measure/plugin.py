"""The QEMU TCG plugins of the measurements (bench/switches.c counts
mode-switch instructions, bench/profile.c attributes every instruction to a
call stack), built against the plugin API header of the pinned Debian qemu
source."""
from pathlib import Path

from . import profile_data
from .. import api
from ..build import fetch, steps
from ..layout import OUT, ROOT
from ..proc import run

SWITCHES = ROOT / "bench" / "switches.c"
PROFILE = ROOT / "bench" / "profile.c"
MARKERS = ROOT / "bench" / "markers.h"      # included by every plugin


def build(source: Path = SWITCHES, name: str = "switches") -> Path:
    """The plugin's shared object, rebuilt when its source or the pin changes."""
    def compile_(dest: Path):
        header_dir = fetch.unpack("qemu") / "include" / "qemu"
        run(["gcc", "-shared", "-fPIC", "-O2", "-Wall", "-Werror", f"-I{header_dir}",
             str(source), "-o", str(dest / f"{name}.so")],
            f"build the {name} plugin", f"plugin-{name}")
    key = steps.key_of(fetch.pin_digest("qemu"), source.read_text(), MARKERS.read_text())
    return steps.stamped(OUT / "plugins" / name, key, compile_) / f"{name}.so"


def profiler(built: "api.Built") -> tuple[tuple, Path]:
    """bench/profile.c for a boot of BUILT, and the file it will write: its
    entries file names BUILT's kernel entries and program entry point."""
    run_dir = api.run_dir(built)
    run_dir.mkdir(parents=True, exist_ok=True)
    entries = run_dir / "entries.txt"
    entries.write_text(profile_data.entry_points(built.vmlinux, built.elf))
    raw = run_dir / "profile.txt"
    return (build(PROFILE, "profile"), (f"out={raw}", f"entries={entries}")), raw
