"""`ukl bench`: LEBench-style costs, UKL and the stock baseline side by side.

The primary metric is deterministic: under `-icount shift=0` one guest
nanosecond is one guest instruction, so lebench's per-operation times are
guest instructions per operation.  Every sample is kept in results.json.
"""
import dataclasses
import io
import json
import os
import subprocess
import time
from pathlib import Path

from . import api, configs, kernel
from .errors import UklError
from .layout import OUT, ROOT

LEBENCH = ROOT / "bench" / "lebench.c"
BENCH_DIR = OUT / "bench"
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


def _git_rev() -> str:
    res = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                         text=True)
    return res.stdout.strip() or "unknown"


def _scratch_disk() -> Path:
    """A fresh, sparse raw image for the fio_* operations (/dev/vda in the guest)."""
    disk = BENCH_DIR / "disk.img"
    disk.parent.mkdir(parents=True, exist_ok=True)
    with open(disk, "wb") as f:
        f.truncate(DISK_MB << 20)
    return disk


def build_config(config: str, program: str = str(LEBENCH)) -> api.Built:
    return api.build(program, config)


def _run_one(config: str, ops: list[str], quick: bool, icount: bool) -> dict:
    built = build_config(config)
    out, err = io.BytesIO(), io.BytesIO()
    args = (["--quick"] if quick else []) + (ops or operations())
    start = time.monotonic()
    res = api.boot(built, api.Options(tuple(args), icount=icount, timeout=1800,
                                      disk=_scratch_disk()), stdout=out, stderr=err)
    if res.status != 0:
        raise UklError(f"lebench on {config} exited with {res.status}: "
                       f"{err.getvalue().decode(errors='replace').strip()[-200:]}")
    rows = [json.loads(line) for line in out.getvalue().decode().splitlines() if line.strip()]
    return {"config": config, "metric": "guest instructions" if icount else "wall ns",
            "rows": rows, "wall_seconds": time.monotonic() - start,
            "qemu": (res.run_dir / "qemu.cmd").read_text().strip(),
            "kernel_config": kernel.requested_options(configs.get(config).kernel),
            "kernel_args": configs.get(config).kernel_args()}


def run(names=None, ops=None, quick=False, icount=True) -> Path:
    """Run lebench on each config; write results.json, table.md, plot.png; return the dir."""
    names = names or ["ukl", "cpl3-on-ukl"]
    ops = ops or []
    _check(names, list(configs.CONFIGS), "configuration")
    _check(ops, operations(), "operation")
    # Always side by side with stock Linux, which is the reference (first) column.
    names = ["baseline", *(c for c in dict.fromkeys(names) if c != "baseline")]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    dest = BENCH_DIR / stamp
    results = {"git": _git_rev(), "quick": quick, "icount": icount,
               "runs": [_run_one(c, ops, quick, icount) for c in names]}
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    (dest / "table.md").write_text(table(results))
    plot(results, dest / "plot.png")
    latest = BENCH_DIR / "latest"
    tmp = BENCH_DIR / ".latest.tmp"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(stamp)
    os.replace(tmp, latest)
    return dest


def _by_key(run: dict) -> dict:
    return {(r["op"], r["size"]): r for r in run["rows"]}


def _baseline_first(results: dict) -> list[dict]:
    """The runs with stock Linux first: every ratio is relative to it."""
    runs = results["runs"]
    return sorted(runs, key=lambda r: r["config"] != "baseline")


def table(results: dict) -> str:
    runs = _baseline_first(results)
    base = _by_key(runs[0])
    others = runs[1:]
    unit = runs[0]["metric"]
    head = ["operation", "size", f"{runs[0]['config']} (min {unit})"]
    for o in others:
        head += [f"{o['config']} (min)", f"{o['config']} vs Linux"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, row in base.items():
        cells = [key[0], str(key[1]), str(row["min"])]
        for o in others:
            other = _by_key(o).get(key)
            if other:
                change = 100.0 * (other["min"] - row["min"]) / row["min"] if row["min"] else 0.0
                cells += [str(other["min"]), f"{change:+.1f}%"]
            else:
                cells += ["-", "-"]
        lines.append("| " + " | ".join(cells) + " |")
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


def plot(results: dict, path: Path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UklError("matplotlib is missing: run ./setup.sh") from None
    runs = _baseline_first(results)
    base = _by_key(runs[0])
    labels = [f"{op}/{size}" if size else op for op, size in base]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(8, len(labels) * 0.25), 8))
    width = 0.8 / len(runs)
    for i, r in enumerate(runs):
        by = _by_key(r)
        ax1.bar([x + i * width for x in range(len(labels))],
                [by.get(k, {"min": 0})["min"] for k in base], width, label=r["config"])
    for r in runs[1:]:
        by = _by_key(r)
        ax2.bar(range(len(labels)),
                [100.0 * (by[k]["min"] - base[k]["min"]) / base[k]["min"]
                 if k in by and base[k]["min"] else 0 for k in base], label=r["config"])
    ax1.set_ylabel(f"cost per op ({runs[0]['metric']})")
    ax1.set_yscale("log")
    ax1.legend()
    ax2.set_ylabel("% change vs Linux")
    ax2.axhline(0, color="black", linewidth=0.5)
    for ax in (ax1, ax2):
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=90, fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
