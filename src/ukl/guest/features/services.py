"""Commands started in the background before the program (a bench's probe)."""
import shlex

from ..options import Option

ORDER = 70
OPTIONS = [Option("services", [])]     # commands (argv lists)


def check(opts, config, bind=True):
    pass


def contribute(spec, built, opts):
    if opts.services:
        spec.hook("setup", "40-services", "".join(
            f"{shlex.join(cmd)} </dev/null >/dev/null 2>&1 &\n" for cmd in opts.services))
