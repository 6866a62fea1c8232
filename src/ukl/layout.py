"""Where things live: the repository, and everything built under out/."""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("UKL_OUT", ROOT / "out"))
# What outlives out/ and is shared by every clone: the pinned downloads, the
# compiler cache and app builds, each kept under the key of what it was built from.
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ukl"

PINS = ROOT / "pins.toml"
EXAMPLES = ROOT / "examples"
TEST_PROGRAMS = ROOT / "tests" / "programs"     # run by name as examples are, not listed
APPS = ROOT / "apps"
KERNEL_PATCHES = ROOT / "kernel" / "patches"
KERNEL_CONFIGS = ROOT / "kernel" / "configs"
MUSL_PATCHES = ROOT / "libc" / "musl" / "patches"

DOWNLOADS = CACHE / "downloads"        # each file checked against its pin at every use
SRC = OUT / "src"
TREES = OUT / "tree"
KBUILD = OUT / "kbuild"
SYSROOTS = OUT / "sysroot"
PROGRAMS = OUT / "programs"
IMAGES = OUT / "images"
RUNS = OUT / "runs"
LOGS = OUT / "logs"
