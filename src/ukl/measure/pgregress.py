"""`ukl pg-regress`: PostgreSQL's own regression suite (pg_regress and the
core schedule) from the host, against the postgres recipe in the guest under
each configuration and under stock Linux, the same build.

pg_regress is built for the host from the recipe's pinned source (a stamped
step).  Its test directory is a volume at the same path in the guest, since
the tests have the server read and write files by the host's paths (COPY).
Each boot starts from a fresh cluster, on a volume, that trusts every connection.  A test
that fails under stock Linux too is not a UKL defect: the table lists them
apart.
"""
import re
import shutil
import subprocess
from pathlib import Path

from .clients import pg_wait
from .results import config_names, write
from .. import api
from ..build import fetch, steps
from ..errors import UklError
from ..guest import net
from ..guest.volumes import Volume
from ..layout import OUT
from ..proc import run

PIN = "postgresql-15"
BUILD = OUT / "pg-regress"
SCHEDULE = "parallel_schedule"
PGDATA = "/var/lib/postgresql/data"    # on a volume: the suite outgrows the guest's memory
PSQL_DIR = Path("/usr/lib/postgresql/15/bin")   # the host's psql, from postgresql-client-15
TIMEOUT = 3600
RESULT = re.compile(r"^(?:test|    ) +(\S+) +\.\.\. (ok|FAILED|failed \(ignored\))", re.M)


def build() -> Path:
    """pg_regress for the host, from the pinned source; return its directory."""
    def make(dest: Path):
        tree = dest / "src"
        shutil.copytree(fetch.unpack(PIN), tree, symlinks=True)
        steps.forget(tree)
        run(["./configure", "--without-readline", "--without-zlib", "--without-icu",
             "--without-llvm", "--disable-nls"], "pg_regress: configure", "pg-regress-1",
            cwd=tree)
        run(["make", "-C", "src/test/regress", "pg_regress"], "pg_regress: make",
            "pg-regress-2", cwd=tree)
    steps.stamped(BUILD, steps.key_of(fetch.pin_digest(PIN)), make)
    return BUILD / "src" / "src" / "test" / "regress"


def parse(output: str) -> dict[str, str]:
    """pg_regress's report: each test's result ('ok', 'FAILED', 'failed (ignored)')."""
    return {m.group(1): m.group(2) for m in RESULT.finditer(output)}


def run_config(regress: Path, config: str) -> dict:
    """One boot: the whole schedule against a fresh cluster."""
    built = api.build("postgres", config)
    outdir, data = regress / f"out-{config}", BUILD / f"data-{config}"
    for d in (outdir, data):
        shutil.rmtree(d, ignore_errors=True)
    data.mkdir()
    # The server (postgres, uid 999) writes some of the results itself.
    (outdir / "results").mkdir(parents=True)
    for d in (outdir, outdir / "results"):
        d.chmod(0o777)
    port = net.free_port()
    opts = api.Options(ports=[(port, 5432)], timeout=TIMEOUT,
                       env=(("POSTGRES_HOST_AUTH_METHOD", "trust"),),
                       volumes=[Volume(regress, str(regress), "rw"), Volume(data, PGDATA, "rw")])
    with api.Server(built, opts):
        pg_wait(port)
        res = subprocess.run([str(regress / "pg_regress"), "--host=127.0.0.1",
                              f"--port={port}", "--user=postgres", f"--bindir={PSQL_DIR}",
                              f"--inputdir={regress}", f"--outputdir={outdir}",
                              f"--dlpath={regress}", f"--schedule={regress / SCHEDULE}",
                              "--max-concurrent-tests=20"],
                             cwd=outdir, capture_output=True, text=True, timeout=TIMEOUT)
    tests = parse(res.stdout)
    if not tests:
        raise UklError(f"pg_regress under {config} ran no test: "
                       f"{(res.stderr or res.stdout).strip()[-300:]}")
    diffs = outdir / "regression.diffs"
    return {"config": config, "tests": tests, "exit_status": res.returncode,
            "diffs": diffs.read_text(errors="replace") if diffs.exists() else ""}


def main(configs: list[str]) -> Path:
    if not (PSQL_DIR / "psql").exists():
        raise UklError(f"pg_regress needs the host's psql in {PSQL_DIR} "
                       f"(postgresql-client-15; run ./setup.sh)")
    names = config_names(configs, ["ukl"])
    regress = build()
    runs = [run_config(regress, c) for c in names]
    return write("pg-regress-", {"schedule": SCHEDULE, "runs": runs}, table, lambda r, p: None,
                 _diffs)


def _failed(run: dict) -> set[str]:
    return {t for t, r in run["tests"].items() if r == "FAILED"}


def table(results: dict) -> str:
    runs = results["runs"]
    on_linux = _failed(runs[0])
    lines = [f"pg_regress, the core schedule ({results['schedule']}), from the host", "",
             "| configuration | tests | passed | failed | failed, not under Linux |",
             "|---|---|---|---|---|"]
    for r in runs:
        failed = _failed(r)
        passed = sum(1 for v in r["tests"].values() if v == "ok")
        lines.append(f"| {r['config']} | {len(r['tests'])} | {passed} | {len(failed)} | "
                     f"{', '.join(sorted(failed - on_linux)) or '-'} |")
    everywhere = set.intersection(*map(_failed, runs))
    lines += ["", f"Failing under every configuration, Linux included: "
                  f"{', '.join(sorted(everywhere)) or 'none'}"]
    return "\n".join(lines) + "\n"


def _diffs(results: dict, dest: Path):
    for r in results["runs"]:
        if r["diffs"]:
            (dest / f"{r['config']}.diffs").write_text(r["diffs"])
