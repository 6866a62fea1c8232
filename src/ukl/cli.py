"""The `ukl` command."""
import argparse
import dataclasses
import shlex
import signal
import sys
from pathlib import Path

from . import api, configs, oci
from .build import bisect, fetch, kernel, series
from .errors import UklError
from .guest import console, features, net, qemu, volumes
from .measure import bench, fuzz, perf_report, pgregress, profile, selftests, serverbench, soak

PROGRAM_HELP = "an example name, a C/C++ file, a file linked by ukl-cc, or an app recipe"
CONFIG_HELP = f"configuration (default ukl): {', '.join(configs.CONFIGS)}"


class Terminated(Exception):
    """SIGTERM: stop the guest at once and exit 143, as SIGINT exits 130."""


def _terminate(signum, frame):
    raise Terminated()


def _positive(what: str):
    """A positive count, checked before anything is built."""
    def parse(text: str) -> int:
        if not text.isdigit() or int(text) < 1:
            raise argparse.ArgumentTypeError(f"must be a positive number of {what}, not {text!r}")
        return int(text)
    return parse


def _duration(unit: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not value > 0 or value == float("inf"):
            raise argparse.ArgumentTypeError(f"must be a positive number of {unit}, not {text!r}")
        return value
    return parse


_seconds = _duration("seconds")


def _cpu_counts(text: str) -> list[int]:
    counts = [c for c in text.split(",") if c]
    if not counts or not all(c.isdigit() and 1 <= int(c) <= 64 for c in counts):
        raise UklError(f"--smp {text}: expected CPU counts like 1,2")
    return [int(c) for c in counts]


def _kernel_arg(text: str) -> list[str]:
    """One word of the kernel command line: no space or quote can split it."""
    if not text or any(c.isspace() or c in "\"'" for c in text):
        raise argparse.ArgumentTypeError(f"must be one word without quotes, not {text!r}")
    return [text]


def _env(text: str) -> tuple[str, str]:
    try:
        return features.environment.parse(text)
    except UklError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _kernel_args(text: str) -> list[str]:
    try:
        return features.append.words(text)
    except UklError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


class Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"ukl: error: {message}", file=sys.stderr)
        sys.exit(2)


def _parser() -> Parser:
    p = Parser(prog="ukl", description="Unikernel Linux: build and boot a program linked into Linux.",
               epilog="ukl run PROGRAM [options] -- ARGS passes ARGS to the program.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)

    f = sub.add_parser("fetch", help="download, verify and unpack pinned inputs")
    f.add_argument("names", nargs="*", help="pins to fetch (default: all)")

    b = sub.add_parser("build", help="build PROGRAM and the kernel it runs on")
    b.add_argument("program", help=PROGRAM_HELP)
    b.add_argument("--baseline", action="store_true", help="build for stock Linux instead")
    b.add_argument("--config", default="ukl", help=CONFIG_HELP)

    r = sub.add_parser("run", help="build and boot PROGRAM; exit with its exit status")
    r.add_argument("program", help=PROGRAM_HELP)
    r.add_argument("--baseline", action="store_true",
                   help="run as an ordinary static musl binary on the stock-Linux baseline "
                   "(--config baseline)")
    r.add_argument("--config", default="ukl", help=CONFIG_HELP)
    r.add_argument("--smp", type=_positive("CPUs"), default=1,
                   help="number of virtual CPUs (default 1)")
    r.add_argument("--timeout", type=_seconds, default=None,
                   help=f"seconds before the guest is killed (default {api.DEFAULT_TIMEOUT:g}, "
                        "none with --gdb)")
    r.add_argument("-p", dest="ports", action="append", default=[], metavar="HOST:GUEST",
                   help="publish guest TCP port GUEST on the host's 127.0.0.1:HOST (repeatable)")
    r.add_argument("-v", dest="volumes", action="append", default=[],
                   metavar="HOSTPATH:GUESTPATH[:rw|:ro]",
                   help="mount a host directory in the guest, live, read-write (default) or "
                        "read-only; a host file is copied in (repeatable)")
    r.add_argument("--out", type=Path, metavar="HOSTDIR",
                   help="what the program leaves in the guest's /out is copied here when it "
                        "ends (also after a crash)")
    r.add_argument("--ftrace", metavar="FUNCTIONS", default="",
                   help="trace these kernel functions (comma-separated) with function_graph, "
                        "and who called them, into HOSTDIR/ftrace.txt (needs --out)")
    r.add_argument("--core", action="store_true",
                   help="a crash leaves HOSTDIR/core, beside the program's ELF as "
                        "HOSTDIR/program (needs --out)")
    r.add_argument("--strace", action="store_true",
                   help="run the program under strace -f (built from Debian's source with "
                        "ukl-cc --baseline); the trace goes to stderr, as strace's does")
    r.add_argument("--perf", action="store_true",
                   help="record the program with perf (cpu-clock, call graphs) into "
                        "HOSTDIR/perf.data, with a report, folded stacks and a flame graph "
                        "named from the kernel's and the program's symbols (needs --out)")
    r.add_argument("--gdb", action="store_true",
                   help="start QEMU's gdbstub on 127.0.0.1 (--gdb-port) with the CPUs stopped, "
                        "print the gdb command that attaches, and wait (no --timeout unless given)")
    r.add_argument("--gdb-port", type=_positive("port"), default=1234,
                   help="the gdbstub's port (default %(default)s)")
    r.add_argument("--stop-timeout", type=_seconds, default=10.0, metavar="SECONDS",
                   help="SIGTERM or SIGINT goes to the program as the same signal; the guest "
                        "is killed if it has not exited after this long (default %(default)g), "
                        "or at a second signal")
    r.add_argument("--dry-run", action="store_true",
                   help="build everything and show the QEMU command, but do not boot: no "
                        "port is bound, and the private forward ports show as HOSTFWD0...")
    r.add_argument("--append", dest="kernel_args", action="extend", default=[],
                   type=_kernel_args, metavar="ARGS",
                   help="add ARGS to the guest kernel's command line, e.g. "
                        "'lockdown=integrity isolcpus=1' (repeatable)")
    r.add_argument("--user", "-u", metavar="USER[:GROUP]",
                   help="run the program as USER (a name or a number, as Docker takes it)")
    r.add_argument("-e", "--env", dest="env", action="append", default=[],
                   type=_env, metavar="NAME=VALUE",
                   help="set a variable for the program (and its recipe's setup), as "
                        "docker run -e does (repeatable)")
    r.add_argument("--kernel-arg", dest="kernel_args", action="extend",
                   type=_kernel_arg, metavar="ARG",
                   help="add one word ARG to the guest kernel's command line, e.g. "
                        "pti=on (repeatable)")

    o = sub.add_parser("oci", help="write an OCI image of PROGRAM that urunc boots "
                       "(containerd, Kubernetes)")
    o.add_argument("program", help=PROGRAM_HELP)
    o.add_argument("--config", default="ukl", help=CONFIG_HELP)
    o.add_argument("--baseline", action="store_true", help="same as --config baseline")
    o.add_argument("--user", "-u", metavar="USER[:GROUP]",
                   help="the image runs its program as USER (recorded as its User)")
    o.add_argument("-o", dest="dest", type=Path, required=True, metavar="DIR|FILE.tar",
                   help="an image layout directory (new or empty), or a tar of one")

    bn = sub.add_parser("bench", help="LEBench-style costs, or a server's cost per request: "
                        "every configuration beside Linux")
    bn.add_argument("target", nargs="?", default="lebench",
                    help="lebench (default), or a server: a recipe with a [bench] table, "
                    "measured with the client it names")
    bn.add_argument("--requests", type=_positive("requests"), default=10000,
                    help="requests per measured batch, for servers (default %(default)s)")
    bn.add_argument("--quick", action="store_true", help="few iterations (for tests)")
    bn.add_argument("--configs", default="", help="comma-separated, beside baseline (default: "
                    "ukl,cpl3-on-ukl for lebench, ukl for a server)")
    bn.add_argument("--clients", type=_positive("clients"), default=1,
                    help="client connections, for redis (default %(default)s)")
    bn.add_argument("--ops", default="", help="comma-separated lebench operations (default: all)")
    bn.add_argument("--wall", action="store_true",
                    help="wall-clock nanoseconds instead of icount guest instructions")
    bn.add_argument("--append", dest="kernel_args", action="extend", default=[],
                    type=_kernel_args, metavar="ARGS",
                    help="add to every guest kernel's command line, e.g. pti=on, for "
                         "lebench (repeatable)")

    pf = sub.add_parser("profile", help="where the instructions of a measured window go: "
                        "folded stacks, flame graphs and a table by layer, beside Linux")
    pf.add_argument("target", help="lebench (one window per operation) or a server: a recipe "
                    "with a [bench] table (a batch of requests)")
    pf.add_argument("--configs", "--config", dest="configs", default="",
                    help="comma-separated configurations (default: ukl-ret-byp)")
    pf.add_argument("--ops", default="", help="comma-separated lebench operations "
                    "(default: getppid)")
    pf.add_argument("--requests", type=_positive("requests"), default=profile.SERVER_REQUESTS,
                    help="requests in a server's window (default %(default)s)")
    pf.add_argument("--clients", type=_positive("clients"), default=1,
                    help="client connections, for redis (default %(default)s)")
    pf.add_argument("--quick", action="store_true",
                    help="lebench's few iterations (for tests; per-sample overhead shows)")

    st = sub.add_parser("selftests", help="Linux's own kselftests as UKL programs and as "
                        "ordinary processes, beside stock Linux")
    st.add_argument("--tests", default="", help="comma-separated, e.g. x86/sigreturn_64 "
                    "(default: all; --tests ci: the ones CI runs)")
    st.add_argument("--configs", default="", help="comma-separated (default: cpl3-on-ukl "
                    "and every UKL configuration)")
    st.add_argument("--smp", default="1,2", help="comma-separated CPU counts (default 1,2)")

    fz = sub.add_parser("fuzz", help="random system calls from the UKL program, as nobody, "
                        "beside stock Linux with the same seed")
    fz.add_argument("--seed", type=_positive("seed"), help="replay this seed (default: random; "
                    "every run's seed is in its results)")
    fz.add_argument("--seconds", type=_seconds, default=600.0,
                    help="fuzzing time on stock Linux (default %(default)g)")
    fz.add_argument("--configs", default="", help="comma-separated (default: ukl,ukl-ret-byp)")
    fz.add_argument("--smp", type=_positive("CPUs"), default=2, help="CPUs (default 2)")

    sk = sub.add_parser("soak", help="Redis under load for a long time, its data fsynced on a "
                        "volume; then QEMU killed and every acknowledged key checked")
    sk.add_argument("--minutes", type=_duration("minutes"), default=30.0,
                    help="(default %(default)g)")
    sk.add_argument("--config", default="ukl-ret-byp", help="(default %(default)s)")
    sk.add_argument("--clients", type=_positive("clients"), default=50,
                    help="redis-benchmark connections (default %(default)s)")
    sk.add_argument("--trinity", action="store_true",
                    help="Debian's trinity fuzzes the kernel beside Redis, as nobody")

    pr = sub.add_parser("pg-regress", help="PostgreSQL's regression suite (the core schedule) "
                        "from the host against the postgres recipe, beside Linux")
    pr.add_argument("--configs", default="", help="comma-separated (default: ukl)")

    pt = sub.add_parser("patches", help="edit a patch series as a git tree")
    pt.add_argument("action", choices=["edit", "export", "reset", "check"])
    pt.add_argument("component", choices=sorted(series.COMPONENTS))
    pt.add_argument("--bisect", nargs="?", const="ukl", metavar="FLAVOR",
                    help="check: also build the kernel (FLAVOR, default ukl) at each patch "
                         "(long; uses the ccache)")
    return p


def _patches(action: str, component: str, bisect_flavor: str | None = None):
    if bisect_flavor and action != "check":
        raise UklError("--bisect goes with `ukl patches check`")
    if bisect_flavor:
        kernel.build_dir(bisect_flavor)           # an unknown flavor, before any work
    if action == "edit":
        print(series.tree(component))
    elif action == "reset":
        print(series.reset(component))
    elif action == "export":
        for p in series.export(component):
            print(p)
    else:
        report, errors = series.checkpatch(component)
        print(report, end="")
        if errors:
            raise UklError(f"checkpatch found {errors} error(s) in the {component} series")
        if bisect_flavor:
            if component != "linux":
                raise UklError("--bisect builds the kernel: only the linux series")
            bisect.check(bisect_flavor)


def _config(args) -> configs.Config:
    """--baseline is shorthand for --config baseline."""
    if args.baseline and args.config not in ("ukl", "baseline"):
        raise UklError(f"--baseline and --config {args.config} contradict each other")
    return configs.get("baseline" if args.baseline else args.config)


def _run(args, prog_args):
    ports = [net.parse_port(p) for p in args.ports]
    timeout = args.timeout or (float("inf") if args.gdb else api.DEFAULT_TIMEOUT)
    opts = api.Options(tuple(prog_args), args.smp, timeout, ports=ports,
                       volumes=[volumes.parse_volume(v) for v in args.volumes], out=args.out,
                       ftrace=tuple(f for f in args.ftrace.split(",") if f), core=args.core,
                       gdb_port=args.gdb_port if args.gdb else None, strace=args.strace,
                       perf=args.perf, kernel_args=args.kernel_args, user=args.user,
                       env=tuple(args.env))
    config = _config(args)
    api.validate(opts, config, bind=not args.dry_run)     # before a long build
    built = api.build(args.program, config)
    if args.gdb:
        script = features.gdb.script(built, api.run_dir(built), args.gdb_port)
        print(f"ukl: the guest waits for gdb on 127.0.0.1:{args.gdb_port}; attach with:\n"
              f"  gdb -q -x {shlex.quote(str(script))}", file=sys.stderr, flush=True)
    stop = qemu.Stop(built.name, args.stop_timeout)
    opts = dataclasses.replace(opts, stop=stop)
    if args.dry_run:
        m = api.machine(built, opts, dry_run=True)
        for daemon in m.spec.daemons:       # started before QEMU, which connects to them
            print(shlex.join(daemon.argv))
        print(shlex.join(m.argv()))
        return
    published = ", ".join(f"127.0.0.1:{h} -> guest port {g}" for h, g in ports)
    ready = lambda: print(f"ukl: {built.name} is ready: {published}", file=sys.stderr,
                          flush=True)
    # From here a signal asks the program to stop, as `docker stop` does.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: stop.ask(signum))
    result = api.boot(built, opts, stdout=sys.stdout.buffer, stderr=sys.stderr.buffer,
                      on_ready=ready)
    if stop.killed:
        print(f"ukl: {stop.killed}: killed the guest (exit 137)", file=sys.stderr)
        sys.exit(137)
    if args.perf:
        _perf_report(built, args.out, result.status)
    if result.status is not None and result.status > 128:
        _report_crash(built.name, result)
    sys.exit(result.status)


def _perf_report(built: api.Built, out: Path, status: int | None):
    """Name the samples perf brought out, and say where they are."""
    if not (out / perf_report.SCRIPT).exists():
        raise UklError(f"--perf: no samples came out of the guest [console: {api.run_dir(built)}]")
    stacks = perf_report.write(out, built.vmlinux, built.elf,
                               f"{built.name} under {built.config.name}: perf cpu-clock samples")
    partial = f" (partial: the program was killed by a signal, exit {status})" \
        if status is not None and status > 128 else ""
    print(f"ukl: perf: {sum(stacks.values())} samples in {out / 'perf.data'}{partial}; "
          f"{perf_report.REPORT}, {perf_report.FOLDED} and {perf_report.GRAPH} beside it",
          file=sys.stderr)


def _report_crash(name: str, result: api.Result):
    """A program killed by a signal: the console tail, then one line; the status stays 128+N."""
    try:
        sig = signal.Signals(result.status - 128).name
    except ValueError:
        return                                    # an exit status above 128, not a signal
    console.show_tail(result.console, 15)
    print(f"ukl: {name} was killed by {sig} (exit {result.status}) [console: {result.console}]",
          file=sys.stderr)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    prog_args = []
    if "--" in argv:
        cut = argv.index("--")
        argv, prog_args = argv[:cut], argv[cut + 1:]
    args = _parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)        # the terminal went away: stop the guest
    try:
        if args.command == "fetch":
            for name in args.names or [n for n in fetch.pins() if n != "apt"]:
                print(fetch.unpack(name))
        elif args.command == "build":
            built = api.build(args.program, _config(args))
            print(built.kernel)
        elif args.command == "run":
            _run(args, prog_args)
        elif args.command == "oci":
            print(oci.build(args.program, _config(args), args.dest, prog_args, args.user))
        elif args.command in ("bench", "profile", "selftests", "fuzz", "soak", "pg-regress"):
            split = lambda v: [x for x in v.split(",") if x]
            if args.command == "pg-regress":
                dest = pgregress.main(split(args.configs))
            elif args.command == "soak":
                configs.get(args.config)
                dest = soak.main(args.minutes, args.config, args.clients, args.trinity)
            elif args.command == "fuzz":
                dest = fuzz.main(args.seed, args.seconds, split(args.configs), args.smp)
            elif args.command == "selftests":
                tests = selftests.CI_TESTS if args.tests == "ci" else split(args.tests)
                dest = selftests.main(tests, split(args.configs), _cpu_counts(args.smp))
            elif args.command == "profile":
                dest = profile.run(args.target, split(args.configs), split(args.ops),
                                   args.requests, args.quick, args.clients)
            elif args.target != "lebench":
                if args.kernel_args:
                    raise UklError("--append applies to lebench only, not to a server's bench")
                dest = serverbench.run(args.target, split(args.configs), args.requests,
                                       args.clients)
            else:
                dest = bench.run(split(args.configs), split(args.ops), args.quick, not args.wall,
                                 tuple(args.kernel_args))
            print((dest / "table.md").read_text(), end="")
            print(f"results: {dest}")
        else:
            _patches(args.action, args.component, args.bisect)
    except UklError as e:
        print(f"ukl: error: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("ukl: interrupted", file=sys.stderr)
        sys.exit(130)
    except Terminated:
        print("ukl: terminated", file=sys.stderr)
        sys.exit(143)


if __name__ == "__main__":
    main()
