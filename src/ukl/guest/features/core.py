"""--core: a crash leaves /out/core, and the host puts the program's ELF
beside it as HOSTDIR/program."""
import shutil

from ...errors import UklError

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
