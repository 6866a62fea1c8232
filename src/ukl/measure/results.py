"""The one writer of measurement results: every benchmark (and the profiler)
validates its configurations here, puts stock Linux first, and writes
results.json, table.md and plot.png into a new directory under out/bench/."""
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Callable

from .. import api, configs
from ..build import kernel
from ..errors import UklError
from ..layout import OUT, ROOT

BENCH_DIR = OUT / "bench"


def config_names(names: list[str], default: list[str]) -> list[str]:
    """Checked configuration names (an unknown one fails here, before any build),
    with stock Linux, the reference, first."""
    names = names or default
    for name in names:
        configs.get(name)
    return ["baseline", *(c for c in dict.fromkeys(names) if c != "baseline")]


def baseline_first(runs: list[dict]) -> list[dict]:
    """The runs with stock Linux first: every ratio is relative to it."""
    return sorted(runs, key=lambda r: r["config"] != "baseline")


def built_kernel(built: "api.Built") -> dict:
    """What a run booted: the kernel flavor, its requested options as built, its arguments."""
    values = kernel.config_values(built.config.kernel)
    return {"kernel": built.config.kernel,
            "kernel_config": {k: values.get(k, "n")
                              for k in kernel.requested_options(built.config.kernel)},
            "kernel_args": built.config.kernel_args()}


def git_rev() -> str:
    res = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                         text=True)
    return res.stdout.strip() or "unknown"


def pyplot():
    """matplotlib's pyplot, drawing to files."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UklError("matplotlib is missing: run ./setup.sh") from None
    return plt


def write(prefix: str, results: dict, table: Callable[[dict], str],
          plot: Callable[[dict, Path], None],
          extra: Callable[[dict, Path], None] | None = None) -> Path:
    """out/bench/<prefix><time>/ with every sample, the table, the plot and
    what EXTRA writes, whole or not at all; out/bench/latest points at it.
    Returns the directory."""
    results = {"git": git_rev(), **results}
    stamp = f"{prefix}{time.strftime('%Y%m%d-%H%M%S')}"
    dest = BENCH_DIR / stamp
    tmp = BENCH_DIR / f".{stamp}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        (tmp / "results.json").write_text(json.dumps(results, indent=1) + "\n")
        (tmp / "table.md").write_text(table(results))
        plot(results, tmp / "plot.png")
        if extra:
            extra(results, tmp)
        shutil.rmtree(dest, ignore_errors=True)
        os.rename(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    link = BENCH_DIR / ".latest.tmp"
    link.unlink(missing_ok=True)
    link.symlink_to(stamp)
    os.replace(link, BENCH_DIR / "latest")
    return dest
