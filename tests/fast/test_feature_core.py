"""--core: the core pattern and limit before the program; its ELF beside the core."""
from types import SimpleNamespace

from ukl import api
from ukl.guest.features import core


def test_core_sets_the_pattern_and_limit(guest, tmp_path):
    setup = guest(api.Options(out=tmp_path, core=True)).hooks("setup")
    assert "echo /out/core >/proc/sys/kernel/core_pattern" in setup
    assert "ulimit -c unlimited" in setup
    assert "core_pattern" not in guest(api.Options(out=tmp_path)).hooks("setup")


def test_the_program_s_elf_goes_beside_the_core(guest, tmp_path):
    elf = tmp_path / "app.elf"
    elf.write_bytes(b"ELF")
    opts = api.Options(out=tmp_path / "o", core=True)
    (tmp_path / "o").mkdir()
    g = guest(opts, elf=elf)
    core.finish(SimpleNamespace(elf=elf), opts, g.spec)
    assert (tmp_path / "o" / "program").read_bytes() == b"ELF"
