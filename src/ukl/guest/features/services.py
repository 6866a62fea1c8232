"""Commands before the program: started in the background (a bench's
probe), or run to the end in its directory, /tmp (the files a test program
expects beside it, as its Makefile makes them)."""
import shlex

from ..options import Option

ORDER = 70
OPTIONS = [Option("services", []),     # commands (argv lists), in the background
           Option("prepare", "")]      # shell commands, in /tmp, before the program


def check(opts, config, bind=True):
    pass


def contribute(spec, built, opts):
    if opts.prepare:
        spec.hook("setup", "45-prepare", f"(cd /tmp && {{\n{opts.prepare}\n}})\n")
    if opts.services:
        spec.hook("setup", "40-services", "".join(
            f"{shlex.join(cmd)} </dev/null >/dev/null 2>&1 &\n" for cmd in opts.services))
