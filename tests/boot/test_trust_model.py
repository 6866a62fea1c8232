"""The trust model (docs/design.md, "Threat model"): what a second user, a
tracer without CAP_SYS_ADMIN and root under lockdown cannot do to a UKL
program, and signal frames that cannot break the kernel.  Every attack runs
as it would in practice: an ordinary process (ukl-intruder, built for Linux,
at CPL3) with its own uid in the guest.  CI runs each on 2 CPUs; all of them
on 1 and 2 with UKL_MATRIX_SMP=1,2."""
import io
import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest

from ukl import api, configs
from ukl.build import kernel
from ukl.guest import qemu
from ukl.guest.volumes import Volume
from ukl.layout import ROOT

from cases import TEST_TOOLS
from uklcli import ukl

SMP = [int(n) for n in os.environ.get("UKL_MATRIX_SMP", "2").split(",")]
ATTACKS = ["mem", "process_vm_writev", "PTRACE_SEIZE"]
REFUSED = {"Permission denied", "Operation not permitted"}


def attempts(stdout: str) -> dict[str, str]:
    """'<comm> <way>: <result>' lines of ukl-intruder, keyed by '<comm> <way>'."""
    lines = [line.split(": ", 1) for line in stdout.splitlines()
             if any(f" {way}: " in line for way in ATTACKS)]
    return dict(lines)


@pytest.mark.parametrize("smp", SMP)
@pytest.mark.parametrize("config", configs.SPECTRUM)
def test_a_second_user_cannot_write_through_an_io_uring_worker(runs, config, smp):
    run = runs("sqpoll", config, smp=smp)
    tried = attempts(run.stdout)
    # The main thread and the SQPOLL worker that shares its memory.
    assert {k.split()[0] for k in tried} == {"sqpoll", "iou-sqp"}
    assert set(tried.values()) <= REFUSED, tried
    assert "rewritten" not in run.stdout
    assert run.status == 0


def test_on_linux_the_same_user_may_write_it(runs):
    # The condition: on Linux all of this is the same user's right.
    run = runs("sqpoll", "baseline", smp=2)
    assert set(attempts(run.stdout).values()) == {"ok"}
    assert "the intruder's choice ran at CPL3" in run.stdout


def root_run(config: str, *kernel_args: str) -> str:
    """sqpoll.c's attacks as root, on a kernel booted with KERNEL_ARGS."""
    opts = api.Options(args=("root",), smp=2, tools=api.guest_tools(TEST_TOOLS),
                       kernel_args=list(kernel_args))
    out = io.BytesIO()
    res = api.boot(api.build("sqpoll", config), opts, stdout=out, stderr=io.BytesIO())
    assert res.status == 0
    return out.getvalue().decode()


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_root_may_control_it_but_not_under_lockdown(config):
    free, locked = root_run(config), root_run(config, "lockdown=integrity")
    assert set(attempts(free).values()) == {"ok"}
    assert "the intruder's choice ran at CPL0" in free
    assert set(attempts(locked).values()) <= REFUSED, locked
    assert "rewritten" not in locked


def test_an_lsm_that_refuses_module_loads_refuses_control():
    # LoadPin enforcing refuses every module load without a file, which is
    # what a write into the program is; the condition, control without it,
    # is the test above.
    pinned = root_run("ukl", "loadpin.enforce=1")
    assert attempts(pinned) and set(attempts(pinned).values()) <= REFUSED, pinned
    assert "rewritten" not in pinned


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_a_tracer_without_cap_sys_admin_does_not_survive_the_exec(runs, config):
    run = runs("tracedexec", config, smp=2)
    lines = run.stdout.splitlines()
    # The tracer and the launcher print in either order.
    assert sorted(lines[:2]) == [
        "exec under a tracer without CAP_SYS_ADMIN: Operation not permitted",
        "tracer without CAP_SYS_ADMIN attaches: ok"]
    assert lines[2:] == ["30 execs raced, 0 UKL programs seized"]


def test_on_linux_the_tracer_keeps_the_exec(runs):
    lines = runs("tracedexec", "baseline", smp=2).stdout.splitlines()
    assert lines[:2] == ["tracer without CAP_SYS_ADMIN attaches: ok",
                         "after the exec, the tracer holds the program"]


@pytest.mark.parametrize("smp", SMP)
@pytest.mark.parametrize("config", configs.SPECTRUM)
def test_handlers_may_set_tf_and_clear_ac_as_on_linux(runs, config, smp):
    run, base = runs("sigflags", config, smp=smp), runs("sigflags", "baseline", smp=smp)
    assert run.stdout == base.stdout == (
        "single-stepping: yes; every trap TRAP_TRACE: yes; TF kept in the context: yes; "
        "stepped through a system call: yes\n"
        "after a handler cleared AC: the program goes on (3)\n")
    assert run.status == 0
    assert "WARNING" not in run.console


# tests/programs/control.c: who may write a UKL program's memory or registers.
# True where the intruder's choice must run, at CPL0.
CONTROL = {
    "root without CAP_SYS_MODULE": False,
    "root": True,
    "a parent as nobody": False,
    "a parent as root without CAP_SYS_MODULE": False,
    "a parent as root": True,
    "a parent as nobody, asked before the exec": False,
    "the holder of a seccomp listener": False,
    "root, modules disabled": False,
    "a parent as root, modules disabled": False,
}


def sections(stdout: str) -> dict[str, list[str]]:
    """The '== who' sections of tests/programs/control.c, each with its lines."""
    got, who = {}, None
    for line in stdout.splitlines():
        if line.startswith("== "):
            who = line[3:]
            got[who] = []
        elif who:
            got[who].append(line)
    return got


def judge_control(stdout: str, allowed: dict[str, bool], cpl: int):
    got = sections(stdout)
    assert list(got) == list(allowed), stdout
    for who, may in allowed.items():
        results = {line.split(": ", 1)[1] for line in got[who] if ": " in line}
        ran = (f"the intruder's choice ran at CPL{cpl}" in got[who]
               or "the intruder zeroed a shared page" in got[who])
        if may:
            assert results == {"ok"} and ran, (who, got[who])
        else:
            assert results and results <= REFUSED and not ran, (who, got[who])


@pytest.mark.parametrize("smp", SMP)
@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_only_what_insmod_needs_controls_a_ukl_program(runs, config, smp):
    run = runs("control", config, smp=smp)
    judge_control(run.stdout, CONTROL, cpl=0)
    assert run.status == 0


def test_on_linux_root_and_the_parent_control_it(runs):
    run = runs("control", "baseline", smp=2)
    judge_control(run.stdout, dict.fromkeys(CONTROL, True), cpl=3)


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_under_lockdown_no_one_controls_a_ukl_program(config, tmp_path):
    # As a user boots it: `ukl run --kernel-arg lockdown=integrity`, the
    # intruder copied into /bin as any file is.
    intruder = tmp_path / "ukl-intruder"
    intruder.write_bytes(api.guest_tools(TEST_TOOLS)["ukl-intruder"])
    intruder.chmod(0o755)
    res = ukl("run", "control", "--config", config, "--smp", "2",
              "--kernel-arg", "lockdown=integrity", "-v", f"{intruder}:/bin/ukl-intruder")
    judge_control(res.stdout, dict.fromkeys(CONTROL, False), cpl=0)
    assert res.returncode == 0, res.stderr


# tests/programs/sharedmem.c: who may write a UKL program's shared memory (N1 of
# the third review).  True where the intruder's choice must run, at CPL0.
SHARED = {
    "root without CAP_SYS_MODULE, through map_files": False,
    "root without CAP_SYS_MODULE, through fd": False,
    "nobody, through /dev/shm": False,
    "nobody, through a file": False,
    "nobody, through SysV shm": False,
    "nobody, truncating a file": False,
    "nobody, mapping a file before the program": False,
    "nobody, holding a file open for writing": False,
    "nobody, pinning a /dev/shm page before the program": False,
    "root, through map_files": True,
    "root, through fd": True,
}


@pytest.mark.parametrize("smp", SMP)
@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_only_what_insmod_needs_writes_a_ukl_programs_shared_memory(runs, config, smp):
    run = runs("sharedmem", config, smp=smp)
    first, _, rest = run.stdout.partition("\n")
    assert first == "a forked child wrote 5 of 5 shared pages"
    judge_control(rest, SHARED, cpl=0)
    assert run.status == 0


def test_on_linux_anyone_the_modes_allow_writes_it(runs):
    run = runs("sharedmem", "baseline", smp=2)
    first, _, rest = run.stdout.partition("\n")
    assert first == "a forked child wrote 5 of 5 shared pages"
    judge_control(rest, dict.fromkeys(SHARED, True), cpl=3)


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_cap_bpf_and_cap_perfmon_choose_no_ukl_programs_results(runs, config):
    # F6-2 of the fourth review: bpf_override_return() on any __x64_sys_*.
    # The agent's program loads and attaches, as on Linux; it does not
    # change what the UKL program's getppid() returns.
    run = runs("bpfoverride", config, smp=2)
    assert run.stdout == "BPF_PROG_LOAD: ok\nattach: ok\ngetppid(): its parent\n"
    assert run.status == 0


def test_on_linux_cap_bpf_and_cap_perfmon_choose_its_results(runs):
    run = runs("bpfoverride", "baseline", smp=2)
    assert run.stdout == ("BPF_PROG_LOAD: ok\nattach: ok\n"
                          "getppid(): 0xffffffff81000000, the intruder's\n")


# 3 boots of this test in about 20 hung (under ukl, under ukl-ret-byp, and
# probably once on Linux): output stopped, both CPUs idle in the one looked
# at.  The cause is not found, so CI leaves it out.
@pytest.mark.skipif(os.environ.get("UKL_BPFTRACE") != "1",
                    reason="set UKL_BPFTRACE=1: a boot hangs now and then, cause not found")
@pytest.mark.parametrize("config", ["baseline", "ukl", "ukl-ret-byp"])
def test_a_controller_counts_its_system_calls_with_debians_bpftrace(config):
    # The supported path: root with CAP_SYS_MODULE (here the program's own
    # child) traces a UKL program with BPF as it traces any process.
    opts = api.Options(smp=2, memory_mb=1024, timeout=600,
                       volumes=[Volume(Path("/usr"), "/usr", "ro")])
    out, err = io.BytesIO(), io.BytesIO()
    res = api.boot(api.build("bpftraced", config), opts, stdout=out, stderr=err)
    assert out.getvalue().decode() == "bpftrace counted 1000 of 1000 getppid() calls\n", \
        err.getvalue().decode()[-3000:]
    assert res.status == 0


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_pti_maps_no_frame_and_no_register_on_the_ukl_entry_stack(config):
    # F6-3: the UKL entry stack is in the cpu_entry_area, which PTI maps
    # for every process.  An ordinary process's kernel-mode interrupts
    # never land there, and what the program's own leave is cleared.
    opts = api.Options(tools=api.guest_tools(TEST_TOOLS), kernel_args=["pti=on"])
    out = io.BytesIO()
    res = api.boot(api.build("entrystack", config), opts, stdout=out, stderr=io.BytesIO())
    assert out.getvalue().decode() == ("page table isolation: on\n"
                                       "kernel-mode frames on the UKL entry stack: 0\n"
                                       "copies of the program's r12 on it: 0\n")
    assert res.status == 0


@pytest.mark.parametrize("config", ["baseline", "ukl", "ukl-ret-byp"])
def test_cap_perfmon_alone_samples_no_ukl_program(runs, config):
    # N6: a uid with CAP_PERFMON alone samples any process on Linux, and
    # finds the secret the program keeps in r12; a UKL program's registers
    # take what its memory takes.
    run = runs("perfread", config, smp=2)
    if config == "baseline":
        assert run.stdout == "perf_event_open: ok\nsamples holding the secret: some\n"
    else:
        assert run.stdout == "perf_event_open: Permission denied\n"
    assert run.status == 0


@pytest.mark.parametrize("config", configs.SPECTRUM)
def test_a_return_to_a_non_canonical_ip_is_sigsegv_as_on_linux(runs, config):
    # N4: at CPL0 the IRET itself would fault, in the kernel.  On the
    # mitigated kernel every configuration returns with IRET:
    # UKL_KERNEL=ukl-mitigated runs this there.
    run, base = runs("badip", config, smp=2), runs("badip", "baseline", smp=2)
    assert run.stdout == base.stdout == (
        "a handler at a non-canonical address: killed by Segmentation fault\n"
        "a handler returning to a non-canonical ip: killed by Segmentation fault\n")
    assert run.status == 0


@pytest.mark.parametrize("smp", SMP)
@pytest.mark.parametrize("config", configs.SPECTRUM)
def test_only_the_gates_fault_is_taken_back_to_its_cli(runs, config, smp):
    run = runs("irqoff", config, smp=smp)
    assert run.stdout == (
        "getppid() with its push faulting: right\n"
        "a store with interrupts off, faulting: done, interrupts still off after it\n")
    assert run.status == 0


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_probes_on_text_the_program_runs_are_refused_and_others_fire(runs, config):
    run = runs("kprobe", config, smp=2)
    assert run.stdout == (
        "kprobe on the clock reader: Invalid argument\n"
        "kprobe inside it (optimizable): Invalid argument\n"
        "kretprobe on it: Invalid argument\n"
        "1000 clock reads and getppid() calls: the getppid probe fired on each\n")
    assert run.status == 0


def test_the_text_stays_kernel_text_across_mprotect_and_clear_refs(runs):
    run, base = runs("textprot", "ukl", smp=2), runs("textprot", "baseline", smp=2)
    # Both kernels track soft-dirty bits (CONFIG_MEM_SOFT_DIRTY), so that
    # clearing them recomputes the mappings' protections.
    soft_dirty = ("clear_refs (soft-dirty): ok\nmadvise(text, MADV_DONTNEED): ok\nf(5) = 16\n"
                  "data soft-dirty: 0, after a write: 1\n")
    assert base.stdout == ("mprotect(text, PROT_READ | PROT_EXEC): ok\nf(5) = 16\n"
                           "mprotect(text, PROT_EXEC): ok\nf(5) = 16\n" + soft_dirty)
    assert run.stdout == ("mprotect(text, PROT_READ | PROT_EXEC): ok\nf(5) = 16\n"
                          "mprotect(text, PROT_EXEC): Permission denied\nf(5) = 16\n"
                          + soft_dirty)
    assert run.status == base.status == 0


def test_a_meltdown_cpu_keeps_page_table_isolation_for_every_other_process():
    # QEMU's default TCG CPU is AMD's (no Meltdown); the same CPU with
    # Intel's vendor string has it, and the kernel turns PTI on.  The UKL
    # program still runs, from the user half, on the kernel's page tables.
    intel = "max,vendor=GenuineIntel"
    seen = {}
    for config, cpu in [("ukl", "max"), ("ukl", intel), ("ukl-ret-byp", intel),
                        ("cpl3-on-ukl", intel)]:
        opts = api.Options(cpu=cpu)
        out = io.BytesIO()
        res = api.boot(api.build("pti", config), opts, stdout=out, stderr=io.BytesIO())
        seen[config, cpu] = (res.status, out.getvalue().decode())
    assert seen == {
        ("ukl", "max"): (0, "meltdown: Not affected\nCPL0 on the kernel page tables\n"),
        ("ukl", intel): (0, "meltdown: Mitigation: PTI\nCPL0 on the kernel page tables\n"),
        ("ukl-ret-byp", intel): (0, "meltdown: Mitigation: PTI\n"
                                    "CPL0 on the kernel page tables\n"),
        ("cpl3-on-ukl", intel): (0, "meltdown: Mitigation: PTI\nCPL3\n")}


class _Lines(io.RawIOBase):
    """A stdout that a test thread can watch while the guest writes it."""

    def __init__(self):
        self.data, self.seen = b"", threading.Event()

    def write(self, b):
        self.data += bytes(b)
        self.seen.set()
        return len(b)


# An uncorrected, action-required data-load error (Intel's SRAR: VAL, UC, EN,
# MISCV, ADDRV, S, AR, MCACOD 0x134) with EIPV and MCIP, and a physical
# address accurate to the page (MISC: address mode 2, LSB 12).
MCE = "mce 0 1 0xbd80000000000134 0x6 {addr} 0x8c"


def inject_machine_check(built, args=()) -> "api.Result | None":
    """Boot BUILT and inject the error on its page; None if the #MC arrived in
    kernel code (a timer interrupt, say), where a panic is right and the
    program's case was not tried."""
    out, result = _Lines(), {}
    opts = api.Options(tuple(args), cpu="max,vendor=GenuineIntel", timeout=300)

    def boot():
        try:
            result["res"] = api.boot(built, opts, stdout=out, stderr=io.BytesIO())
        except Exception as e:      # noqa: BLE001 - judged below, from the console
            result["error"] = e
    thread = threading.Thread(target=boot)
    thread.start()
    deadline = time.monotonic() + 300
    while b"physical address" not in out.data:
        assert thread.is_alive() and time.monotonic() < deadline, (out.data, result)
        out.seen.wait(1)
    addr = re.search(rb"0x[0-9a-f]+", out.data).group().decode()
    qemu.monitor(api.run_dir(built), MCE.format(addr=addr))
    thread.join()
    console = (api.run_dir(built) / "ttyS0.log").read_text(errors="replace")
    if "error" in result and re.search(r"Hardware Error\]: RIP (!INEXACT! )?10:<ffffffff", console):
        return None
    assert "res" in result, result.get("error")       # the kernel did not panic
    return result["res"]


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp", "baseline"])
def test_a_machine_check_in_the_program_kills_it_not_the_machine(config):
    built = api.build("mcheck", config)
    for _ in range(3):
        res = inject_machine_check(built)
        if res:
            break
    else:
        pytest.fail("three machine checks in a row arrived in kernel code")
    assert res.status == 128 + signal.SIGBUS
    assert re.search(r"Memory failure: .* Sending SIGBUS to mcheck",
                     res.console.read_text(errors="replace"))


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_a_machine_check_without_a_valid_ip_never_resumes_the_program(config):
    # The program reads the page with interrupts off, so the kill's
    # self-interrupt waits; returned to the ip the CPU called invalid, it
    # would finish that loop and say so.
    built = api.build("mcheck", config)
    res = inject_machine_check(built, ["irqs-off"])
    assert res, "the machine check arrived in kernel code"
    out = (api.run_dir(built) / "ttyS1.log").read_text(errors="replace")
    assert "went on to their end" not in out, out
    assert res.status == 128 + signal.SIGBUS


@pytest.mark.parametrize("smp", SMP)
@pytest.mark.parametrize("config", ["baseline", "cpl3-on-ukl", *configs.SPECTRUM])
def test_a_call_returns_with_the_flags_and_ip_its_body_left(config, smp, capfd):
    # No system call body changes its caller's ip or flags without asking for
    # the full exit today, so a kprobe in a module plays one (F13): Linux's
    # SYSRET check then takes IRET, and UKL_BYP must return as IRET would.
    built = api.build("retflags", config)
    ko = kernel.module(ROOT / "tests/boot/modules/setflags.c", built.config.kernel)
    opts = api.Options(args=["/setflags.ko"], smp=smp,
                       volumes=[Volume(ko, "/setflags.ko", "copy")])
    out = io.BytesIO()
    res = api.boot(built, opts, stdout=out, stderr=io.BytesIO())
    # And TF (N3): the bypass's POPF would trap in its own code, on the
    # kernel stack; IRET, as on Linux, traps once, after the return.
    assert out.getvalue().decode() == ("getppid(0): ID clear\ngetppid(0x7e57): ID set\n"
                                       "getppid(0x7f57): 1 SIGTRAP after it\n"
                                       "getppid(0x1a57): returned where its body chose\n"), \
        capfd.readouterr().err
    assert res.status == 0
