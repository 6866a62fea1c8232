"""`ukl run --strace`: Debian's strace, built with `ukl-cc --baseline`, traces
a UKL program as it traces the same program on Linux.  Under ukl-byp the
traced program must take the full system-call path (strace sets syscall
work), so its trace shows every call."""
import io
import re

import pytest

from ukl import api


def _trace(config: str) -> list[str]:
    err = io.BytesIO()
    res = api.boot(api.build("files", config), api.Options(strace=True),
                   stdout=io.BytesIO(), stderr=err)
    assert res.status == 0
    # Addresses differ between the two builds of the program, and its
    # thread ID with how many kernel threads the boot happened to start.
    lines = [re.sub(r"0x[0-9a-f]+", "ADDR", line)
             for line in err.getvalue().decode().splitlines() if not line.startswith("ukl:")]
    return [re.sub(r"^(set_tid_address\(ADDR\) +=) \d+$", r"\1 TID", line) for line in lines]


@pytest.fixture(scope="module")
def linux_trace():
    return _trace("baseline")


def test_the_trace_on_linux_shows_the_program_s_calls(linux_trace):
    assert linux_trace[0].startswith('execve("/app/files", ["/app/files"]')
    assert 'write(3, "hello, tmpfs\\n", 13)          = 13' in linux_trace
    assert linux_trace[-1].startswith("exit_group(0)")


@pytest.mark.parametrize("config", ["ukl", "ukl-byp", "ukl-ret-byp"])
def test_a_ukl_program_s_trace_is_linux_s(linux_trace, config):
    assert _trace(config) == linux_trace
