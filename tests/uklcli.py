"""Running the `ukl` command as a user does, and what a bad input must print."""
import os
import subprocess
import sys

UKL = [sys.executable, "-m", "ukl.cli"]


def ukl(*args, env=None, cwd=None):
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([*UKL, *args], capture_output=True, text=True, env=full_env, cwd=cwd)


def assert_one_line_error(res, *needles):
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("ukl: error: ") or last.startswith("ukl-cc: error: "), last
    for needle in needles:
        assert needle in last, last
