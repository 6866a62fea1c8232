"""--strace: strace (in /bin, Debian's, built with `ukl-cc --baseline`) runs
the program, following its threads and children; the trace goes to the
program's stderr."""
from ..options import Option
from ..tracing import strace_binary
from ...errors import UklError

ORDER = 110
OPTIONS = [Option("strace", False, ("--strace",), switch=True,
                  help="run the program under strace -f (built from Debian's source with "
                       "ukl-cc --baseline); the trace goes to stderr, as strace's does")]

COMMAND = ["strace", "-f", "-qq"]


def check(opts, config, bind=True):
    if opts.strace and opts.perf:
        raise UklError("--perf and --strace both run the program: choose one")


def contribute(spec, built, opts):
    if opts.strace:
        spec.tools["strace"] = strace_binary
        spec.inner_wrappers.append(COMMAND)
