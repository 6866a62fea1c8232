"""`ukl bench SERVER`: a server recipe in the guest, driven by the client on the
host that its [bench] table names (clients.py), every configuration beside
the stock baseline in the same run.

The headline is guest instructions per request, counted by a QEMU TCG plugin
(bench/profile.c) over each measured batch: every instruction the guest
executed, with its call stack.  A probe in the guest (bench/busy.c) opens and
closes the plugin's windows and reports the kernel's counters beside.  Of
each window's count, three things are not the requests':
- the idle task's poll loop (the guest boots with idle=poll);
- the background, the timer ticks and the server's own periodic work, at the
  rate of an unloaded window of the same boot, in proportion to guest time;
- busy-poll spin: the busy-poll loop, but for the paths of the packets it
  received (profile_data.busy_poll_spin), the reading most favourable to
  busy polling.
A request's *total* leaves out the first two; its *work* leaves out the spin
too.  The kernel's clock is no such count: under -icount with sleep=on a
halt inside a task advances the clock as if it were work, so the clock's
busy time is kept only as a cross-check.  Each test runs REPEATS batches in
one boot; the table gives the median and the spread.  Host-side requests per
second and latency percentiles are kept too, labelled noisy: under TCG they
measure the emulator.

The switch counter (bench/switches.c) runs beside, over the same windows, so
each batch also has its mode-switch instructions per request and the
estimated cycles of the cost model (cycles.py).
"""
import json
import socket
import statistics
import time
from pathlib import Path

from . import cycles, plugin as plugins, profile_data
from .clients import CLIENTS, TIMEOUT as CLIENT_TIMEOUT, reset
from .results import baseline_first, built_kernel, config_names, pyplot, write
from .. import api
from ..build import recipes
from ..errors import UklError
from ..guest import net
from ..layout import ROOT

PROBE_PORT = 9
# The probe: an ordinary program in the guest's /bin, started before the server.
PROBE_TOOL = {"ukl-busy": ROOT / "bench" / "busy.c"}
# What makes a request's cost independent of when the host's next packet
# arrives: the idle loop polls instead of halting (no tick stop and restart),
# and virtio-net frees sent buffers when it sends, not from a completion
# interrupt (which otherwise lands either in the idle loop or in the server and
# wakes ksoftirqd only in the second case).  Measured: from 2.4 to 2.0 context
# switches and from 2 to 1 interrupts per Redis GET, and batches agree within 1%.
# The kernel sits at its link address, where the plugin's stacks find its symbols.
KERNEL_ARGS = ["idle=poll", "virtio_net.napi_tx=0", "nokaslr"]
REPEATS = 3
# The probe's counters of each request's path, by their place in a sample.
EVENTS = {"interrupts": 2, "context_switches": 3, "softirqs": 4, "busy_poll_rx": 7}
BACKGROUND_WINDOW = 5.0     # host seconds
BUSY_POLL = "baseline-busypoll"


def servers() -> list[str]:
    """The recipes with a [bench] table."""
    return [name for name in recipes.names() if recipes.load(name).bench]


def bench_of(server: str) -> recipes.Bench:
    """SERVER's [bench] table, or a one-line error naming the servers that have one."""
    if server not in recipes.names() or not recipes.load(server).bench:
        raise UklError(f"unknown server benchmark {server!r}; valid: {', '.join(servers())}")
    return recipes.load(server).bench


def _sample(port: int) -> list[int]:
    """[guest monotonic ns, idle ns, interrupts, context switches, softirqs,
    MemAvailable kB, processes forked, packets received by busy polling] from
    the guest's probe.  Each sample closes a plugin window and opens the next."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        return [int(x) for x in s.makefile().readline().split()]


def _not_requests(folded: str) -> tuple[int, int]:
    """A window's idle-loop and busy-poll-spin instructions."""
    return profile_data.idle_loop(folded), profile_data.busy_poll_spin(folded)


def measure(built: "api.Built", requests: int, tests=None, repeats: int = REPEATS,
            clients: int = 1) -> tuple[dict, list]:
    """One boot of a built server: REPEATS batches of each test.  Returns the
    run and the plugin's windows (the first is the unloaded one; each row
    names its own, `window`)."""
    bench = bench_of(built.name)
    client = CLIENTS[bench.client]
    tests = tests or bench.tests
    port, probe = net.free_port(), net.free_port()
    switch_log = api.run_dir(built) / "switches.jsonl"
    switch_log.unlink(missing_ok=True)
    profiler, raw = plugins.profiler(built)
    raw.unlink(missing_ok=True)
    opts = api.Options(ports=[(port, bench.port), (probe, PROBE_PORT)], icount=True,
                       timeout=CLIENT_TIMEOUT, services=[["/bin/ukl-busy", str(PROBE_PORT)]],
                       tools=api.guest_tools(PROBE_TOOL),
                       kernel_args=list(KERNEL_ARGS),
                       plugins=[profiler, (plugins.build(), (f"out={switch_log}",))],
                       env=bench.env)
    batches = []
    with api.Server(built, opts):
        if client.prepare:
            client.prepare(port)
        client.send(port, tests[0], max(10, requests // 10), clients)    # warm up
        quiet = [_sample(probe)]
        time.sleep(BACKGROUND_WINDOW)
        quiet.append(_sample(probe))
        # A batch before the measured ones: a server's own threads slow down
        # in the quiet window and speed up again with the requests (memcached's
        # LRU maintainer did about 600 instructions a get less in the first
        # batch than in the next two).
        reset(client, port)
        client.send(port, tests[0], requests, clients)
        for test in tests:
            for rep in range(repeats):
                reset(client, port)
                before = _sample(probe)
                host = client.send(port, test, requests, clients)
                batches.append((test, rep, before, _sample(probe), host))
    windows = profile_data.parse(raw)
    if len(windows) != 1 + 2 * len(batches):     # every sample but the first closes one
        raise UklError(f"the profiler saw {len(windows)} windows for "
                       f"{1 + 2 * len(batches)} probe samples")
    symbols = profile_data.Symbols(built.vmlinux, built.elf)
    folded = [profile_data.fold(w, symbols) for w in windows]
    # Sample k closes window k - 1; the quiet window is the first.
    idle, spin = _not_requests(folded[0])
    background = (windows[0].total - idle - spin) / (quiet[1][0] - quiet[0][0])
    rows = []
    for i, (test, rep, before, after, host) in enumerate(batches):
        window = 3 + 2 * i
        idle, spin = _not_requests(folded[window - 1])
        guest_ns = after[0] - before[0]
        total = windows[window - 1].total - idle - background * guest_ns
        rows.append({
            "test": test, "repeat": rep, "requests": requests, "window": window,
            "guest_ns": guest_ns, "counted": windows[window - 1].total, "idle_loop": idle,
            "background": background * guest_ns, "spin": spin,
            "total_per_request": total / requests,
            "per_request": (total - spin) / requests,
            "clock_busy": guest_ns - (after[1] - before[1]),
            "events_per_request": {k: (after[j] - before[j]) / requests
                                   for k, j in EVENTS.items()},
            "host_noisy": host})
    if built.config.busy_poll and not any(r["events_per_request"]["busy_poll_rx"] for r in rows):
        raise UklError(f"{built.name} received nothing by busy polling under "
                       f"{built.config.name}: its recipe lacks an epoll busy-poll patch")
    _add_switches(rows, switch_log)
    run = {"config": built.config.name, "background_per_ns": background, "rows": rows,
           **built_kernel(built)}
    return run, windows


def run_config(built: "api.Built", requests: int, clients: int = 1) -> dict:
    return measure(built, requests, clients=clients)[0]


def _add_switches(rows: list[dict], counts: Path):
    """The switch counter writes a line at every probe sample (the first covers
    the boot), so a row's window is line number `window`."""
    windows = [json.loads(line) for line in counts.read_text().splitlines()]
    for row in rows:
        n = row["requests"]
        row["switches"] = {k: v / n for k, v in windows[row["window"]].items()}
        row["est_cycles"] = cycles.estimates(row["per_request"], row["switches"])


def check_clients(server: str, clients: int):
    """A one-line error for more than one client with a one-connection client."""
    bench = bench_of(server)
    if clients != 1 and not CLIENTS[bench.client].connections:
        raise UklError(f"--clients is for redis-benchmark; the {server} client, "
                       f"{bench.client}, uses one connection")


def run(server: str, configs=None, requests: int = 10000, clients: int = 1) -> Path:
    check_clients(server, clients)
    configs = config_names(configs or [], ["ukl"])
    return write(f"{server}-", {
        "server": server, "requests": requests, "clients": clients,
        "metric": "guest instructions per request (TCG plugin count under -icount shift=0)",
        "runs": [run_config(api.build(server, c), requests, clients=clients)
                 for c in configs]}, table, plot)


def _per_test(run: dict) -> dict:
    out = {}
    for r in run["rows"]:
        out.setdefault(r["test"], []).append(r)
    return out


def median(rows: list[dict], key: str = "per_request") -> float:
    """The headline: the median batch, which a single lumpy batch cannot move."""
    return statistics.median(x[key] for x in rows)


def spread(rows: list[dict], key: str = "per_request") -> float:
    """The batches' largest relative distance."""
    values = [x[key] for x in rows]
    return (max(values) - min(values)) / statistics.median(values)


def _median_batch(rows: list[dict]) -> dict:
    return sorted(rows, key=lambda x: x["per_request"])[len(rows) // 2]


def _vs(value: float, ref: float) -> str:
    return f"{100 * (value - ref) / ref:+.1f}%"


def table(results: dict) -> str:
    runs = baseline_first(results["runs"])
    polling = next((r for r in runs if r["config"] == BUSY_POLL), None)
    clients = results.get("clients", 1)
    over = "one client connection" if clients == 1 else f"{clients} client connections"
    lines = [f"{results['server']}: guest instructions per request, the median of "
             f"{REPEATS} batches of {results['requests']} requests over {over}.", "",
             "*Work* leaves out the idle task's poll loop, the background (ticks, the "
             "server's timers) and busy-poll spin; *total* counts the spin.  Events per "
             "request are the median batch's.  Host-side numbers are noisy (TCG).", ""]
    head = ["configuration", "work", "total", "work vs Linux"]
    if polling:
        head += ["work vs busy polling", "total vs busy polling"]
    head += ["batch spread, work / total", "interrupts", "context switches", "busy-poll packets",
             "noisy: rps", "noisy: p50/p99 ms"]
    for test, base in _per_test(runs[0]).items():
        ref = median(base)
        lines += [f"**{test}**", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for run in runs:
            rows = _per_test(run)[test]
            work, total = median(rows), median(rows, "total_per_request")
            cells = [run["config"], f"{work:.0f}", f"{total:.0f}", _vs(work, ref)]
            if polling:
                poll = _per_test(polling)[test]
                cells += [_vs(work, median(poll)),
                          _vs(total, median(poll, "total_per_request"))]
            events = _median_batch(rows)["events_per_request"]
            host = rows[-1]["host_noisy"]
            cells += [f"{100 * spread(rows):.2f}% / {100 * spread(rows, 'total_per_request'):.2f}%",
                      *(f"{events.get(k, 0):.2f}" for k in
                        ("interrupts", "context_switches", "busy_poll_rx")),
                      f"{host['rps']:.0f}", f"{_fmt(host['p50_ms'])}/{_fmt(host['p99_ms'])}"]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines + _cycles_table(runs)) + "\n"


def _median_cycles(rows: list[dict], key: str) -> float:
    return statistics.median(r["est_cycles"][key] for r in rows)


def _cycles_table(runs: list[dict]) -> list[str]:
    """Estimated cycles per request, the median batch, SWAPGS at each guess."""
    if not all("est_cycles" in r for run in runs for r in run["rows"]):
        return []
    keys = list(runs[0]["rows"][0]["est_cycles"])
    head = ["test", *(f"{run['config']} ({' / '.join(keys)})" for run in runs)]
    lines = ["", "Estimated cycles per request (an estimate: the cost model of "
             "docs/design.md, \"Estimated cycles\"):", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for test, rows in _per_test(runs[0]).items():
        ref = [_median_cycles(rows, k) for k in keys]
        cells = [test, " / ".join(f"{v:.0f}" for v in ref)]
        for run in runs[1:]:
            vals = [_median_cycles(_per_test(run)[test], k) for k in keys]
            cells.append(" / ".join(f"{v:.0f} ({100 * (v - r) / r:+.1f}%)"
                                    for v, r in zip(vals, ref)))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.2f}"


def _events_label(run: dict, test: str) -> str:
    events = _median_batch(_per_test(run)[test])["events_per_request"]
    return (f"{events['interrupts']:.2f} irq, {events['context_switches']:.2f} cs,\n"
            f"{events['busy_poll_rx']:.2f} busy-polled")


def plot(results: dict, path: Path):
    """Per test, each configuration's work per request, its spin above it,
    and its interrupts, context switches and busy-polled packets per request."""
    plt = pyplot()
    runs = baseline_first(results["runs"])
    tests = list(_per_test(runs[0]))
    fig, axes = plt.subplots(len(tests), 1, figsize=(2 + 1.5 * len(runs), 1 + 3.4 * len(tests)),
                             squeeze=False)
    for ax, test in zip(axes[:, 0], tests):
        names = [r["config"] for r in runs]
        work = [median(_per_test(r)[test]) for r in runs]
        total = [median(_per_test(r)[test], "total_per_request") for r in runs]
        bars = ax.bar(names, work, label="work")
        ax.bar(names, [t - w for t, w in zip(total, work)], bottom=work, hatch="//",
               color="none", edgecolor="grey", label="busy-poll spin (total less work)")
        ax.bar_label(bars, labels=[f"{w:.0f}" for w in work], label_type="center",
                     color="white", fontsize=7)
        ax.axhline(work[0], color="black", linewidth=0.6, linestyle=":")
        ax.set_xticks(range(len(runs)), [f"{r['config']}\n{_events_label(r, test)}"
                                         for r in runs])
        ax.set_title(test)
        ax.set_ylabel("guest instructions per request")
        ax.tick_params(axis="x", labelsize=7)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"{results['server']}: guest instructions per request (lower is better)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
