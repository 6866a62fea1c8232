"""`ukl profile`: where the instructions of a measured window go, by function
and call stack, for Linux and each configuration side by side.

The window is the one `ukl bench` measures: one lebench operation (lebench's
marker NOPs), or one batch of server requests (the probe's samples, see
bench/busy.c).  A QEMU TCG plugin (bench/profile.c) counts every guest
instruction in it at -smp 1, where inline counters are exact, and attributes
it to a call stack; here the stacks get their symbols (vmlinux and the
program's own ELF), become folded stacks, a flame graph and a table by layer.
The boot that is profiled is also the bench's measurement of the same windows:
its table gives the bench's own numbers beside the profile's, and for lebench
bench.md tables its samples as `ukl bench` does (without the mode-switch
counts: the switch counter is a different plugin).  A kernel with KASLR boots
with `nokaslr` here, so that the plugin's addresses are vmlinux's.
"""
from pathlib import Path

from . import bench, plugin, profile_data, serverbench
from .results import baseline_first, built_kernel, config_names, pyplot, write
from .. import api
from ..build import libc
from ..errors import UklError

SERVER_REQUESTS = 2000
# The kernel at its link address, where its symbols are.
KERNEL_ARGS = ("nokaslr",)


# A server's window: what is not work, and what `ukl bench` reports, per request.
SERVER_ROWS = [
    ("**the layers: the window's work, background still in**", "work_in_window"),
    ("the idle task's poll loop", "idle_loop"),
    ("busy-poll spin (the loop, but for received packets' paths)", "spin"),
    ("**the window**", "window"),
    ("background (ticks, the server's timers), at the quiet window's rate", "background"),
    ("**a request's work, as `ukl bench` reports it**", "bench_work"),
    ("a request's total, as `ukl bench` reports it (spin in)", "bench_total"),
    ("the kernel clock's busy time (a halt in a task counts as work)", "clock_busy"),
]


def targets() -> list[str]:
    return ["lebench", *serverbench.servers()]


def _lebench(config: str, ops: list[str], quick: bool) -> dict:
    built = api.build(str(bench.LEBENCH), config)
    args, raw = plugin.profiler(built)
    # A disk moves the timer ticks among the windows (their means, not the
    # bench's minimum): only the fio_* operations, which need it, get one.
    run = bench.boot(built, ops, quick, plugins=[args], timeout=3600,
                     disk=any(op.startswith("fio_") for op in ops), kernel_args=KERNEL_ARGS)
    rows = run["rows"]
    windows = profile_data.parse(raw)
    if len(windows) != len(rows):
        raise UklError(f"the profiler saw {len(windows)} windows for {len(rows)} operations")
    report = _report(built, [(f"{r['op']} {r['size']}" if r["size"] else r["op"], w,
                              r["count"], sum(r["samples"]) * r["count"] // len(r["samples"]))
                             for r, w in zip(rows, windows)])
    for w, r in zip(report["windows"], rows):
        w["bench_min"] = r["min"]
    report["bench"] = run
    return report


def _server(server: str, config: str, requests: int, clients: int) -> dict:
    """The bench's own boot: its windows are the profile's."""
    built = api.build(server, config)
    run, windows = serverbench.measure(built, requests,
                                       tests=serverbench.bench_of(server).tests[:1],
                                       repeats=1, clients=clients)
    rows = run["rows"]
    report = _report(built, [(r["test"], windows[r["window"] - 1], r["requests"],
                              r["counted"]) for r in rows])
    for w, r in zip(report["windows"], rows):
        n = r["requests"]
        w.update({k: r[k] / n for k in ("idle_loop", "background", "spin", "clock_busy")})
        w["bench_total"] = r["total_per_request"]
        w["bench_work"] = r["per_request"]
    return report


def _report(built: "api.Built", measured: list[tuple]) -> dict:
    """MEASURED: (name, window, operations in it, the bench's own count of its
    instructions).  Folded stacks and layers per operation."""
    vmlinux, program = built.vmlinux, built.elf
    libc_a = libc.sysroot(built.config) / "lib" / "libc.a"
    symbols = profile_data.Symbols(vmlinux, program,
                                   {name for _, name in profile_data.nm(libc_a)})
    windows = []
    for name, window, count, bench_total in measured:
        windows.append({"name": name, "operations": count, "total": window.total,
                        "bench_total": bench_total,
                        "layers": {k: v / count for k, v in
                                   profile_data.layers(window, symbols).items()},
                        "folded": profile_data.fold(window, symbols)})
    return {"config": built.config.name, "windows": windows, **built_kernel(built)}


def run(target: str, configs: list[str], ops: list[str] = (),
        requests: int = SERVER_REQUESTS, quick: bool = False, clients: int = 1) -> Path:
    if target not in targets():
        raise UklError(f"unknown profile target {target!r}; valid: {', '.join(targets())}")
    names = config_names(configs, ["ukl-ret-byp"])
    if target == "lebench":
        if clients != 1:
            raise UklError("--clients is for a server; lebench runs in the guest")
        ops = list(ops) or ["getppid"]
        valid = bench.operations()
        for op in ops:
            if op not in valid:
                raise UklError(f"unknown operation {op!r}; valid: {', '.join(valid)}")
        runs = [_lebench(c, ops, quick) for c in names]
    else:
        if ops:
            raise UklError("--ops is for lebench; a server's window is a batch of requests")
        serverbench.check_clients(target, clients)
        runs = [_server(target, c, requests, clients) for c in names]
    results = {"target": target, "metric": "guest instructions per operation (-icount shift=0, "
               "-smp 1, every instruction counted)", "runs": runs}
    return write(f"profile-{target}-", results, table, plot, _files)


def _files(results: dict, dest: Path):
    """One folded-stack file and one flame graph per configuration and window;
    for lebench, bench.md: the same boots' samples as `ukl bench` tables them."""
    if all("bench" in run for run in results["runs"]):
        (dest / "bench.md").write_text(
            "lebench's samples from the profiled boots, as `ukl bench` tables them (no "
            "mode-switch counts: the profiler, not the switch counter, was loaded):\n\n" +
            bench.table({"runs": [run["bench"] for run in results["runs"]]}))
    for run in results["runs"]:
        for w in run["windows"]:
            stem = f"{run['config']}-{w['name'].replace(' ', '-')}"
            (dest / f"{stem}.folded").write_text(w["folded"])
            profile_data.flame_graph(w["folded"], dest / f"{stem}.png",
                                     f"{results['target']} {w['name']}, {run['config']}: "
                                     f"{w['total'] / w['operations']:.0f} guest instructions "
                                     f"per operation", pyplot())


def table(results: dict) -> str:
    runs = baseline_first(results["runs"])
    lines = []
    for i, name in enumerate(w["name"] for w in runs[0]["windows"]):
        per_run = [r["windows"][i] for r in runs]
        head = ["layer", *(r["config"] for r in runs)]
        lines += [f"{results['target']} {name}: guest instructions per operation, by layer", "",
                  "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for layer in profile_data.LAYERS:
            lines.append(f"| {layer} | " + " | ".join(f"{w['layers'].get(layer, 0):.0f}"
                                                       for w in per_run) + " |")
        if "idle_loop" in per_run[0]:
            values = [{**w, "window": w["total"] / w["operations"],
                       "work_in_window": sum(w["layers"].values())} for w in per_run]
            lines += [f"| {label} | " + " | ".join(f"{v[key]:.0f}" for v in values) + " |"
                      for label, key in SERVER_ROWS]
            lines.append("")
            continue
        lines.append("| **total** | " + " | ".join(
            f"**{w['total'] / w['operations']:.0f}**" for w in per_run) + " |")
        lines.append("| the bench's count | " + " | ".join(
            f"{w['bench_total'] / w['operations']:.0f} ({_agree(w)})" for w in per_run) + " |")
        if "bench_min" in per_run[0]:
            lines.append("| **an operation's cost, as `ukl bench` reports it (the minimum "
                         "sample)** | " + " | ".join(f"**{w['bench_min']}**" for w in per_run) +
                         " |")
        lines.append("")
    return "\n".join(lines)


def _agree(window: dict) -> str:
    return f"{100 * (window['total'] - window['bench_total']) / window['bench_total']:+.2f}%"


def plot(results: dict, path: Path):
    """Stacked bars: each configuration's instructions per operation, by layer."""
    plt = pyplot()
    runs = baseline_first(results["runs"])
    names = [w["name"] for w in runs[0]["windows"]]
    fig, axes = plt.subplots(1, len(names), figsize=(4 + 3 * len(runs) * len(names) / 2, 5),
                             squeeze=False)
    for ax, i in zip(axes[0], range(len(names))):
        bottom = [0.0] * len(runs)
        for layer in profile_data.LAYERS:
            values = [r["windows"][i]["layers"].get(layer, 0) for r in runs]
            ax.bar([r["config"] for r in runs], values, bottom=bottom, label=layer)
            bottom = [b + v for b, v in zip(bottom, values)]
        ax.set_title(names[i])
        ax.set_ylabel("guest instructions per operation")
        ax.tick_params(axis="x", rotation=30)
    axes[0, -1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1, 1))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
