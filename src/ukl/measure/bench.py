"""`ukl bench`: LEBench-style costs, UKL and the stock baseline side by side.

The primary metric is deterministic: under `-icount shift=0` one guest
nanosecond is one guest instruction, so lebench's per-operation times are
guest instructions per operation.  Every sample is kept in results.json.
"""
import io
import json
import shutil
import time
from pathlib import Path

from . import cycles, plugin
from .results import BENCH_DIR, baseline_first, built_kernel, config_names, pyplot, write
from .. import api, configs
from ..build import cc, libc, programs
from ..errors import UklError
from ..layout import ROOT

LEBENCH = ROOT / "bench" / "lebench.c"
DISK_MB = 64                                         # lebench's fio_* ops use the first 64 MiB


def operations() -> list[str]:
    """The operations lebench knows, read from its source (the single list)."""
    text = LEBENCH.read_text()
    block = text[text.index("static const char *const ops[] = {"):]
    block = block[:block.index("NULL")]
    return [w.strip('" ,\n\t') for w in block.split("{", 1)[1].split(",") if w.strip('" ,\n\t')]


def _check(names, valid, what):
    for n in names:
        if n not in valid:
            raise UklError(f"unknown {what} {n!r}; valid: {', '.join(valid)}")


def _scratch_disk() -> Path:
    """A fresh, sparse raw image for the fio_* operations (/dev/vda in the guest)."""
    disk = BENCH_DIR / "disk.img"
    disk.parent.mkdir(parents=True, exist_ok=True)
    with open(disk, "wb") as f:
        f.truncate(DISK_MB << 20)
    return disk


def boot(built: "api.Built", ops: list[str], quick: bool, icount: bool = True,
         plugins: list = (), timeout: float = 1800, disk: bool = True,
         kernel_args: tuple = ()) -> dict:
    """One boot of lebench, BUILT, with QEMU PLUGINS, and the scratch
    disk the fio_* operations use if DISK: the bench's record of the run, every
    sample.  `ukl profile` boots it here too, so its windows and the bench's
    samples come from the same boot."""
    out, err = io.BytesIO(), io.BytesIO()
    args = (["--quick"] if quick else []) + (ops or operations())
    start = time.monotonic()
    res = api.boot(built, api.Options(tuple(args), icount=icount, timeout=timeout,
                                      disk=_scratch_disk() if disk else None,
                                      plugins=list(plugins), kernel_args=list(kernel_args)),
                   stdout=out, stderr=err)
    if res.status != 0:
        raise UklError(f"lebench on {built.config.name} exited with {res.status}: "
                       f"{err.getvalue().decode(errors='replace').strip()[-200:]}")
    rows = [json.loads(line) for line in out.getvalue().decode().splitlines() if line.strip()]
    return {"config": built.config.name, "metric": "guest instructions" if icount else "wall ns",
            "rows": rows, "wall_seconds": time.monotonic() - start,
            "qemu": (res.run_dir / "qemu.cmd").read_text().strip(), **built_kernel(built)}


def lebench_binary() -> Path:
    """lebench built by the host's ordinary compiler (gcc -static, glibc),
    no ukl-cc: what `ukl bench --binary` runs unmodified."""
    sysroot = libc.build(configs.get("baseline"))
    include = BENCH_DIR / "gcc-include"
    (include / "ukl").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sysroot / "include" / "ukl" / "shortcut.h", include / "ukl" / "shortcut.h")
    out = BENCH_DIR / "lebench-gcc"
    cc.run_gcc(["gcc", "-O2", "-static", "-I", str(include), str(LEBENCH), "-o", str(out)],
               "lebench failed to compile")
    return out


def _run_one(config: str, ops: list[str], quick: bool, icount: bool,
             kernel_args: tuple, binary: Path | None = None) -> dict:
    built = api.build(programs.binary(str(binary)) if binary else str(LEBENCH), config)
    counts = api.run_dir(built) / "switches.jsonl"
    counter = [(plugin.build(), (f"out={counts}",))] if icount else []
    run = boot(built, ops, quick, icount, counter, kernel_args=kernel_args)
    if icount:
        _add_switches(run["rows"], counts)
    return run


def _add_switches(rows: list[dict], counts: Path):
    """Each row's mode-switch instructions per operation (the plugin counted them over
    all of the row's samples) and the estimated cycles they add."""
    windows = [json.loads(line) for line in counts.read_text().splitlines()]
    if len(windows) != len(rows):
        raise UklError(f"the switch counter saw {len(windows)} measurements for "
                       f"{len(rows)} rows ({counts})")
    for row, window in zip(rows, windows):
        row["switches"] = {k: v / row["count"] for k, v in window.items()}
        row["est_cycles"] = cycles.estimates(row["min"], row["switches"])


def run(names=None, ops=None, quick=False, icount=True, kernel_args=(),
        binary=False) -> Path:
    """Run lebench on each config beside Linux, every kernel booted with
    KERNEL_ARGS too; with BINARY, lebench built by gcc and run unmodified
    (`ukl run --binary`).  Return the results directory."""
    names = config_names(names or [], ["ukl", "cpl3-on-ukl"])
    ops = ops or []
    _check(ops, operations(), "operation")
    exe = lebench_binary() if binary else None
    return write("", {"quick": quick, "icount": icount, "kernel_args": list(kernel_args),
                      "binary": binary,
                      "runs": [_run_one(c, ops, quick, icount, kernel_args, exe)
                               for c in names]},
                 table, plot)


def _by_key(run: dict) -> dict:
    return {(r["op"], r["size"]): r for r in run["rows"]}


ESTIMATES = [f"swapgs={s:g}" for s in cycles.SWAPGS_CYCLES]
SWITCHES = ["syscall", "sysret", "iret", "swapgs", "cr3_write", "wrmsr", "popf", "serialising"]
SIZED = ["read", "write", "udp", "tcp"]       # plotted against size


def _representative(run: dict) -> dict:
    """Each operation at its first (smallest) size, in lebench's order."""
    rows = {}
    for row in run["rows"]:
        rows.setdefault(row["op"], row)
    return rows


def _change(value, base) -> float:
    return 100.0 * (value - base) / base if base else 0.0


def table(results: dict) -> str:
    runs = baseline_first(results["runs"])
    base = _by_key(runs[0])
    others = runs[1:]
    unit = runs[0]["metric"]
    head = ["operation", "size", f"{runs[0]['config']} (min {unit})"]
    for o in others:
        head += [f"{o['config']} (min)", f"{o['config']} vs Linux"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    if results.get("kernel_args"):
        lines = [f"Every kernel booted with: {' '.join(results['kernel_args'])}", ""] + lines
    for key, row in base.items():
        cells = [key[0], str(key[1]), str(row["min"])]
        for o in others:
            other = _by_key(o).get(key)
            if other:
                cells += [str(other["min"]), f"{_change(other['min'], row['min']):+.1f}%"]
            else:
                cells += ["-", "-"]
        lines.append("| " + " | ".join(cells) + " |")
    if all("switches" in r for run in runs for r in run["rows"]):
        lines += _switch_table(runs)
    fio = [key for key in base if key[0].startswith("fio_")]
    if fio:
        lines += ["", f"4 KiB O_DIRECT at queue depth 1 on virtio-blk, operations per second "
                  f"(10^9 / min {unit}):", ""]
        lines += ["| operation | " + " | ".join(r["config"] for r in runs) + " |",
                  "|" + "---|" * (len(runs) + 1)]
        for key in fio:
            rates = [_by_key(r).get(key) for r in runs]
            lines.append(f"| {key[0]} | " + " | ".join(
                f"{1e9 / r['min']:.0f}" if r and r["min"] else "-" for r in rates) + " |")
    return "\n".join(lines) + "\n"


def _switch_table(runs: list[dict]) -> list[str]:
    """Mode-switch instructions per operation, and the cycles they are estimated to cost."""
    lines = ["", "Mode-switch instructions per operation (QEMU plugin count) and **estimated** "
             "cycles: guest instructions, with each counted instruction weighted by its "
             "published cost (docs/design.md#estimated-cycles):", "",
             "| operation | size | configuration | " + " | ".join(SWITCHES) +
             "".join(f" | est. cycles ({k}) | vs Linux" for k in ESTIMATES) + " |",
             "|" + "---|" * (len(SWITCHES) + 3 + 2 * len(ESTIMATES))]
    base = _representative(runs[0])
    for op, brow in base.items():
        for run in runs:
            row = _representative(run).get(op)
            if row is None:
                continue
            counts = [f"{row['switches'][k]:.2f}".rstrip("0").rstrip(".") for k in SWITCHES]
            est, base_est = row["est_cycles"], brow["est_cycles"]
            lines.append(f"| {op} | {row['size']} | {run['config']} | " + " | ".join(counts) +
                         "".join(f" | {est[k]} | {_change(est[k], base_est[k]):+.1f}%"
                                 for k in ESTIMATES) + " |")
    return lines


def plot(results: dict, path: Path):
    """PATH: each operation at its first size, every configuration against Linux
    (fio_* left out: their cost is noise); sizes.png beside it: cost against
    size for read, write, UDP and TCP."""
    plt = pyplot()
    runs = baseline_first(results["runs"])
    base = _representative(runs[0])
    ops = [op for op in base if not op.startswith("fio_")]   # noise: see the table
    metrics = [(lambda row: row["min"], runs[0]["metric"])]
    if all("est_cycles" in r for run in runs for r in run["rows"]):
        metrics += [(lambda row, k=k: row["est_cycles"][k], f"estimated cycles, {k}")
                    for k in ESTIMATES]
    fig, axes = plt.subplots(len(metrics), 1, figsize=(12, 4.5 * len(metrics)), squeeze=False)
    width = 0.8 / max(1, len(runs) - 1)
    for ax, (value, label) in zip(axes[:, 0], metrics):
        for i, run in enumerate(runs[1:]):
            rep = _representative(run)
            ax.bar([x + i * width for x in range(len(ops))],
                   [_change(value(rep[o]), value(base[o])) if o in rep else 0 for o in ops],
                   width, label=run["config"])
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_ylabel(f"% change vs Linux\n({label})")
        ax.set_xticks([x + width * (len(runs) - 2) / 2 for x in range(len(ops))])
        ax.set_xticklabels([f"{o} {base[o]['size']}" if base[o]["size"] else o for o in ops],
                           fontsize=8, rotation=30, ha="right")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0, 0].set_title("Cost per operation against stock Linux (lower is better)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

    sized = [op for op in SIZED if op in base]
    if not sized:
        return
    fig, axes = plt.subplots(1, len(sized), figsize=(4 * len(sized), 3.6), squeeze=False)
    by_base = _by_key(runs[0])
    for ax, op in zip(axes[0], sized):
        for run in runs[1:]:
            rows = [r for r in run["rows"] if r["op"] == op and (op, r["size"]) in by_base]
            ax.plot([r["size"] for r in rows],
                    [_change(r["min"], by_base[(op, r["size"])]["min"]) for r in rows],
                    label=run["config"], linewidth=1.2)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_title(f"{op}: Linux = 0")
        ax.set_xlabel("bytes")
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel(f"% change vs Linux\n({runs[0]['metric']})")
    axes[0, -1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path.with_name("sizes.png"), dpi=110)
    plt.close(fig)
