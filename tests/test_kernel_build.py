"""The two kernels share source and config; a new program only relinks vmlinux."""
import re

import pytest

from ukl import api, kernel
from ukl.layout import LOGS

pytestmark = pytest.mark.boot       # builds kernels and boots guests


def test_configs_differ_only_in_ukl_options(runs):
    runs("hello"), runs("hello", baseline=True)      # both kernels exist
    ukl, base = kernel.config_values("ukl"), kernel.config_values("baseline")
    differing = {k for k in ukl.keys() | base.keys() if ukl.get(k) != base.get(k)}
    assert differing, "the UKL kernel must differ somewhere"
    assert all(k == "CONFIG_UNIKERNEL_LINUX" or k.startswith("CONFIG_UKL_")
               for k in differing), sorted(differing)


def test_relinking_a_program_compiles_no_kernel_code(runs):
    runs("hello")                                    # the kernel is built
    kernel._linked.clear()                           # relink even if linked earlier in the session
    api.build("files")
    api.build("heap")                                # a second relink, after a change of program
    log = (LOGS / "kernel-ukl.log").read_text()
    compiled = re.findall(r"^\s+CC\s+(\S+)", log, re.M)
    # kbuild regenerates the version stamp (build number) on every vmlinux link,
    # and the boot stub embeds the new vmlinux; neither is kernel code.
    kernel_objects = [o for o in compiled if not o.startswith("arch/x86/boot/")
                      and o != "init/version-timestamp.o"]
    assert not kernel_objects, kernel_objects
    assert re.search(r"^\s+LD\s+vmlinux$", log, re.M)
