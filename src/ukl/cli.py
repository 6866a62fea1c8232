"""The `ukl` command."""
import argparse
import dataclasses
import shlex
import signal
import sys
from pathlib import Path

from . import api, configs, deploy, oci
from .build import bisect, fetch, kernel, programs, series
from .errors import UklError
from .guest import console, features, options, qemu
from .guest.options import argparse_type
from .measure import bench, fuzz, perf_report, profile, selftests, serverbench, soak, suite

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
    return argparse_type(options.duration(unit))


_seconds = _duration("seconds")


def _cpu_counts(text: str) -> list[int]:
    counts = [c for c in text.split(",") if c]
    if not counts or not all(c.isdigit() and 1 <= int(c) <= 64 for c in counts):
        raise UklError(f"--smp {text}: expected CPU counts like 1,2")
    return [int(c) for c in counts]


def add_options(parser: argparse.ArgumentParser, command: str):
    """The options the features declare for COMMAND (guest/features/)."""
    for option in features.declared(command):
        option.add_to(parser)


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
    _binary_option(r)
    r.add_argument("--timeout", type=_seconds, default=None,
                   help=f"seconds before the guest is killed (default {api.DEFAULT_TIMEOUT:g}, "
                        "none with --gdb)")
    r.add_argument("--dry-run", action="store_true",
                   help="build the program and its kernel and show the QEMU command, but do "
                        "not boot: no port is bound, and the private forward ports show as "
                        "HOSTFWD0...")
    add_options(r, "run")

    o = sub.add_parser("oci", help="write an OCI image of PROGRAM that urunc boots "
                       "(containerd, Kubernetes)")
    o.add_argument("program", help=PROGRAM_HELP)
    o.add_argument("--config", default="ukl", help=CONFIG_HELP)
    o.add_argument("--baseline", action="store_true", help="same as --config baseline")
    _binary_option(o)
    add_options(o, "oci")
    o.add_argument("-o", dest="dest", type=Path, required=True, metavar="DIR|FILE.tar",
                   help="an image layout directory (new or empty), or a tar of one")

    im = sub.add_parser("image", help="write PROGRAM and its kernel as a disk image a VM host, "
                        "a cloud or a machine boots with UEFI (or as one EFI executable)")
    im.add_argument("program", help=PROGRAM_HELP)
    im.add_argument("--config", default="ukl", help=CONFIG_HELP)
    im.add_argument("--baseline", action="store_true", help="same as --config baseline")
    _binary_option(im)
    im.add_argument("-o", dest="dest", type=Path, required=True, metavar="FILE",
                    help="the image to write")
    im.add_argument("--format", default="raw", metavar="FORMAT",
                    help="raw (default) or qcow2: a GPT disk with an EFI system partition; "
                         "efi: the kernel alone, as one EFI executable (a boot menu, kexec)")
    im.add_argument("--ip", type=argparse_type(deploy.parse_ip), metavar="ADDR/NN,GATEWAY",
                    help="a static address on the first NIC (default: DHCP)")
    im.add_argument("--on-exit", default="poweroff", choices=deploy.ON_EXIT,
                    help="what the machine does when the program ends (default poweroff)")
    add_options(im, "image")

    bt = sub.add_parser("boot", help="boot an image from `ukl image` under QEMU with UEFI "
                        "firmware, as a VM host would; exit with its program's status")
    bt.add_argument("image", type=Path)
    bt.add_argument("--nic", default="virtio", choices=sorted(deploy.NICS),
                    help="the network card (default virtio)")
    bt.add_argument("--smp", type=_positive("CPUs"), default=1, help="CPUs (default 1)")
    bt.add_argument("--memory", type=_positive("MiB"), default=1024,
                    help="MiB of RAM (default %(default)s)")
    bt.add_argument("--timeout", type=_seconds, default=None,
                    help="seconds before the machine is stopped (default: none)")
    bt.add_argument("--data", type=Path, metavar="DISK",
                    help="the data disk (default: IMAGE-data beside the image, if it exists)")
    add_options(bt, "boot")

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
    bn.add_argument("--binary", action="store_true",
                    help="lebench built by gcc -static (glibc), no ukl-cc, run unmodified "
                         "(ukl run --binary)")
    bn.add_argument("--wall", action="store_true",
                    help="wall-clock nanoseconds instead of icount guest instructions")
    bn.add_argument("--kernel-arg", dest="kernel_args", action="append", default=[],
                    type=argparse_type(features.kernel_args.word), metavar="ARG",
                    help="add ARG to every guest kernel's command line, e.g. pti=on, for "
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

    su = sub.add_parser("suite", help="an application's own upstream test suite against it as "
                        "a UKL program, beside the same recipe on stock Linux")
    su.add_argument("app", choices=sorted(suite.SUITES))
    su.add_argument("--configs", default="", help="comma-separated (default: ukl,ukl-ret-byp)")
    su.add_argument("--smp", type=_positive("CPUs"), default=2, help="CPUs (default 2)")
    su.add_argument("--ci", action="store_true",
                    help="a few tests only (those tests/boot/test_suites.py runs)")

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


def _binary_option(parser: argparse.ArgumentParser):
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument("--binary", action="store_true",
                      help="PROGRAM is an executable of this host (any x86-64 ELF, static or "
                           "dynamic), run unmodified: at CPL0 under a UKL configuration, "
                           "with its interpreter and libraries copied into the guest")
    kind.add_argument("--deb", action="store_true",
                      help="PROGRAM is a Debian package (NAME or NAME=VERSION): its program "
                           "(named after it, or its only one), as Debian built it, run as "
                           "--binary runs one, with the package's files and the libraries "
                           "it loads from what it depends on")
    parser.add_argument("--entrypoint", metavar="PATH",
                        help="with --deb: the program to start, a path in the package "
                             "or what it depends on")


def _program(args) -> "str | programs.Program":
    if args.entrypoint and not args.deb:
        raise UklError("--entrypoint applies to --deb only")
    if args.deb:
        return programs.deb(args.program, args.entrypoint)
    return programs.binary(args.program) if args.binary else args.program


def _config(args) -> configs.Config:
    """--baseline is shorthand for --config baseline."""
    if args.baseline and args.config not in ("ukl", "baseline"):
        raise UklError(f"--baseline and --config {args.config} contradict each other")
    return configs.get("baseline" if args.baseline else args.config)


def _run(args, prog_args):
    opts = features.from_args(args, "run", args=tuple(prog_args), timeout=args.timeout)
    config = _config(args)
    opts = api.validate(opts, config, bind=not args.dry_run)     # before a long build
    built = api.build(_program(args), config)
    if args.gdb:
        script = features.gdb.script(built, api.run_dir(built), args.gdb_port)
        print(f"ukl: the guest waits for gdb on 127.0.0.1:{args.gdb_port}; attach with:\n"
              f"  gdb -q -x {shlex.quote(str(script))}", file=sys.stderr, flush=True)
    stop = qemu.Stop(built.name, opts.stop_timeout)
    opts = dataclasses.replace(opts, stop=stop)
    if args.dry_run:
        m = api.machine(built, opts, dry_run=True)
        for daemon in m.spec.daemons:       # started before QEMU, which connects to them
            print(shlex.join(daemon.argv))
        print(shlex.join(m.argv()))
        return
    published = ", ".join(f"127.0.0.1:{h} -> guest port {g}" for h, g in opts.ports)
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


def _boot(args) -> int:
    image = args.image
    data = args.data or deploy.data_beside(image)
    if data is not None:
        print(f"ukl: data disk {data}", file=sys.stderr)
    ports = features.from_args(args, "boot").ports
    return deploy.boot(image, ports, args.nic, args.smp, args.memory, args.timeout, data)


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
        elif args.command == "image":
            opts = features.from_args(args, "image", args=tuple(prog_args))
            for path in deploy.image(_program(args), _config(args), opts, args.dest, args.format,
                                     args.ip, args.on_exit):
                print(path)
        elif args.command == "boot":
            sys.exit(_boot(args))
        elif args.command == "oci":
            print(oci.build(_program(args), _config(args), args.dest,
                            features.from_args(args, "oci", args=tuple(prog_args))))
        elif args.command in ("bench", "profile", "selftests", "fuzz", "soak", "suite"):
            split = lambda v: [x for x in v.split(",") if x]
            if args.command == "suite":
                dest = suite.main(args.app, split(args.configs), args.smp, args.ci)
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
                if args.binary:
                    raise UklError("--binary applies to lebench only")
                if args.kernel_args:
                    raise UklError("--kernel-arg applies to lebench only, not to a server's "
                                   "bench")
                dest = serverbench.run(args.target, split(args.configs), args.requests,
                                       args.clients)
            else:
                dest = bench.run(split(args.configs), split(args.ops), args.quick, not args.wall,
                                 tuple(args.kernel_args), args.binary)
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
