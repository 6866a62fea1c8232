"""The QEMU TCG plugin that counts mode-switch instructions (bench/switches.c),
built against the plugin API header of the pinned Debian qemu source."""
from pathlib import Path

from ..build import fetch, steps
from ..layout import OUT, ROOT
from ..proc import run

SOURCE = ROOT / "bench" / "switches.c"


def build() -> Path:
    """The plugin's shared object, rebuilt when its source or the pin changes."""
    def compile_(dest: Path):
        header_dir = fetch.unpack("qemu") / "include" / "qemu"
        run(["gcc", "-shared", "-fPIC", "-O2", "-Wall", "-Werror", f"-I{header_dir}",
             str(SOURCE), "-o", str(dest / "switches.so")],
            "build the mode-switch counting plugin", "plugin")
    key = steps.key_of(fetch.pin_digest("qemu"), SOURCE.read_text())
    return steps.stamped(OUT / "plugin", key, compile_) / "switches.so"
