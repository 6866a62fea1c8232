"""--data SIZE: a data disk, ext4 labelled ukl-data, mounted where the
program keeps its data (its recipe's [run] data, default /data) before its
setup runs, so that a database initialises it on its first start and finds
it on the next.  `ukl run` keeps the disk in out/data/<program>.ext4 and
reuses it; `ukl image` writes it beside the image (deploy.py).

The guest finds the disk by its label and never formats one: on a machine,
a disk that only looks empty may hold someone's data."""
import re
import shlex
import subprocess
from pathlib import Path

from ..options import Option
from ...errors import UklError
from ...layout import OUT
from ...proc import need

ORDER = 35                  # before the volumes, the services and the entrypoint
LABEL = "ukl-data"
MIN_BYTES = 16 << 20        # ext4 with a journal, and room for more than the journal
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
MOUNT = """mkdir -p {guest}
disk=$(findfs LABEL={label} 2>/dev/null) || ukl_fail "no data disk: attach the disk labelled {label} (ukl image --data writes it)"
mount -t ext4 "$disk" {guest} || ukl_fail "the data disk $disk cannot be mounted at {guest}"
"""


def size(text: str) -> int:
    """SIZE: bytes, or a number with K, M, G or T (powers of 1024), at least 16M."""
    hit = re.fullmatch(r"(\d+)([KMGT]?)I?B?", text.strip().upper())
    if not hit:
        raise UklError(f"--data {text}: expected a size such as 512M or 1G")
    value = int(hit.group(1)) * UNITS[hit.group(2)]
    if value < MIN_BYTES:
        raise UklError(f"--data {text}: too small for a data disk; at least 16M")
    return value


OPTIONS = [Option("data", None, ("--data",), parse=size, metavar="SIZE",
                  help="a data disk of SIZE (e.g. 1G), ext4, mounted where the program keeps "
                       "its data, which survives the run: `run` keeps it in "
                       "out/data/PROGRAM.ext4, `image` writes it beside the image",
                  commands=("run", "image"))]


def check(opts, config, bind=True):
    if opts.data is not None and (not isinstance(opts.data, int) or opts.data < MIN_BYTES):
        raise UklError(f"--data {opts.data}: at least {MIN_BYTES} bytes")


def create(path: Path, nbytes: int):
    """An ext4 disk image of NBYTES at PATH, labelled for the guest to find."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        f.truncate(nbytes)
    done = subprocess.run([need("mkfs.ext4"), "-q", "-F", "-L", LABEL, str(tmp)],
                          capture_output=True, text=True)
    if done.returncode:
        tmp.unlink()
        raise UklError(f"mkfs.ext4 failed for {path}: {done.stderr.strip()}")
    tmp.replace(path)


def disk(built) -> Path:
    """Where `ukl run` keeps the program's data disk."""
    return OUT / "data" / f"{built.name}.ext4"


def contribute(spec, built, opts):
    if opts.data is None:
        return
    guest = shlex.quote(built.program.run.data)
    spec.hook("setup", "08-data", MOUNT.format(guest=guest, label=LABEL))
    spec.devices += ["-drive", f"file={disk(built)},if=virtio,format=raw"]


def before_boot(spec, built, opts):
    """The disk, made once; a later run of the program finds its data on it."""
    if opts.data is None:
        return
    path = disk(built)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        create(path, opts.data)
    elif path.stat().st_size != opts.data:
        raise UklError(f"--data: {path} exists with {path.stat().st_size} bytes; give that "
                       f"size, or remove it to start again")
