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


@pytest.mark.parametrize("config", ["ukl", "ukl-byp", "ukl-ret-byp"])
def test_sse_registers_survive_a_call_that_slept(runs, config):
    """On one CPU the child fills xmm7 while the parent sleeps in read(); the
    bypass loads the parent's registers back without the full exit.  Without
    that load, xmm7 was kept across 1 of the 20 reads."""
    assert runs("fpusleep", config).stdout == (
        "20 reads slept while another process used xmm7; xmm7 kept across 20\n")


def test_an_ordinary_fault_is_not_a_kernel_failure(runs):
    for config in ("ukl", "baseline"):
        run = runs("gpfault", config)
        assert run.status == 0
        assert "child killed by signal 11" in run.stdout
        assert "general protection fault ip:" in run.console   # logged, and not a failure


def cpl3_faults(config: str) -> list[str]:
    """What tests/programs/cpl3fault.c prints on x86-64 Linux without IA32
    emulation.  An `int $N` to a gate the program may not use is a #GP whose
    error code is the IDT bit and N as the selector index, (N << 3) | 2, as
    the SDM defines it (not checked on hardware here) and a UKL kernel gives
    it; QEMU's TCG, under which stock Linux runs here, gives (N << 4) | 2.  `int $4` is a trap: reported after it."""
    shift = 4 if config == "baseline" else 3
    gp = [("int $0x80", 0x80), ("int $0x21", 0x21), ("int $0", 0), ("int $0xff", 0xff)]
    lines = {insn: f"SIGSEGV code=128 addr=0 trapno=13 err={(n << shift) | 2:#x} ip=insn"
             for insn, n in gp}
    lines["int $4"] = "SIGSEGV code=128 addr=0 trapno=4 err=0 ip=next"
    for insn in ("hlt", "rdmsr", "wrmsr", "mov %%rax,%%cr4", "lidt (%%rax)"):
        lines[insn] = "SIGSEGV code=128 addr=0 trapno=13 err=0 ip=insn"
    lines["ud2"] = "SIGILL code=2 addr=insn trapno=6 err=0 ip=insn"
    order = ["int $0x80", "int $0x21", "int $4", "int $0", "int $0xff", "hlt", "rdmsr",
             "wrmsr", "mov %%rax,%%cr4", "lidt (%%rax)", "ud2"]
    return [f"{insn:<14} {lines[insn]}" for insn in order] + ["the program goes on"]


@pytest.mark.parametrize("config", ["baseline", "ukl", "ukl-ret-byp"])
def test_what_faults_at_cpl3_raises_linuxs_signal(runs, config):
    """`int $N` and privileged instructions link, and raise the SIGSEGV, trap
    number and error code that Linux gives; before, ukl-cc refused to link
    them (and at CPL0 they would act)."""
    run = runs("cpl3fault", config)
    assert (run.status, run.stdout.splitlines()) == (0, cpl3_faults(config)), run.stderr
    assert "WARNING" not in run.console and "Oops" not in run.console


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

