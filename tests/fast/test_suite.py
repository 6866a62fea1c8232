"""`ukl suite`: an application's own suite's report read back, and the
table and plot that set each configuration's results beside Linux's."""
import pytest

from ukl.errors import UklError
from ukl.measure import pgregress, suite

OUTPUT = """\
test tablespace                   ... ok          120 ms
parallel group (20 tests):  boolean char name varchar
     boolean                      ... ok           30 ms
     char                         ... FAILED       31 ms
     random                       ... failed (ignored)       12 ms
test test_setup                   ... FAILED      200 ms
"""


def test_each_tests_result_is_read_from_pg_regress_report():
    assert pgregress.parse(OUTPUT) == {"tablespace": "passed", "boolean": "passed",
                                       "char": "failed", "random": "skipped",
                                       "test_setup": "failed"}


def _results():
    linux = pgregress.parse(OUTPUT)
    ukl = dict(linux, boolean="failed", test_setup="passed")
    return {"app": "postgres", "smp": 2, "runs": [
        {"config": "baseline", "schedule": "core", "tests": linux},
        {"config": "baseline", "schedule": "isolation", "tests": {"deadlock": "passed"}},
        {"config": "ukl", "schedule": "core", "tests": ukl},
        {"config": "ukl", "schedule": "isolation", "tests": {"deadlock": "passed"}}]}


def test_the_table_names_each_difference_from_linux():
    table = suite.table(_results())
    assert "| core | baseline | 5 | 2 | 2 | 1 | 0 | - |" in table
    assert "| core | ukl | 5 | 2 | 2 | 1 | 0 | **boolean**, **test_setup** |" in table
    assert "| isolation | ukl | 1 | 1 | 0 | 0 | 0 | - |" in table
    assert "Linux included (core): char" in table
    assert "- **boolean** (core): failed under ukl, passed on Linux" in table


def test_a_test_missing_under_a_configuration_differs():
    results = _results()
    del results["runs"][3]["tests"]["deadlock"]
    assert suite.differences(results) == [
        ("core", "boolean", "ukl", "failed", "passed"),
        ("core", "test_setup", "ukl", "passed", "failed"),
        ("isolation", "deadlock", "ukl", "not run", "passed")]


def test_the_plot_is_drawn(tmp_path):
    suite.plot(_results(), tmp_path / "plot.png")
    assert (tmp_path / "plot.png").stat().st_size > 1000


def test_an_unknown_suite_is_one_error():
    with pytest.raises(UklError, match="no test suite for 'nosuch': known are memcached, postgres, sqlite"):
        suite.main("nosuch", [], 2)


def test_sqlite_files_are_read_and_a_crash_fails_the_running_one():
    from ukl.measure import sqlitesuite
    output = ("ukl-suite: 4 files\nukl-suite: start lock.test\n! lock-1.2 expected: [1]\n"
              "ukl-suite: lock.test failed 1 40\nukl-suite: start wal.test\n"
              "ukl-suite: wal.test passed 0 900\nukl-suite: start select1.test\n"
              "Segmentation fault\n").replace("\n", "\r\n")
    assert sqlitesuite.parse(output, ["lock.test", "wal.test", "select1.test", "x.test"]) == {
        "lock.test": "failed", "wal.test": "passed", "select1.test": "failed",
        "x.test": "not run"}


def test_memcached_files_are_read_and_one_that_never_ended_failed():
    from ukl.measure import memcachedsuite
    output = ("ukl-suite: start getset.t\nok 1\nukl-suite: getset.t passed\n"
              "ukl-suite: start binary-sasl.t\nt/binary-sasl.t .. skipped: no SASL\n"
              "ukl-suite: binary-sasl.t skipped\nukl-suite: start lru.t\nnot ok 3\n"
              "ukl-suite: lru.t failed\nukl-suite: start stats.t\n")
    assert memcachedsuite.parse(output, ["getset.t", "binary-sasl.t", "lru.t", "stats.t",
                                         "x.t"]) == {
        "getset.t": "passed", "binary-sasl.t": "skipped", "lru.t": "failed",
        "stats.t": "failed", "x.t": "not run"}


def test_a_suite_that_ran_nothing_anywhere_is_one_error(monkeypatch):
    class Nothing:
        def prepare():
            return None

        def run_config(_, config, smp, ci):
            return [{"config": config, "schedule": "core", "tests": {"a": "not run"},
                     "log": "postgres did not start"}]
    monkeypatch.setitem(suite.SUITES, "nothing", Nothing)
    with pytest.raises(UklError, match="nothing's suite ran no test: postgres did not start"):
        suite.main("nothing", ["ukl"], 2)
