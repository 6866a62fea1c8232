"""--ftrace FUNCTIONS: function_graph under the given kernel functions, and a
stack trace at each of their calls (who called them), for the program's
process and what it starts; the trace goes to /out when it ends, and the
host names the program's frames in it (guest/tracing.py)."""
import shlex

from .. import tracing
from ..options import Option
from ... import symbols
from ...errors import UklError

ORDER = 90


def functions(text: str) -> tuple:
    return tuple(f for f in text.split(",") if f)


OPTIONS = [Option("ftrace", (), ("--ftrace",), parse=functions, metavar="FUNCTIONS",
                  help="trace these kernel functions (comma-separated) with function_graph, "
                       "and who called them, into HOSTDIR/ftrace.txt (needs --out)")]

TRACEFS = "/sys/kernel/tracing"
FILE = "ftrace.txt"
SETUP = """mount -t tracefs tracefs {t}
echo {funcs} >{t}/set_graph_function
for f in {funcs}; do echo "$f:stacktrace" >>{t}/set_ftrace_filter; done
echo 1 >{t}/options/function-fork
"""
START = "echo $$ >{t}/set_ftrace_pid; echo function_graph >{t}/current_tracer\n"
END = """echo 0 >{t}/tracing_on
cat {t}/trace >/out/{name}
"""


def check(opts, config, bind=True):
    if opts.ftrace and opts.out is None:
        raise UklError("--ftrace needs --out HOSTDIR to bring its files out")


def contribute(spec, built, opts):
    if not opts.ftrace:
        return
    spec.hook("setup", "30-ftrace", SETUP.format(t=TRACEFS, funcs=shlex.join(opts.ftrace)))
    spec.hook("start", "10-ftrace", START.format(t=TRACEFS))
    spec.hook("finish", "10-ftrace", END.format(t=TRACEFS, name=FILE))


def before_boot(spec, built, opts):
    """The kernel has each function (its symbols are read only for a boot)."""
    if opts.ftrace:
        known = {name for _, name in symbols.nm(built.vmlinux)}
        for name in opts.ftrace:
            if name not in known:
                raise UklError(f"--ftrace: the kernel has no function named {name!r}")


def finish(built, opts, spec):
    trace = opts.out / FILE if opts.out else None
    if opts.ftrace and trace.exists():
        tracing.name_program_frames(trace, symbols.nm(built.elf))
