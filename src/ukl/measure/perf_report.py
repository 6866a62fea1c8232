"""What `ukl run --perf` brings out, made readable on the host: the guest's
`perf script` lists each sample's call chain as addresses (the guest's perf
has no symbol reader); here they are named from vmlinux and the program's
ELF, folded into stacks, counted by function and drawn as a flame graph."""
from collections import Counter
from pathlib import Path

from .profile_data import Symbols, flame_graph

SCRIPT, FOLDED, REPORT, GRAPH = "perf.script", "perf.folded", "perf-report.txt", "perf.png"
_CONTEXT_MARKERS = 0xffff_ffff_ffff_f000      # PERF_CONTEXT_KERNEL, _USER, ... above this


def samples(text: str) -> list[tuple[str, list[int]]]:
    """(command, call chain leaf first) of each sample in `perf script -F comm,ip` output."""
    found, comm, chain = [], None, []
    for line in text.splitlines() + [""]:
        if not line.strip():
            if comm is not None:
                found.append((comm, chain))
            comm, chain = None, []
        elif line[0].isspace():
            addr = int(line.split()[0], 16)
            if addr < _CONTEXT_MARKERS and (not chain or chain[-1] != addr):
                chain.append(addr)
        else:
            comm = line.strip()
    return found


def fold(found: list[tuple[str, list[int]]], symbols: Symbols) -> Counter:
    """Folded stacks (root first, the command as the root) and their sample counts."""
    stacks = Counter()
    for comm, chain in found:
        names = [symbols.name(a) for a in reversed(chain)]
        stacks[";".join([comm, *names])] += 1
    return stacks


def report(stacks: Counter) -> str:
    """Functions by samples in themselves (self) and under them (total)."""
    own, under = Counter(), Counter()
    for stack, n in stacks.items():
        names = stack.split(";")[1:]
        own[names[-1]] += n
        for name in set(names):
            under[name] += n
    total = sum(stacks.values()) or 1
    lines = [f"{'self':>7} {'total':>7}  function   ({total} samples)"]
    for name, n in sorted(under.items(), key=lambda kv: (-own[kv[0]], -kv[1], kv[0])):
        lines.append(f"{100 * own[name] / total:6.2f}% {100 * n / total:6.2f}%  {name}")
    return "\n".join(lines) + "\n"


def write(out: Path, vmlinux: Path, program: Path, title: str) -> Counter:
    """From OUT/perf.script: OUT/perf.folded, OUT/perf-report.txt and OUT/perf.png."""
    stacks = fold(samples((out / SCRIPT).read_text(errors="replace")), Symbols(vmlinux, program))
    (out / FOLDED).write_text("".join(f"{s} {n}\n" for s, n in sorted(stacks.items())))
    (out / REPORT).write_text(report(stacks))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    flame_graph((out / FOLDED).read_text(), out / GRAPH, title, plt)
    return stacks
