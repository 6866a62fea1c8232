"""`ukl fuzz`: the system-call fuzzer (tests/programs/fuzz.c) as the UKL program
itself, beside stock Linux with the same seed.  Every call must succeed or
fail as on Linux, and the kernel must print no warning.  Stock Linux runs for
the time asked; every other configuration then makes exactly as many calls.
A difference is narrowed down to its first call by replaying the 10000
calls before the first checkpoint that differs."""
import io
import random
import re
from pathlib import Path

from .. import api
from ..errors import UklError
from .results import config_names, pyplot, write

CHECKPOINT = 10000        # as in tests/programs/fuzz.c
DEFAULT_CONFIGS = ["ukl", "ukl-ret-byp"]
SLACK = 300               # seconds beyond the fuzzing time before a guest counts as hung


def _boot(config: str, args: list, smp: int, timeout: float) -> dict:
    out = io.BytesIO()
    built = api.build("fuzz", config)
    try:
        res = api.boot(built, api.Options(args=tuple(str(a) for a in args), smp=smp,
                                          timeout=timeout), stdout=out, stderr=io.BytesIO())
        status, kernel = res.status, None
    except UklError as e:
        status, kernel = None, str(e).split(" [console:")[0]
    return {"config": config, "status": status, "kernel": kernel,
            "stdout": out.getvalue().decode(errors="replace")}


def calls_made(stdout: str) -> int | None:
    m = re.search(r"^calls (\d+) hash", stdout, re.M)
    return int(m.group(1)) if m else None


def first_difference(base: str, other: str) -> int | None:
    """Where to replay from: the start of the first checkpoint window that
    differs, else the last checkpoint both runs reached (0 if none), or None
    if the runs are the same."""
    if base == other:
        return None
    ours, theirs = (re.findall(r"^checkpoint (\d+) (\S+)$", s, re.M) for s in (base, other))
    for (n, a), (_, b) in zip(ours, theirs):
        if a != b:
            return int(n) - CHECKPOINT
    common = min(len(ours), len(theirs))
    return int(ours[common - 1][0]) if common else 0


def _first_call_line(base: str, other: str) -> str:
    theirs = [line for line in base.splitlines() if line.startswith("call ")]
    ours = [line for line in other.splitlines() if line.startswith("call ")]
    for a, b in zip(theirs, ours):
        if a.split(" |")[0] != b.split(" |")[0]:
            return f"Linux: {a}; here: {b}"
    return "the per-call lines agree; the summaries differ"


def measure(seed: int, seconds: float | None = None, calls: int | None = None,
            config_list: list[str] = (), smp: int = 2, progress=print) -> dict:
    """Fuzz with SEED for SECONDS on stock Linux (or exactly CALLS calls),
    then under each configuration with the same calls."""
    names = config_names(list(config_list), DEFAULT_CONFIGS)
    budget = seconds if seconds is not None else 0
    base = _boot("baseline", [seed, "-t", seconds] if seconds is not None else [seed, calls],
                 smp, budget + SLACK)
    n = calls_made(base["stdout"])
    if n is None:
        why = base["kernel"] or base["stdout"][-300:]
        raise UklError(f"the fuzzer did not finish on stock Linux: {why}")
    progress(f"ukl: fuzz seed {seed}: {n} calls on stock Linux")
    runs = [base]
    for config in names[1:]:
        run = _boot(config, [seed, n], smp, budget + SLACK)
        start = first_difference(base["stdout"], run["stdout"]) if not run["kernel"] else None
        run["difference"] = None
        if start is not None:
            window = [_boot(c, [seed, min(n, start + CHECKPOINT), start], smp, SLACK)["stdout"]
                      for c in ("baseline", config)]
            run["difference"] = f"from call {start}: {_first_call_line(*window)}"
        progress(f"ukl: fuzz {config}: " + (run["kernel"] or run["difference"]
                                             or "every call as on Linux"))
        runs.append(run)
    return {"seed": seed, "calls": n, "smp": smp, "runs": runs}


def outcomes(stdout: str) -> dict[str, dict[str, int]]:
    """Per system call, how many calls succeeded ("ok") or failed with each error."""
    found = {}
    for line in stdout.splitlines():
        m = re.match(r"^([a-z0-9_]+):((?: [^:]+? \d+)*)$", line)
        if m and m.group(2):
            pairs = re.findall(r" (.+?) (\d+)(?= |$)", m.group(2))
            found[m.group(1)] = {k: int(v) for k, v in pairs}
    return found


def table(results: dict) -> str:
    lines = [f"# System-call fuzzing: seed {results['seed']}, {results['calls']} calls, "
             f"{results['smp']} CPUs\n",
             "| configuration | result |", "|---|---|"]
    for run in results["runs"]:
        text = ("the reference" if run["config"] == "baseline" else
                run["kernel"] or run["difference"] or "every call as on Linux")
        lines.append(f"| {run['config']} | {text} |")
    base = outcomes(results["runs"][0]["stdout"])
    lines += ["", "## Outcomes on stock Linux, by system call", "",
              "| call | ok | errors |", "|---|---|---|"]
    for call, counts in base.items():
        errors = ", ".join(f"{k} {v}" for k, v in counts.items() if k != "ok")
        lines.append(f"| {call} | {counts.get('ok', 0)} | {errors} |")
    return "\n".join(lines) + "\n"


def plot(results: dict, path: Path):
    plt = pyplot()
    base = outcomes(results["runs"][0]["stdout"])
    calls = list(base)
    ok = [base[c].get("ok", 0) for c in calls]
    fault = [base[c].get("Bad address", 0) for c in calls]
    other = [sum(base[c].values()) - o - f for c, o, f in zip(calls, ok, fault)]
    fig, ax = plt.subplots(figsize=(8, 0.2 * len(calls) + 1.5))
    ys = range(len(calls))
    ax.barh(ys, ok, color="#4caf50", label="succeeded")
    ax.barh(ys, fault, left=ok, color="#d32f2f", label="EFAULT")
    ax.barh(ys, other, left=[o + f for o, f in zip(ok, fault)], color="#9e9e9e",
            label="other errors")
    ax.set_yticks(list(ys), calls, fontsize=6)
    ax.invert_yaxis()
    same = [r["config"] for r in results["runs"][1:] if not (r["kernel"] or r["difference"])]
    ax.set_title(f"seed {results['seed']}: {results['calls']} calls; as on Linux: "
                 f"{', '.join(same) or 'none'}", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(seed: int | None, seconds: float, config_list=(), smp: int = 2) -> Path:
    """The results' directory; a difference or a kernel failure is an error,
    once the results are written."""
    seed = random.randrange(1, 2**63) if seed is None else seed
    results = measure(seed, seconds=seconds, config_list=config_list, smp=smp)
    dest = write("fuzz-", results, table, plot)
    failed = [r["config"] for r in results["runs"][1:] if r["kernel"] or r["difference"]]
    if failed:
        raise UklError(f"seed {seed}: {', '.join(failed)} differ from Linux or failed: "
                       f"see {dest / 'table.md'}")
    return dest
