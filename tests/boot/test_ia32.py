"""A UKL kernel with IA32 emulation (both kernels have it; their guests boot
with ia32_emulation=on here): 32-bit programs run beside a UKL program,
execute it and trace it, and the kernel keeps seeing the program as 64-bit
code at CPL0."""
import io
import subprocess

import pytest

from ukl import api
from ukl.layout import TEST_PROGRAMS


@pytest.fixture(scope="module")
def compat32(tmp_path_factory) -> bytes:
    out = tmp_path_factory.mktemp("compat32") / "compat32"
    subprocess.run(["gcc", "-m32", "-static", "-nostdlib", "-ffreestanding", "-fno-pic",
                    "-fno-stack-protector", "-O2", "-o", out, TEST_PROGRAMS / "compat32.c"],
                   check=True)
    return out.read_bytes()


def boot(config: str, tools: dict) -> list[str]:
    out = io.BytesIO()
    res = api.boot(api.build("ia32", config),
                   api.Options(kernel_args=("ia32_emulation=on",), tools=tools), stdout=out)
    console = res.console.read_text(errors="replace")
    assert res.status == 0 and "Oops" not in console and "WARNING" not in console, console
    return out.getvalue().decode().splitlines()


LINUX = ["this program: CPL3",
         "32-bit program, CS: 0x23",
         "/bin/compat32 run: exit 0",
         "exec, executed by a 32-bit program: CPL3",
         "/bin/compat32 exec: exit 0",
         "tracee stopped, status: 0x57f",
         "poke CS 0x23: 0x0",
         "poke the trap flag: 0x0",
         "tracee ended, status: 0x9",
         "/bin/compat32 trace: exit 0",
         "regset: 216 bytes (64-bit: 216)",
         "int $0x80: the pid",
         "32-bit rt_sigaction: not tried at CPL3"]


@pytest.mark.parametrize("config", ["baseline", "ukl", "ukl-ret-byp"])
def test_32_bit_programs_run_beside_a_ukl_program(compat32, config):
    got = boot(config, {"compat32": compat32})
    if config == "baseline":
        assert got == LINUX
        return
    # Under UKL: the program runs at CPL0, also when a 32-bit system call
    # executed it; a 32-bit tracer changes neither its CS nor its trap
    # flag (putreg32, as putreg for a 64-bit tracer); a 64-bit tracer reads
    # its registers as 64-bit ones (user_64bit_mode() counts its __KERNEL_CS);
    # its own int $0x80 (ukl-cc's stand-in) is a 32-bit system call, as on Linux.
    ukl = [line.replace("CPL3", "CPL0") for line in LINUX]
    ukl[ukl.index("poke CS 0x23: 0x0")] = "poke CS 0x23: -5"
    ukl[ukl.index("poke the trap flag: 0x0")] = "poke the trap flag: -5"
    # A handler a 32-bit rt_sigaction installed runs as 64-bit code at CPL0
    # (before: entered as 32-bit code at CPL3, where it faulted), and a
    # 32-bit sigreturn, which would load 32-bit or CPL3 selectors, is refused.
    ukl[-1:] = ["32-bit rt_sigaction: the handler ran at CPL0",
                "32-bit sigreturn: killed by signal 11"]
    assert got == ukl
