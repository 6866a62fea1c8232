"""What a program finds at its start, and the GS base: Linux's own tests
(issue 26) found a UKL program's auxiliary vector short of what rseq and
sigaltstack users read, and that a GS base of its own hung the kernel."""
import pytest

from ukl import configs


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_the_auxiliary_vector_is_linuxs_but_the_vdso(runs, config):
    run, base = runs("auxv", config), runs("auxv", "baseline")
    assert base.stdout.endswith("AT_SYSINFO_EHDR: present\n")
    assert run.stdout == base.stdout.replace("EHDR: present", "EHDR: missing")
    assert "missing" not in base.stdout and run.status == 0


@pytest.mark.parametrize("config", ["baseline", "cpl3-on-ukl", *configs.SPECTRUM])
def test_a_ukl_program_has_no_gs_base_of_its_own(runs, config):
    run = runs("gsbase", config)
    ukl = configs.get(config).ukl
    assert run.stdout == (f"ARCH_SET_GS: {'Operation not permitted' if ukl else 'ok'}\n"
                          f"ARCH_GET_GS: ok\nGS base: {'0' if ukl else '0x10000'}\n"
                          "ARCH_GET_FS: ok\nARCH_SET_FS: ok\n")
    assert run.status == 0
