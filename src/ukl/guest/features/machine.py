"""The machine itself: CPUs, the CPU model, deterministic instruction
counting for measurements (--icount), TCG plugins, a disk, and a
configuration's tuning of the network device (epoll busy polling)."""

from pathlib import Path

from ..options import Option
from ...errors import UklError

ORDER = 20


def cpus(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise UklError(f"--smp {text}: expected a number of CPUs from 1 to 64")
    return int(text)


OPTIONS = [
    Option("smp", 1, ("--smp",), parse=cpus, metavar="CPUS",
           help="number of virtual CPUs (default 1)"),
    Option("cpu", "max"),          # QEMU's -cpu
    Option("memory_mb", 512),      # guest RAM
    Option("icount", False),       # deterministic: guest time counts instructions
    # with icount: off, a halted guest's clock jumps to its next timer, not at
    # the host's pace, so that its timing does not depend on the host's load
    Option("icount_sleep", True),
    Option("plugins", []),         # QEMU TCG plugins: (path, ["key=value", ...])
    Option("disk", None),          # a raw disk image (Path), as virtio
]

# Epoll busy polling as Documentation/networking/napi.rst describes it: the
# program's epoll instance prefers busy polling (EPIOCSPARAMS, which the app
# recipes' epoll patches make from EPOLL_BUSY_POLL_USECS), and the device
# defers its interrupts while it does.
BUSY_POLL_SETUP = """\
echo 2 >/sys/class/net/eth0/napi_defer_hard_irqs
echo 200000 >/sys/class/net/eth0/gro_flush_timeout
"""


def check(opts, config, bind=True):
    if not isinstance(opts.smp, int) or opts.smp < 1:
        raise UklError(f"--smp must be at least 1, not {opts.smp}")
    if not isinstance(opts.memory_mb, int) or opts.memory_mb < 128:
        raise UklError(f"guest memory must be at least 128 MB, not {opts.memory_mb}")
    if opts.disk is not None and not Path(opts.disk).is_file():
        raise UklError(f"disk {opts.disk} is not a file")


def contribute(spec, built, opts):
    spec.smp, spec.cpu, spec.icount = opts.smp, opts.cpu, opts.icount
    spec.memory_mb = opts.memory_mb
    spec.icount_sleep = opts.icount_sleep
    # Measurements also fix the address-space layout, which otherwise moves
    # page-table and fork costs by a few percent from boot to boot.
    spec.kernel_args += (["norandmaps"] if opts.icount else []) + built.config.kernel_args()
    spec.tcg_only |= opts.icount
    if built.config.busy_poll:
        spec.env["EPOLL_BUSY_POLL_USECS"] = str(built.config.busy_poll)
        spec.hook("setup", "05-busy-poll", BUSY_POLL_SETUP)
    for path, args in opts.plugins:
        spec.devices += ["-plugin", ",".join([f"file={path}", *args])]
    if opts.disk:
        spec.devices += ["-drive", f"file={opts.disk},if=virtio,format=raw"]
