"""Base-model behaviour (signals, memory, pointers, exit, spawn, TLS, co-running): UKL matches Linux on 1 and 2 CPUs."""
import pytest

PROGRAMS = [("signals", 0), ("memory", 0), ("kaddr", 0), ("atexit", 7), ("spawn", 0), ("tls", 0)]


@pytest.mark.parametrize("smp", [1, 2])
@pytest.mark.parametrize("program,status", PROGRAMS)
def test_same_behaviour_as_linux(runs, program, status, smp):
    ukl, base = runs(program, smp=smp), runs(program, baseline=True, smp=smp)
    assert base.status == status
    assert ukl.status == status
    assert ukl.stdout == base.stdout


def test_signals_output(runs):
    out = runs("signals").stdout
    assert "raise: SA_SIGINFO handler ran, si_code SI_TKILL" in out
    assert "kill to self: si_code SI_USER" in out
    assert "blocked: pending 1, handler ran 0" in out
    assert "SIGALRM interrupted a busy loop 3 times" in out
    assert "handler on the alternate stack: yes" in out
    assert "SIGSEGV handler jumped out of the fault" in out


def test_kernel_pointers_outside_the_image_fault(runs):
    out = runs("kaddr").stdout
    for ok in ("string literal", "static buffer", "into a global:"):
        assert any(ok in line and line.endswith(" ok") for line in out.splitlines()), ok
    for bad in ("from kernel memory", "into kernel memory", "kernel-memory path"):
        lines = [line for line in out.splitlines() if bad in line]
        assert lines and all(line.endswith("Bad address") for line in lines), bad


def test_exit_runs_atexit_and_flushes(runs):
    out = runs("atexit").stdout
    assert out.index("runs first") < out.index("runs last")
    assert "flushed by exit()" in out


def test_spawned_child_runs(runs):
    assert "hello from a spawned child\nchild exited with 0\n" in runs("spawn").stdout


@pytest.mark.parametrize("smp", [1, 2])
def test_spinning_ukl_code_does_not_starve_a_shell(runs, smp):
    run = runs("corun", smp=smp)
    assert run.status == 0
    lines = run.stdout.splitlines()
    assert lines[:2] == ["ps: /app/corun", "top: /app/corun"], lines
    assert "Name:\tcorun" in lines
    assert any(line.startswith("State:\tR") for line in lines)   # it is running, spinning
    assert lines[-1] == "spun while the shell ran; shell exited with 0"
