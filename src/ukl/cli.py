"""The `ukl` command."""
import argparse
import sys

from . import api, bench, fetch, series
from .errors import UklError


def _cpus(text: str) -> int:
    """--smp is checked before anything is built."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive number of CPUs, not {text!r}")
    return int(text)


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
    b.add_argument("program", help="a name under examples/ or a path to a C file")
    b.add_argument("--baseline", action="store_true", help="build for stock Linux instead")

    r = sub.add_parser("run", help="build and boot PROGRAM; exit with its exit status")
    r.add_argument("program", help="a name under examples/ or a path to a C file")
    r.add_argument("--baseline", action="store_true",
                   help="run as an ordinary static musl binary on the stock-Linux baseline")
    r.add_argument("--smp", type=_cpus, default=1, help="number of virtual CPUs (default 1)")
    r.add_argument("--timeout", type=float, default=api.DEFAULT_TIMEOUT,
                   help="seconds before the guest is killed (default %(default)s)")

    bn = sub.add_parser("bench", help="LEBench-style costs: every configuration beside Linux")
    bn.add_argument("--quick", action="store_true", help="few iterations (for tests)")
    bn.add_argument("--configs", default="", help="comma-separated (default: all)")
    bn.add_argument("--ops", default="", help="comma-separated lebench operations (default: all)")
    bn.add_argument("--wall", action="store_true",
                    help="wall-clock nanoseconds instead of icount guest instructions")

    pt = sub.add_parser("patches", help="edit a patch series as a git tree")
    pt.add_argument("action", choices=["edit", "export", "reset", "check"])
    pt.add_argument("component", choices=sorted(series.COMPONENTS))
    return p


def _patches(action: str, component: str):
    if action == "edit":
        print(series.tree(component))
    elif action == "reset":
        print(series.reset(component))
    elif action == "export":
        for p in series.export(component):
            print(p)
    else:
        print(series.checkpatch(component), end="")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    prog_args = []
    if "--" in argv:
        cut = argv.index("--")
        argv, prog_args = argv[:cut], argv[cut + 1:]
    args = _parser().parse_args(argv)
    try:
        if args.command == "fetch":
            for name in args.names or [n for n in fetch.pins() if n != "apt"]:
                print(fetch.unpack(name))
        elif args.command == "build":
            built = api.build(args.program, args.baseline)
            print(built.kernel)
        elif args.command == "run":
            result = api.run(args.program, prog_args, args.baseline, args.smp, args.timeout,
                             stdout=sys.stdout.buffer, stderr=sys.stderr.buffer)
            sys.exit(result.status)
        elif args.command == "bench":
            split = lambda v: [x for x in v.split(",") if x]
            dest = bench.run(split(args.configs), split(args.ops), args.quick, not args.wall)
            print((dest / "table.md").read_text(), end="")
            print(f"results: {dest}")
        else:
            _patches(args.action, args.component)
    except UklError as e:
        print(f"ukl: error: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("ukl: interrupted", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
