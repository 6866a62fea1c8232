"""--data SIZE: an ext4 disk labelled ukl-data, made once on the host and
mounted where the program keeps its data before its setup runs."""
import subprocess

import pytest

from ukl import api
from ukl.errors import UklError
from ukl.guest.features import data
from uklcli import assert_one_line_error, ukl


def test_sizes_are_bytes_or_powers_of_1024_and_at_least_16m():
    assert data.size("1G") == 1 << 30
    assert data.size("512M") == 512 << 20
    assert data.size("64MiB") == 64 << 20
    for bad, error in (("1K", "too small"), ("lots", "expected a size"), ("-1G", "expected")):
        with pytest.raises(UklError, match=error):
            data.size(bad)


def test_the_disk_is_mounted_at_the_recipe_s_data_directory_before_the_setup(guest):
    g = guest(api.Options(data=64 << 20), name="redis",
              program=api.programs.resolve("redis"))
    setup = g.hooks("setup")
    assert "disk=$(findfs LABEL=ukl-data" in setup
    assert 'mount -t ext4 "$disk" /data' in setup
    assert setup.index("findfs") < setup.index("ukl_fail") < len(setup)
    assert f"file={data.disk(g.built)},if=virtio,format=raw" in g.argv
    assert "findfs" not in guest(api.Options()).hooks("setup")


def test_the_disk_is_ext4_labelled_made_once_and_kept(tmp_path, monkeypatch, guest):
    monkeypatch.setattr(data, "OUT", tmp_path)
    g = guest(api.Options(data=16 << 20))
    path = data.disk(g.built)
    data.before_boot(g.spec, g.built, g.opts)
    probe = subprocess.run(["blkid", "-o", "export", str(path)], capture_output=True, text=True)
    assert "TYPE=ext4" in probe.stdout and "LABEL=ukl-data" in probe.stdout
    with open(path, "r+b") as f:          # a file the program left
        f.seek(8 << 20)
        f.write(b"kept")
    data.before_boot(g.spec, g.built, g.opts)
    assert b"kept" in path.read_bytes()[8 << 20:(8 << 20) + 4]
    with pytest.raises(UklError, match="exists with 16777216 bytes"):
        data.before_boot(g.spec, g.built, api.Options(data=32 << 20))


def test_a_bad_size_is_one_line_before_building():
    assert_one_line_error(ukl("run", "redis", "--data", "1K"), "too small for a data disk")
