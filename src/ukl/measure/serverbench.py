"""`ukl bench SERVER`: a server recipe in the guest, driven by the client on the
host that its [bench] table names (clients.py), every configuration beside
the stock baseline in the same run.

The headline is guest instructions per request.  The guest runs under
`-icount shift=0`, where a busy guest nanosecond is one instruction; a probe
in the guest (bench/busy.c) reports the monotonic clock and the kernel's idle
time, so busy time over a measured batch of requests is the instructions the
guest executed for them: the server, the network stack, interrupts.  The
background rate of an unloaded guest (timer ticks, the server's own periodic
work) is measured once per boot and subtracted in proportion to each batch's
guest time.  Each test runs REPEATS batches in one boot; the table gives the
median and the spread.  Host-side requests per second and latency percentiles
are kept too, labelled noisy: under TCG they measure the emulator.

The switch counter (bench/switches.c) runs beside, over the same windows, so
each batch also has its mode-switch instructions per request and the
estimated cycles of the cost model (cycles.py).
"""
import json
import socket
import statistics
import time
from pathlib import Path

from . import cycles, plugin as plugins
from .clients import CLIENTS, TIMEOUT as CLIENT_TIMEOUT, reset
from .results import baseline_first, built_kernel, config_names, pyplot, write
from .. import api, configs
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
KERNEL_ARGS = ["idle=poll", "virtio_net.napi_tx=0"]
REPEATS = 3
# The probe's counters of each request's path, by their place in a sample.
EVENTS = {"interrupts": 2, "context_switches": 3, "softirqs": 4, "busy_poll_rx": 7}
BACKGROUND_WINDOW = 5.0     # host seconds


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
    the guest's probe.  Each sample also closes a plugin window (see bench/busy.c)."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        return [int(x) for x in s.makefile().readline().split()]


def _background(probe: int) -> float:
    """Busy guest instructions per guest nanosecond with no requests: the timer
    ticks of the polling idle loop and the server's periodic work, which a
    batch pays in proportion to its guest time, however slow the host client."""
    mono0, idle0 = _sample(probe)[:2]
    time.sleep(BACKGROUND_WINDOW)
    mono1, idle1 = _sample(probe)[:2]
    return ((mono1 - mono0) - (idle1 - idle0)) / (mono1 - mono0)


def run_config(built: "api.Built", requests: int, tests=None, repeats: int = REPEATS,
               plugin=None, clients: int = 1, kernel_args: tuple = ()) -> dict:
    """One boot of a built server: REPEATS batches of each test.  Each row names
    its plugin window: the number of the probe's sample that ended it, from 0.
    Without another PLUGIN (its shared object and arguments), the switch
    counter's windows give each row its mode switches and estimated cycles."""
    bench = bench_of(built.name)
    client = CLIENTS[bench.client]
    tests = tests or bench.tests
    port, probe = net.free_port(), net.free_port()
    switch_log, counting = api.run_dir(built) / "switches.jsonl", plugin is None
    if counting:
        switch_log.unlink(missing_ok=True)
        plugin = (plugins.build(), (f"out={switch_log}",))
    opts = api.Options(ports=[(port, bench.port), (probe, PROBE_PORT)], icount=True,
                       timeout=CLIENT_TIMEOUT, services=[["/bin/ukl-busy", str(PROBE_PORT)]],
                       tools=api.guest_tools(PROBE_TOOL),
                       kernel_args=[*KERNEL_ARGS, *kernel_args],
                       plugin=plugin, env=bench.env)
    rows = []
    with api.Server(built, opts):
        if client.prepare:
            client.prepare(port)
        client.send(port, tests[0], max(10, requests // 10), clients)    # warm up
        background = _background(probe)
        # A batch before the measured ones: a server's own threads slow down
        # in the idle window and speed up again with the requests (memcached's
        # LRU maintainer did about 600 instructions a get less in the first
        # batch than in the next two).
        reset(client, port)
        client.send(port, tests[0], requests, clients)
        samples = 2
        for test in tests:
            for rep in range(repeats):
                reset(client, port)
                before = _sample(probe)
                host = client.send(port, test, requests, clients)
                after = _sample(probe)
                samples += 2
                (mono0, idle0, *_), (mono1, idle1, *_) = before, after
                counts = {k: (after[i] - before[i]) / requests for k, i in EVENTS.items()}
                busy = (mono1 - mono0) - (idle1 - idle0)
                work = busy - background * (mono1 - mono0)
                rows.append({"test": test, "repeat": rep, "requests": requests,
                             "busy_instructions": busy, "guest_ns": mono1 - mono0,
                             "background_per_ns": background, "per_request": work / requests,
                             "events_per_request": counts, "window": samples - 1,
                             "host_noisy": host})
    if built.config.busy_poll and not any(r["events_per_request"]["busy_poll_rx"] for r in rows):
        raise UklError(f"{built.name} received nothing by busy polling under "
                       f"{built.config.name}: its recipe lacks an epoll busy-poll patch")
    if counting:
        _add_switches(rows, switch_log)
    return {"config": built.config.name, "rows": rows, **built_kernel(built)}


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
        "metric": "guest instructions per request (busy time under -icount shift=0)",
        "runs": [run_config(api.build(server, c), requests, clients=clients)
                 for c in configs]}, table, plot)


def _per_test(run: dict) -> dict:
    out = {}
    for r in run["rows"]:
        out.setdefault(r["test"], []).append(r)
    return out


def table(results: dict) -> str:
    runs = baseline_first(results["runs"])
    base = _per_test(runs[0])
    head = ["test", "baseline (instructions/request)"]
    for r in runs[1:]:
        head += [f"{r['config']}", f"{r['config']} vs Linux"]
    head += ["repeat spread", "noisy: rps " + " / ".join(r["config"] for r in runs),
             "noisy: p50/p99 ms " + " / ".join(r["config"] for r in runs)]
    clients = results.get("clients", 1)
    over = "one client connection" if clients == 1 else f"{clients} client connections"
    lines = [f"{results['server']}: guest instructions per request, the median of "
             f"{REPEATS} batches of {results['requests']} requests over {over}; "
             f"host-side numbers are noisy (TCG)", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    if any(configs.get(r["config"]).busy_poll for r in runs):
        lines[1:1] = ["", "A busy-polling column counts its spin, which the host client's "
                      "round trip sets; `ukl profile` separates it from the work."]
    for test, rows in base.items():
        ref = median(rows)
        cells = [test, f"{ref:.0f}"]
        spread = max([_spread(rows), *(_spread(_per_test(r)[test]) for r in runs[1:])])
        for r in runs[1:]:
            v = median(_per_test(r)[test])
            cells += [f"{v:.0f}", f"{100 * (v - ref) / ref:+.1f}%"]
        host = [_per_test(r)[test][-1]["host_noisy"] for r in runs]
        cells += [f"{100 * spread:.2f}%", " / ".join(f"{h['rps']:.0f}" for h in host),
                  " / ".join(f"{_fmt(h['p50_ms'])}/{_fmt(h['p99_ms'])}" for h in host)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines + _events_table(runs) + _cycles_table(runs)) + "\n"


def _events_table(runs: list[dict]) -> list[str]:
    """What each request's path took, per request, in the median batch's run:
    interrupts, context switches and packets received by busy polling."""
    lines = ["", "Events per request (the batch of median cost): interrupts / context "
             "switches / packets received by busy polling", "",
             "| test | " + " | ".join(r["config"] for r in runs) + " |",
             "|" + "---|" * (len(runs) + 1)]
    for test in _per_test(runs[0]):
        cells = [test]
        for run in runs:
            rows = sorted(_per_test(run)[test], key=lambda x: x["per_request"])
            events = rows[len(rows) // 2].get("events_per_request", {})
            cells.append(" / ".join(f"{events.get(k, 0):.2f}" for k in
                                    ("interrupts", "context_switches", "busy_poll_rx")))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


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


def median(rows: list[dict]) -> float:
    """The headline: the median batch, which a single lumpy batch cannot move."""
    return statistics.median(x["per_request"] for x in rows)


def _spread(rows: list[dict]) -> float:
    vals = [x["per_request"] for x in rows]
    return (max(vals) - min(vals)) / statistics.median(vals)


def plot(results: dict, path: Path):
    plt = pyplot()
    runs = baseline_first(results["runs"])
    tests = list(_per_test(runs[0]))
    fig, ax = plt.subplots(figsize=(max(6, 2 * len(tests)), 4))
    width = 0.8 / len(runs)
    for i, r in enumerate(runs):
        by = _per_test(r)
        ax.bar([x + i * width for x in range(len(tests))],
               [median(by[t]) for t in tests], width, label=r["config"])
    ax.set_xticks([x + width * (len(runs) - 1) / 2 for x in range(len(tests))])
    ax.set_xticklabels(tests)
    ax.set_ylabel("guest instructions per request")
    ax.set_title(f"{results['server']}: guest instructions per request (lower is better)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
