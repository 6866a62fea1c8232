"""The process model: each UKL process owns its data, and only a privileged caller starts one."""
import pytest



@pytest.mark.parametrize("smp", [1, 2])
def test_fork_copies_globals_as_linux_does(runs, smp):
    assert runs("fork", smp=smp).stdout.splitlines() == [
        "child: wrote 2 to its global, stack, heap and mapping",
        "parent: child exited with 42",
        "parent sees stack 1, heap 1, mapping 1",
        "parent sees global 1"]


@pytest.mark.parametrize("smp", [1, 2])
def test_forking_parent_and_children_use_heap_and_globals(runs, smp):
    lines = runs("forkheap", smp=smp).stdout.splitlines()
    assert sorted(lines[:4]) == [f"child {i}: heap and globals are its own" for i in range(1, 5)]
    assert lines[4:] == ["parent: 4 of 4 children exited 0; its own globals intact"]


@pytest.mark.parametrize("smp", [1, 2])
def test_two_instances_have_their_own_globals(runs, smp):
    lines = runs("instances", smp=smp).stdout.splitlines()
    assert sorted(lines[:2]) == ["instance 1: globals kept", "instance 2: globals kept"]
    assert lines[2:] == ["two instances ran at once; 0 failed"]


@pytest.mark.parametrize("smp", [1, 2])
def test_process_shared_mutex_with_musl_locks_contended(runs, smp):
    assert runs("sharedmutex", smp=smp).stdout == "shared mutex: counter 20000 (expected 20000)\n"


@pytest.mark.parametrize("config", ["ukl", "ukl-byp"])
def test_nt_and_df_flags_survive_system_calls(runs, config):
    """The kernel runs with neither (a write's copy would run backwards
    with DF) and the program gets both back, as SYSCALL and SYSRET do."""
    line = "write with DF set: the kernel must copy this line forwards, or what it prints comes out garbled"
    assert runs("ntflag", config).stdout.splitlines()[-4:] == [
        "write with NT set", line,
        f"write with DF set returned {len(line) + 1}; DF still set after it",
        "1001 system calls with NT set succeeded; NT still set after 1001"]


def test_an_ordinary_fault_is_not_a_kernel_failure(runs):
    for config in ("ukl", "baseline"):
        run = runs("gpfault", config)
        assert run.status == 0
        assert "child killed by signal 11" in run.stdout
        assert "general protection fault ip:" in run.console   # logged, and not a failure


def test_only_a_privileged_caller_starts_the_image(runs):
    ukl, base = runs("unpriv"), runs("unpriv", "baseline")
    assert ukl.stdout.splitlines() == ["exec as uid 65534: Operation not permitted",
                                       "as root: this program runs (uid 0)"]
    # The condition: on Linux the same file is an ordinary program anyone may run.
    assert base.stdout.splitlines() == ["started as uid 65534",
                                        "as root: this program runs (uid 0)"]


def test_a_tracer_cannot_change_the_privilege_level(runs):
    ukl, base = runs("ptraceregs"), runs("ptraceregs", "baseline")
    assert ukl.stdout.splitlines() == ["SETREGS with the values read: ok",
                                       "CS changed to 0x33: I/O error",
                                       "EFLAGS.NT set: I/O error",
                                       "EFLAGS.TF set: I/O error",
                                       "child exited with 7"]
    assert base.stdout.splitlines() == ["SETREGS with the values read: ok",
                                        "CS kept at 0x33: ok", "EFLAGS.NT set: ok",
                                        "EFLAGS.TF set: ok", "child exited with 7"]

