"""`ukl suite APP`: an application's own upstream test suite against the app
as a UKL program under each configuration and, first, against the same
recipe's build on stock Linux.  Each suite module (SUITES) runs its part
of one configuration and returns one run per schedule, every test's result
read from the suite's own report as passed, failed or skipped; here they
are written side by side, and every test whose result differs from Linux
is named in the table and drawn apart in the plot."""
from pathlib import Path

from . import memcachedsuite, pgregress, sqlitesuite
from .results import config_names, pyplot, write
from ..errors import UklError

SUITES = {"memcached": memcachedsuite, "postgres": pgregress, "sqlite": sqlitesuite}
RESULTS = ("passed", "failed", "skipped", "not run")


def main(app: str, configs: list[str], smp: int, ci: bool = False) -> Path:
    if app not in SUITES:
        raise UklError(f"no test suite for {app!r}: known are {', '.join(sorted(SUITES))}")
    suite = SUITES[app]
    names = config_names(configs, ["ukl", "ukl-ret-byp"])
    prepared = suite.prepare()
    runs = [run for c in names for run in suite.run_config(prepared, c, smp, ci)]
    if not any(v != "not run" for r in runs for v in r["tests"].values()):
        raise UklError(f"{app}'s suite ran no test: {runs[0]['log'].strip()[-300:]}")
    return write(f"suite-{app}-", {"app": app, "smp": smp, "ci": ci, "runs": runs}, table,
                 plot, _logs)


def differences(results: dict) -> list[tuple[str, str, str, str, str]]:
    """(schedule, test, config, its result, Linux's) for every test whose
    result under a configuration is not Linux's."""
    linux = {r["schedule"]: r["tests"] for r in results["runs"] if r["config"] == "baseline"}
    out = []
    for r in results["runs"]:
        if r["config"] == "baseline":
            continue
        ref = linux.get(r["schedule"], {})
        for test in sorted(set(ref) | set(r["tests"])):
            got, want = r["tests"].get(test, "not run"), ref.get(test, "not run")
            if got != want:
                out.append((r["schedule"], test, r["config"], got, want))
    return out


def _count(run: dict, result: str) -> int:
    return sum(1 for v in run["tests"].values() if v == result)


def table(results: dict) -> str:
    diffs = differences(results)
    part = "the subset CI runs" if results.get("ci") else "in full"
    lines = [f"{results['app']}'s own test suite, {part}, {results['smp']} CPU(s), "
             f"stock Linux first", "",
             "| schedule | configuration | tests | passed | failed | skipped | not run | "
             "differs from Linux |", "|---|---|---|---|---|---|---|---|"]
    for r in results["runs"]:
        differing = [d[1] for d in diffs if d[0] == r["schedule"] and d[2] == r["config"]]
        lines.append(f"| {r['schedule']} | {r['config']} | {len(r['tests'])} | "
                     + " | ".join(str(_count(r, x)) for x in RESULTS)
                     + f" | {', '.join(f'**{t}**' for t in differing) or '-'} |")
    failing = {}
    for r in results["runs"]:
        failing.setdefault(r["schedule"], []).append(
            {t for t, v in r["tests"].items() if v in ("failed", "not run")})
    lines.append("")
    for schedule, sets in failing.items():
        everywhere = set.intersection(*sets)
        lines.append(f"Failed or not run under every configuration, Linux included "
                     f"({schedule}): "
                     f"{', '.join(sorted(everywhere)) or 'none'}")
    if diffs:
        lines += ["", "Differences from Linux:", ""]
        lines += [f"- **{test}** ({schedule}): {got} under {config}, {want} on Linux"
                  for schedule, test, config, got, want in diffs]
    return "\n".join(lines) + "\n"


def plot(results: dict, path: Path):
    plt = pyplot()
    runs = results["runs"]
    diffs = differences(results)
    labels, passed, failed, differing = [], [], [], []
    for r in runs:
        n = sum(1 for d in diffs if d[0] == r["schedule"] and d[2] == r["config"])
        labels.append(f"{r['schedule']}\n{r['config']}")
        passed.append(_count(r, "passed"))
        failed.append(_count(r, "failed") + _count(r, "not run"))
        differing.append(n)
    fig, ax = plt.subplots(figsize=(2 + 1.2 * len(runs), 4))
    x = range(len(runs))
    ax.bar(x, passed, color="#4caf50", label="passed")
    ax.bar(x, failed, bottom=passed, color="#bdbdbd", label="failed or not run",
           edgecolor=["#d32f2f" if n else "none" for n in differing], linewidth=2)
    for i, n in enumerate(differing):
        ax.annotate(f"{n} differ" if n else "as Linux", (i, passed[i] + failed[i]),
                    ha="center", va="bottom", fontsize=7,
                    color="#d32f2f" if n else "#616161")
    ax.set_xticks(list(x), labels, fontsize=7)
    ax.set_ylabel("tests")
    ax.set_title(f"{results['app']}'s own test suite: how many tests' results differ "
                 f"from Linux's, above each bar", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _logs(results: dict, dest: Path):
    """Each run's own report of what failed (a diff, a log), beside the table."""
    for r in results["runs"]:
        if r.get("log"):
            (dest / f"{r['schedule']}-{r['config']}.log").write_text(r["log"])
