"""Base-model behaviour: UKL matches Linux on 1 and 2 CPUs, except where a test says otherwise."""
import pytest

from cases import BASE_MODEL


@pytest.mark.parametrize("smp", [1, 2])
@pytest.mark.parametrize("program,status", BASE_MODEL)
def test_same_behaviour_as_linux(runs, program, status, smp):
    ukl, base = runs(program, smp=smp), runs(program, "baseline", smp=smp)
    assert base.status == status
    assert ukl.status == status
    assert ukl.stdout == base.stdout


def test_signals_output(runs):
    out = runs("signals").stdout
    assert "raise: SA_SIGINFO handler ran, si_code SI_TKILL" in out
    assert "kill to self: si_code SI_USER" in out
    assert "blocked: pending 1, handler ran 0" in out
    assert "SIGALRM interrupted a busy loop at least 3 times" in out
    assert "handler on the alternate stack: yes" in out
    assert "SIGSEGV handler jumped out of the fault" in out


def test_kernel_pointers_outside_the_image_fault(runs):
    out = runs("kaddr").stdout
    for ok in ("string literal", "static buffer", "into a global:"):
        assert any(ok in line and line.endswith(" ok") for line in out.splitlines()), ok
    for bad in ("from kernel memory", "into kernel memory", "kernel-memory path"):
        lines = [line for line in out.splitlines() if bad in line]
        assert lines and all(line.endswith("Bad address") for line in lines), bad


def test_the_program_s_references_to_the_kernel_are_where_kallsyms_says(runs):
    """Boot moves them by the KASLR offset, 0 here (see test_mitigations)."""
    result = runs("kaslr")
    assert result.status == 0, result.stdout
    assert result.stdout.count("the kernel's") == 2, result.stdout


def test_the_c_library_keeps_no_kernel_text_address_in_writable_memory(runs):
    """musl calls the kernel's clock reader directly, not through a stored pointer."""
    result = runs("kernelwords")
    assert result.status == 0, result.stdout
    assert "kernel text addresses in writable memory: 0" in result.stdout, result.stdout


def test_exec_randomises_the_stack_top(runs):
    assert "stack top randomised: yes" in runs("memory").stdout


def test_exit_runs_atexit_and_flushes(runs):
    out = runs("atexit").stdout
    assert out.index("runs first") < out.index("runs last")
    assert "flushed by exit()" in out


def test_children_run_as_ordinary_ring3_processes(runs):
    out = runs("spawn").stdout
    assert "hello from a spawned child\nchild exited with 0\n" in out
    assert "hello from a forked and exec'd child\nchild exited with 0\n" in out
    assert "CPL 3\n" in out and "reading CR0 trapped (SIGSEGV)" in out


def test_stacks_grow_at_ring0(runs):
    assert runs("stack").stdout.splitlines()[:3] == [
        "main stack: 2045 frames of 4 KB",
        "main stack VMA is at least 8 MB: yes",
        "thread stack: 253 frames of 4 KB"]


@pytest.mark.parametrize("smp", [1, 2])
def test_interrupts_never_push_on_the_app_stack(runs, smp):
    """docs/design.md "Stacks": at CPL0 every interrupt arrives on the UKL entry stack."""
    assert runs("stack", smp=smp).stdout.splitlines()[3:] == [
        "timer interrupts while RSP sat 64 bytes above a missing page: at least 5",
        "the 64 bytes below RSP are unchanged: yes",
        "the page below is still not present: yes"]


def test_eight_threads_synchronise(runs):
    assert runs("threads").stdout.splitlines() == [
        "condvar: all 8 threads ready",
        "mutex: counter 80000 (expected 80000)",
        "pthread_exit values sum 280 (expected 280)",
        "TLS initialisers and private copies correct in 8 of 8 threads",
        "TSD destructors ran 8 times",
        "main thread TLS untouched: 1000 unnamed 0",
        "shared futex on a global: ok"]


def test_cancellation_points(runs):
    assert runs("cancel").stdout.splitlines() == [
        "thread blocked in read: cancelled",
        "thread blocked in nanosleep: cancelled",
        "cleanup handlers run: 2",
        "uncancelled read got: data",
        "uncancelled nanosleep returned 0"]


def test_time(runs):
    out = runs("time").stdout
    assert "nanosleep(50 ms) slept at least 50 ms: yes" in out
    assert "CLOCK_MONOTONIC went backwards 0 times in 10000 reads" in out
    assert "gettimeofday within 1 s of CLOCK_REALTIME: yes" in out
    assert "invalid clock: EINVAL" in out


@pytest.mark.parametrize("config", ["ukl", "baseline"])
def test_clock_is_read_without_a_system_call(runs, config):
    """The vDSO (Linux), or its copy in kernel text (UKL): seccomp sees no clock_gettime call."""
    assert runs("time", config).stdout.splitlines()[-1] == (
        "with the system call forbidden: CLOCK_MONOTONIC read, "
        "CLOCK_PROCESS_CPUTIME_ID Operation not permitted")


@pytest.mark.parametrize("smp", [1, 2])
def test_spinning_ukl_code_does_not_starve_a_shell(runs, smp):
    run = runs("corun", smp=smp)
    assert run.status == 0
    lines = run.stdout.splitlines()
    assert lines[:2] == ["ps: /app/corun", "top: /app/corun"], lines
    assert "Name:\tcorun" in lines
    assert any(line.startswith("State:\tR") for line in lines)   # it is running, spinning
    assert lines[-1] == "spun while the shell ran; shell exited with 0"


def test_cxx_runtime(runs):
    assert runs("cxx").stdout.splitlines() == [
        "constructed a static object",
        "vector of 5 squares, sum 55",
        "map: e=2 i=2 k=1 l=2 n=3 r=1 u=2 x=1",
        "constructed a local in frame 1",
        "constructed a local in frame 2",
        "constructed a local in frame 3",
        "destroyed a local in frame 3",
        "destroyed a local in frame 2",
        "destroyed a local in frame 1",
        'caught "thrown three frames down" after reaching depth 3',
        "caught std::out_of_range from the library",
        "destroyed a static object"]
