"""--gdb: QEMU's gdbstub on 127.0.0.1, the CPUs stopped until gdb attaches
(script() writes the commands that do)."""
from pathlib import Path

from .. import net, tracing
from ..options import Option
from ...errors import UklError

ORDER = 10


def _port(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise UklError(f"--gdb-port {text}: not a TCP port number")
    return int(text)


OPTIONS = [
    Option("gdb", False, ("--gdb",), switch=True,
           help="start QEMU's gdbstub on 127.0.0.1 (--gdb-port) with the CPUs stopped, print "
                "the gdb command that attaches, and wait (no --timeout unless given)"),
    Option("gdb_port", 1234, ("--gdb-port",), parse=_port, metavar="PORT",
           help="the gdbstub's port (default 1234)"),
]


def check(opts, config, bind=True):
    if not opts.gdb:
        return
    if not config.ukl:
        raise UklError("--gdb debugs a UKL program through QEMU's gdbstub; an ordinary "
                       "program at CPL3 shares its addresses with every other process")
    if bind:
        try:
            net.check_host_ports([opts.gdb_port])
        except UklError as e:
            raise UklError(f"--gdb: {e}") from None


def contribute(spec, built, opts):
    if opts.gdb:
        # gdb's breakpoints need TCG: under KVM QEMU writes them to physical memory.
        spec.tcg_only = True
        spec.devices += ["-gdb", f"tcp:127.0.0.1:{opts.gdb_port}", "-S"]


def script(built, run_dir: Path, port: int) -> Path:
    """The gdb commands that load the program's and the kernel's symbols and
    attach to the waiting guest."""
    return tracing.gdb_script(built, run_dir, port)
