"""`ukl suite` in CI (issue 40): a few of SQLite's own test files, run by
testfixture as a UKL program with its data on the guest's disk and on a
volume.  wal.test runs testfixture again as a child, so two UKL processes
share the database's locks.  And a few of Memcached's, whose tests start
memcached-debug, the UKL program, themselves.  The full runs, beside
Linux, are `ukl suite sqlite`, `ukl suite memcached` and
`ukl suite postgres` (docs/selftests.md).  SQLite's files take 7 minutes
under TCG, so CI leaves them to `UKL_SUITES=1` (test_volumes.py runs its WAL
mode, two processes and a killed guest)."""
import os

import pytest

from ukl.measure import memcachedsuite, sqlitesuite


@pytest.mark.skipif(os.environ.get("UKL_SUITES") != "1",
                    reason="7 minutes under TCG: UKL_SUITES=1 runs it")
def test_sqlites_own_test_files_pass_as_a_ukl_program():
    runs = sqlitesuite.run_config(None, "ukl-ret-byp", 2, ci=True)
    assert [r["schedule"] for r in runs] == ["disk", "volume"]
    for r in runs:
        assert r["tests"] == {f: "passed" for f in sqlitesuite.CI_FILES}, r["log"][-3000:]
        assert r["exit_status"] == 0


def test_memcacheds_own_tests_start_it_as_a_ukl_program():
    [run] = memcachedsuite.run_config(None, "ukl-ret-byp", 2, ci=True)
    # The file the tests execute is binfmt_ukl's, which nothing else runs.
    assert "ukl-suite: program: UKL\n" in run["log"]
    assert run["tests"] == {f: "passed" for f in memcachedsuite.CI_FILES}, run["log"][-3000:]
    assert run["exit_status"] == 0
