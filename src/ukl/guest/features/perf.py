"""--perf: perf (in /bin) records the program's cpu-clock samples with call
chains into /out; `perf script` then lists them as addresses, which the
host names (the guest's perf has no ELF reader; the CLI writes the report).
perf starts the shell that becomes the program, so that the pidfile, and a
stop, name the program."""
from ..options import Option
from ...build import perf
from ...errors import UklError

ORDER = 120
OPTIONS = [Option("perf", False, ("--perf",), switch=True,
                  help="record the program with perf (cpu-clock, call graphs) into "
                       "HOSTDIR/perf.data, with a report, folded stacks and a flame graph "
                       "named from the kernel's and the program's symbols (needs --out)")]

RECORD = ["perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", "/out/perf.data",
          "--"]
END = "perf script -i /out/perf.data -F comm,ip >/out/perf.script 2>/out/perf.log\n"


def check(opts, config, bind=True):
    if opts.perf and opts.out is None:
        raise UklError("--perf needs --out HOSTDIR to bring its files out")


def contribute(spec, built, opts):
    if opts.perf:
        spec.tools["perf"] = perf.binary
        spec.wrappers.append(RECORD)
        spec.hook("finish", "20-perf", END)
