"""The console judge over sample kernel consoles: what fails a run and what does not.

Each sample in consoles/ states its verdict in its first line, as syzkaller's
report tests do: `# expect: pass status N` (the run passes with exit status N)
or `# expect: fail FAILURE` (the run fails, and the judge's reason starts with
FAILURE).  The judge reads the console without that line."""
import re
from pathlib import Path

import pytest

from ukl.guest import console, image
from ukl.guest.features import ports

CONSOLES = Path(__file__).with_name("consoles")


def expectation(sample: Path) -> tuple[str, str]:
    """The verdict a sample console states in its first line: ("pass", "status N")
    or ("fail", the failure's prefix)."""
    first = sample.read_text().partition("\n")[0]
    hit = re.fullmatch(r"# expect: (pass) status (\d+)|# expect: (fail) (.+)", first)
    assert hit, f"{sample.name}: first line is not '# expect: pass status N' or '# expect: fail ...'"
    return ("pass", hit.group(2)) if hit.group(1) else ("fail", hit.group(4))


def samples() -> list:
    return [pytest.param(sample, id=sample.stem) for sample in sorted(CONSOLES.glob("*.log"))]


def body(sample: Path) -> str:
    """The console, without the line that states its verdict."""
    return sample.read_text().partition("\n")[2]


@pytest.mark.parametrize("sample", samples())
def test_the_judge_gives_each_sample_its_stated_verdict(sample):
    kind, expected = expectation(sample)
    text = body(sample)
    if kind == "pass":
        status = int(expected)
        assert console.judge(text, f"ready\nstatus {status}\n") == console.Verdict(status, None)
    else:
        verdict = console.judge(text, "ready\nstatus 0\n")
        assert verdict.failure is not None and verdict.failure.startswith(expected), verdict


def test_timeout_and_missing_status():
    clean = body(CONSOLES / "clean.log")
    assert console.judge(clean, "", timed_out=180).failure == "timed out after 180s"
    assert console.judge(clean, "", qemu_exit="qemu exit 1").failure == (
        "guest reported no exit status (qemu exit 1)")
    assert console.judge(clean, "", stopped=True) == console.Verdict(None, None)
    # A kernel failure explains a timeout better than the timeout does.
    panic = body(CONSOLES / "panic.log")
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
    line = "[    0.912345] ukl: unknown option 'fast' ignored"
    assert console.notice(line) == line[15:]
    assert console.notice("[    0.912345] smpboot: CPU0: AMD QEMU TCG CPU") is None
