"""`ukl pg-regress`: pg_regress's report read back, and the table that sets
each configuration's failures beside Linux's."""
from ukl.measure import pgregress

OUTPUT = """\
test tablespace                   ... ok          120 ms
parallel group (20 tests):  boolean char name varchar
     boolean                      ... ok           30 ms
     char                         ... FAILED       31 ms
     random                       ... failed (ignored)       12 ms
test test_setup                   ... FAILED      200 ms
"""


def test_each_tests_result_is_read_from_the_report():
    assert pgregress.parse(OUTPUT) == {"tablespace": "ok", "boolean": "ok", "char": "FAILED",
                                       "random": "failed (ignored)", "test_setup": "FAILED"}


def test_the_table_sets_failures_beside_linuxs():
    linux = pgregress.parse(OUTPUT)
    ukl = dict(linux, boolean="FAILED", test_setup="ok")
    table = pgregress.table({"schedule": "parallel_schedule", "runs": [
        {"config": "baseline", "tests": linux}, {"config": "ukl", "tests": ukl}]})
    assert "| baseline | 5 | 2 | 2 | - |" in table
    assert "| ukl | 5 | 2 | 2 | boolean |" in table
    assert "Linux included: char" in table
