"""The machine: CPUs, icount for measurements, plugins, a disk, the
configuration's boot parameter."""
from pathlib import Path

import pytest

from ukl import api
from ukl.errors import UklError


def test_qemu_command_for_measurements(guest):
    g = guest(api.Options(icount=True, plugins=[(Path("/p.so"), ["a=1"]), (Path("/q.so"), [])]))
    argv = g.argv
    assert argv[argv.index("-icount") + 1] == "shift=0"
    assert argv[argv.index("-accel") + 1] == "tcg,thread=single"
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "-plugin"] == ["file=/p.so,a=1",
                                                                           "file=/q.so"]
    assert g.spec.tcg_only and argv[argv.index("-append") + 1].endswith(" norandmaps")


def test_the_configuration_s_options_are_boot_parameters(guest):
    argv = guest(config="ukl-ret-byp").argv
    assert argv[argv.index("-append") + 1] == "console=ttyS0 panic=-1 oops=panic ukl=ret,byp"
    assert not guest().spec.tcg_only


def test_a_disk_is_virtio_blk(guest):
    argv = guest(api.Options(disk=Path("/d.img"))).argv
    assert argv[argv.index("-drive") + 1] == "file=/d.img,if=virtio,format=raw"


def test_guest_memory_is_512_mb_unless_asked(guest):
    assert guest().argv[guest().argv.index("-m") + 1] == "512M"
    argv = guest(api.Options(memory_mb=2048)).argv
    assert argv[argv.index("-m") + 1] == "2048M"


def test_too_little_guest_memory_is_refused():
    with pytest.raises(UklError, match="at least 128 MB, not 64"):
        api.validate(api.Options(memory_mb=64), "ukl")
