"""The two kernels share source and config; a new program only relinks vmlinux."""
import io
import re

from ukl import api
from ukl.build import kernel
from ukl.layout import LOGS



def test_configs_differ_only_in_ukl_options(runs):
    runs("hello"), runs("hello", "baseline")      # both kernels exist
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


def test_programs_with_one_name_get_their_own_kernels(tmp_path, runs):
    """Two `lua`s from two directories, built A, B, A in one process: A gets A's kernel."""
    runs("hello")
    built = {}
    for which in ("first", "second"):
        src = tmp_path / which / "lua.c"
        src.parent.mkdir()
        src.write_text(f'#include <stdio.h>\nint main(void) {{ puts("{which}"); return 0; }}\n')
        built[which] = api.build(str(src))
    again = api.build(str(tmp_path / "first" / "lua.c"))
    assert built["first"].kernel != built["second"].kernel
    assert again.kernel == built["first"].kernel
    for b, want in ((again, "first"), (built["second"], "second")):
        buf = io.BytesIO()
        assert api.boot(b, stdout=buf).status == 0
        assert buf.getvalue().decode().strip() == want
