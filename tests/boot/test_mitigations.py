"""UKL code in a kernel with retpolines and return thunks: it takes the
kernel's thunks, and returns to it never use an indirect jump that another
process could train.  CI builds only the plain UKL kernel; these run with
UKL_KERNEL=ukl-mitigated (kernel/configs/mitigations.config), as do the
examples and configuration tests, which then run against that kernel."""
import io
import re

import pytest

from ukl import api, configs
from ukl.build import kernel, programs
from ukl.errors import UklError
from ukl.proc import capture

pytestmark = pytest.mark.skipif(
    configs.ukl_kernel() != "ukl-mitigated",
    reason="needs UKL_KERNEL=ukl-mitigated (CI does not build the mitigated kernel)")

# longjmp's `jmp *56(%rdi)`, in musl's assembly, is the one indirect branch
# that cannot take a thunk: it needs a register, and it has none to spare.
UNTHUNKED = {"__longjmp", "_longjmp", "longjmp"}


def _raw_branches(elf) -> dict[str, list[str]]:
    """Function -> its RETs and indirect JMPs and CALLs, in the program's code."""
    found, func = {}, None
    for line in capture(["objdump", "-d", "--no-show-raw-insn", str(elf)]).splitlines():
        if m := re.match(r"^[0-9a-f]+ <(.+)>:$", line):
            func = m.group(1)
        elif m := re.match(r"^\s+[0-9a-f]+:\t((?:rep[z]? )?ret\S*|(?:jmp|call)\S*\s+\*.*)$",
                           line):
            found.setdefault(func, []).append(m.group(1).strip())
    return found


def test_the_kernel_uses_retpolines_here():
    """The condition for the rest: under TCG the kernel picks retpolines, so
    the returns to UKL code take IRET (X86_FEATURE_RETPOLINE)."""
    run = api.run("hello", "ukl-ret-byp", stdout=io.BytesIO(), stderr=io.BytesIO())
    console = run.console.read_text(errors="replace")
    assert run.status == 0
    assert re.search(r"Spectre V2 : Mitigation: (Retpolines|LFENCE)", console), console


@pytest.mark.parametrize("example", ["signals", "threads", "cancel"])
def test_every_return_and_indirect_branch_takes_the_kernel_s_thunks(example):
    built = api.build(example, "ukl-ret-byp")
    raw = _raw_branches(built.elf)
    assert set(raw) <= UNTHUNKED, raw
    text = capture(["objdump", "-d", str(built.elf)])
    assert "<__x86_return_thunk>" not in text  # resolved to __ukl_return_thunk instead
    assert re.search(r"jmp\s+\S+ <__ukl_return_thunk>", text)
    assert re.search(r"call\s+\S+ <__x86_indirect_thunk_r\w+>", text)


def test_a_program_built_for_the_plain_kernel_is_refused(monkeypatch):
    monkeypatch.setenv("UKL_KERNEL", "ukl")
    obj = programs.build(programs.resolve("hello"), configs.get("ukl"))
    with pytest.raises(UklError, match="compiled without the return thunks of the "
                                       "ukl-mitigated kernel"):
        kernel.link(obj, "hello-plain", "ukl-mitigated")
