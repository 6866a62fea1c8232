"""--ftrace FUNCTIONS: function_graph under the given kernel functions, and a
stack trace at each of their calls (who called them), for the program's
process and what it starts; the trace goes to /out when it ends, and the
host names the program's frames in it (guest/tracing.py)."""
import shlex

from .. import tracing
from ... import symbols
from ...errors import UklError

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
    known = {name for _, name in symbols.nm(built.vmlinux)}
    for name in opts.ftrace:
        if name not in known:
            raise UklError(f"--ftrace: the kernel has no function named {name!r}")
    spec.hook("setup", "30-ftrace", SETUP.format(t=TRACEFS, funcs=shlex.join(opts.ftrace)))
    spec.hook("start", "10-ftrace", START.format(t=TRACEFS))
    spec.hook("finish", "10-ftrace", END.format(t=TRACEFS, name=FILE))


def finish(built, opts, spec):
    trace = opts.out / FILE if opts.out else None
    if opts.ftrace and trace.exists():
        tracing.name_program_frames(trace, symbols.nm(built.elf))
