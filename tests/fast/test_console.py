"""The console judge over sample kernel consoles: what fails a run and what does not."""
from pathlib import Path

import pytest

from ukl.guest import console, image
from ukl.guest.features import ports

CONSOLES = Path(__file__).with_name("consoles")


@pytest.mark.parametrize("log,failure", [
    ("panic", "kernel reported: [    1.204111] Kernel panic - not syncing: Attempted to kill"),
    ("oops", "kernel reported: [    2.332511] Oops: Oops: 0000 [#1] PREEMPT SMP NOPTI"),
    ("warn", "kernel reported: [    3.101655] WARNING: CPU: 0 PID: 57 at arch/x86/kernel/"),
])
def test_kernel_failures_fail_the_run(log, failure):
    verdict = console.judge((CONSOLES / f"{log}.log").read_text(), "status 0\n")
    assert verdict.failure.startswith(failure)


@pytest.mark.parametrize("log,status", [("segfault", 139), ("gpfault", 0), ("clean", 3)])
def test_ordinary_process_faults_are_not_kernel_failures(log, status):
    verdict = console.judge((CONSOLES / f"{log}.log").read_text(), f"ready\nstatus {status}\n")
    assert verdict == console.Verdict(status, None)


def test_timeout_and_missing_status():
    clean = (CONSOLES / "clean.log").read_text()
    assert console.judge(clean, "", timed_out=180).failure == "timed out after 180s"
    assert console.judge(clean, "", qemu_exit="qemu exit 1").failure == (
        "guest reported no exit status (qemu exit 1)")
    assert console.judge(clean, "", stopped=True) == console.Verdict(None, None)
    # A kernel failure explains a timeout better than the timeout does.
    panic = (CONSOLES / "panic.log").read_text()
    assert console.judge(panic, "", timed_out=180).failure.startswith("kernel reported")


def test_init_speaks_the_protocol_the_judge_reads():
    """The lines the guest's init writes are the ones the host parses."""
    init = image.INIT.read_text()
    assert f"ukl_status={console.STATUS}" in init
    assert 'echo "status $status" >/dev/$ukl_status' in init
    readiness = ports.READINESS.format(ports="0050", ready=console.READY)
    assert f"echo {console.READY} >/dev/$ukl_status" in readiness
    assert console.exit_status("ready\nstatus 42\n") == 42
    assert console.is_ready("ready\n") and not console.is_ready("status 0\n")


def test_notices_are_repeated_without_their_timestamp():
    line = ("[    0.912345] ukl: this CPU is affected by Meltdown and a UKL kernel has no page "
            "table isolation: any process can read kernel memory")
    assert console.notice(line) == line[15:]
    assert console.notice("[    0.912345] smpboot: CPU0: AMD QEMU TCG CPU") is None
