"""PostgreSQL's own regression suites for `ukl suite postgres`: the core
schedule (pg_regress) and the isolation schedule (pg_isolation_regress and
isolationtester), from the host, against the postgres recipe in the guest.

Both drivers, and the psql they run, are built for the host from the
recipe's pinned source (a stamped step): the expected output is that
version's psql's.  The core tests' directory is a volume at the same path in
the guest, since those tests have the server read and write files by the
host's paths (COPY).  Each boot starts from a fresh cluster, on a volume,
that trusts every connection, and runs both schedules.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

from .clients import pg_wait
from .. import api
from ..build import fetch, steps
from ..errors import UklError
from ..guest import net
from ..guest.volumes import Volume
from ..layout import OUT
from ..proc import run

PIN = "postgresql-15"
BUILD = OUT / "pg-regress"
PGDATA = "/var/lib/postgresql/data"    # on a volume: the suite outgrows the guest's memory
TIMEOUT = 3600
# schedule -> (its directory in the tree, driver, schedule file)
SCHEDULES = {"core": ("src/test/regress", "pg_regress", "parallel_schedule"),
             "isolation": ("src/test/isolation", "pg_isolation_regress", "isolation_schedule")}
# What CI runs: one test per linked-in library that the core schedule needs
# (after test_setup, which the others build on), and two isolation specs.
CI_TESTS = {"core": ["test_setup", "conversion", "subscription", "plpgsql"],
            "isolation": ["deadlock-simple", "insert-conflict-do-nothing"]}
RESULT = re.compile(r"^(?:test|    ) +(\S+) +\.\.\. (ok|FAILED|failed \(ignored\))", re.M)
AS_SUITE = {"ok": "passed", "FAILED": "failed", "failed (ignored)": "skipped"}


def prepare() -> Path:
    """The drivers, built for the host from the pinned source; return the tree."""
    def make(dest: Path):
        tree = dest / "src"
        shutil.copytree(fetch.unpack(PIN), tree, symlinks=True)
        steps.forget(tree)
        run(["./configure", "--without-readline", "--without-zlib", "--without-icu",
             "--without-llvm", "--disable-nls"], "pg_regress: configure", "pg-regress-1",
            cwd=tree)
        run(["make", "-C", "src/test/regress", "pg_regress"], "pg_regress: make",
            "pg-regress-2", cwd=tree)
        run(["make", "-C", "src/test/isolation", "all"], "isolationtester: make",
            "pg-regress-3", cwd=tree)
        # The tests' expected output is this version's psql's.
        run(["make", "-C", "src/bin/psql", "psql"], "psql: make", "pg-regress-4", cwd=tree)
    steps.stamped(BUILD, steps.key_of(fetch.pin_digest(PIN), "isolation", "psql"), make)
    return BUILD / "src"


def parse(output: str) -> dict[str, str]:
    """pg_regress's report: each test's result as passed, failed or skipped
    (a test the schedule ignores)."""
    return {m.group(1): AS_SUITE[m.group(2)] for m in RESULT.finditer(output)}


def _schedule(tree: Path, schedule: str, config: str, port: int, ci: bool) -> dict:
    subdir, driver, schedule_file = SCHEDULES[schedule]
    tests = tree / subdir
    outdir = tests / f"out-{config}"
    shutil.rmtree(outdir, ignore_errors=True)
    # The server (postgres, uid 999) writes some of the results itself.
    (outdir / "results").mkdir(parents=True)
    for d in (outdir, outdir / "results"):
        d.chmod(0o777)
    env = {**os.environ, "LD_LIBRARY_PATH": str(tree / "src/interfaces/libpq")}
    psql = tree / "src/bin/psql"
    try:
        res = subprocess.run([str(tests / driver), "--host=127.0.0.1", f"--port={port}",
                              "--user=postgres", f"--bindir={psql}", f"--inputdir={tests}",
                              f"--outputdir={outdir}", f"--dlpath={tests}",
                              "--max-concurrent-tests=20",
                              *(CI_TESTS[schedule] if ci
                                else [f"--schedule={tests / schedule_file}"])],
                             cwd=outdir, capture_output=True, text=True, timeout=TIMEOUT,
                             env=env)
    except subprocess.TimeoutExpired:
        return failed_run(config, schedule, f"{driver} timed out after {TIMEOUT}s")
    diffs = outdir / "regression.diffs"
    return {"config": config, "schedule": schedule, "tests": parse(res.stdout),
            "exit_status": res.returncode,
            "log": (diffs.read_text(errors="replace") if diffs.exists() else "")
            + res.stderr}


def failed_run(config: str, schedule: str, why: str) -> dict:
    """A schedule that ran no test: every test is then 'not run' beside Linux."""
    return {"config": config, "schedule": schedule, "tests": {}, "exit_status": None,
            "log": why}


def run_config(tree: Path, config: str, smp: int, ci: bool = False) -> list[dict]:
    """One boot: both schedules (CI: CI_TESTS), one after the other, against a
    fresh cluster."""
    built = api.build("postgres", config)
    data = BUILD / f"data-{config}"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir()
    regress = tree / SCHEDULES["core"][0]
    port = net.free_port()
    opts = api.Options(ports=[(port, 5432)], timeout=2 * TIMEOUT, smp=smp,
                       env=(("POSTGRES_HOST_AUTH_METHOD", "trust"),),
                       volumes=[Volume(regress, str(regress), "rw"), Volume(data, PGDATA, "rw")])
    try:
        with api.Server(built, opts):
            pg_wait(port)
            return [_schedule(tree, s, config, port, ci) for s in SCHEDULES]
    except UklError as e:
        return [failed_run(config, s, str(e)) for s in SCHEDULES]
