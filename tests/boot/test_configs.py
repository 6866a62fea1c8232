"""The optimisation spectrum: every configuration runs on the one UKL kernel,
selected at boot, and behaves as Linux does.  Every configuration boots
here; CI runs the examples under ukl-ret-byp (both options at once) on 2
CPUs, and the full matrix, each option alone too, on 1 and 2 CPUs, is
`UKL_MATRIX_CONFIGS=all UKL_MATRIX_SMP=1,2 .venv/bin/pytest tests/boot/test_configs.py`."""
import os
import re

import pytest

from cases import SUITE
from ukl import configs, symbols
from ukl.build import kernel

MATRIX = os.environ.get("UKL_MATRIX_CONFIGS", "ukl-ret-byp").split(",")
OPTIMISED = [c for c in configs.SPECTRUM if c != "ukl" and ("all" in MATRIX or c in MATRIX)]
assert "all" in MATRIX or set(MATRIX) <= set(OPTIMISED), f"UKL_MATRIX_CONFIGS: {MATRIX}"
SMP = [int(n) for n in os.environ.get("UKL_MATRIX_SMP", "2").split(",")]


@pytest.mark.parametrize("smp", SMP)
@pytest.mark.parametrize("config", configs.SPECTRUM)
def test_options_selected_at_boot(runs, config, smp):
    run = runs("ukloptions", config, smp=smp)
    opts = configs.get(config).options
    assert f"opts: byp={int('byp' in opts)} ret={int('ret' in opts)}" in run.stdout
    assert "signals: 1000 sent, 1000 handled, 0 late" in run.stdout   # no delayed work
    assert "switch: ok" in run.stdout                                 # the per-thread call
    assert "seccomp: getppid() = -1, EPERM" in run.stdout            # filters still apply
    assert run.status == 0


def test_options_are_refused_elsewhere(runs):
    out = runs("ukloptions", "baseline").stdout
    assert "opts: none (not a UKL process)" in out
    assert "seccomp: getppid() = -1, EPERM" in out


@pytest.mark.parametrize("smp", SMP)
@pytest.mark.parametrize("config", OPTIMISED)
@pytest.mark.parametrize("program,status", SUITE)
def test_examples_match_linux(runs, config, program, status, smp):
    run, base = runs(program, config, smp=smp), runs(program, "baseline", smp=smp)
    assert run.status == base.status == status
    assert run.stdout == base.stdout


@pytest.mark.parametrize("smp", SMP)
@pytest.mark.parametrize("config", configs.SPECTRUM)
def test_signals_never_land_in_kernel_code(runs, config, smp):
    """docs/design.md: "cli; call __ukl_syscall" leaves no window for a lost cancellation,
    and the optimised paths take signals as the base model does.  The only kernel
    text a signal may interrupt is what runs as the program's own code: the
    speculation thunks of a kernel built with them (UKL_KERNEL=ukl-mitigated)."""
    first, *landed = runs("sigwindow", config, smp=smp).stdout.splitlines()
    count = int(re.fullmatch(r"1000 signals delivered to a thread making system calls; "
                             r"(\d+) interrupted kernel code", first).group(1))
    flavor = configs.get(config).kernel
    if not kernel.thunk_cflags(flavor):
        assert count == 0
    table = symbols.nm(kernel.build_dir(flavor) / "vmlinux") if landed else []
    names = {symbols.locate(table, int(line.split()[1], 16)).split("+")[0] for line in landed}
    assert len(landed) == min(count, 16)
    assert all(re.fullmatch(r"__ukl_(return|indirect)_thunk\w*|__x86_indirect_thunk_\w+"
                            r"|\w+_return_thunk|srso_\w+|retbleed_\w+", n) for n in names), names
