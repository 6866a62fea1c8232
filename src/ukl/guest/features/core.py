"""--core: a crash leaves /out/core, and the host puts the program's ELF
beside it as HOSTDIR/program."""
import shutil

from ..options import Option
from ...errors import UklError

ORDER = 100
OPTIONS = [Option("core", False, ("--core",), switch=True,
                  help="a crash leaves HOSTDIR/core, beside the program's ELF as "
                       "HOSTDIR/program (needs --out)")]

SETUP = """echo /out/core >/proc/sys/kernel/core_pattern
ulimit -c unlimited
"""


def check(opts, config, bind=True):
    if opts.core and opts.out is None:
        raise UklError("--core needs --out HOSTDIR to bring its files out")


def contribute(spec, built, opts):
    if opts.core:
        spec.hook("setup", "70-core", SETUP)


def finish(built, opts, spec):
    if opts.core and opts.out is not None:
        shutil.copyfile(built.elf, opts.out / "program")
