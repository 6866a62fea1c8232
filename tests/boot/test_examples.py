"""Each example runs at CPL0 under UKL and at CPL3 on the baseline, with the same results."""
import pytest

from cases import SAME_ON_BOTH


@pytest.mark.parametrize("program,status", SAME_ON_BOTH)
def test_ukl_matches_baseline(runs, program, status):
    ukl, base = runs(program), runs(program, "baseline")
    assert base.status == status
    assert ukl.status == status
    assert ukl.stdout == base.stdout
    assert ukl.stdout.strip(), "the program printed nothing"


def test_hello_argv_environ(runs):
    args = ["one", "two words"]
    ukl, base = runs("hello", args=args), runs("hello", "baseline", args=args)
    assert "argv[2] = two words" in ukl.stdout
    assert "env: TERM=dumb" in ukl.stdout
    assert ukl.stdout == base.stdout


def test_hello_on_two_cpus(runs):
    two = runs("hello", smp=2)
    assert two.status == 3
    assert two.stdout == runs("hello").stdout
    assert "Brought up 1 node, 2 CPUs" in two.console


def test_cpl_is_0_under_ukl(runs):
    out = runs("cpl").stdout
    assert "CPL 0\n" in out
    assert "CR0 = 0x" in out and "PE=1 PG=1" in out   # a ring-0-only read succeeded
    assert "CR4.SMEP = 1, CR4.SMAP = 1" in out       # with SMAP and SMEP enforced
    assert "EFLAGS.AC = 1" in out                    # how the app passes SMAP


def test_cpl_is_3_on_baseline(runs):
    out = runs("cpl", "baseline").stdout
    assert "CPL 3\n" in out
    assert "reading CR0 trapped (SIGSEGV)" in out
    assert "EFLAGS.AC = 0" in out


def test_null_dereference_kills_only_the_process(runs):
    run = runs("nullderef")
    assert run.status == 139
    assert "segfault at 0" in run.console     # the kernel logged a user fault...
    assert "exited with status 139" in run.console   # ...and init carried on
