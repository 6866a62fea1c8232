"""`ukl run --user USER[:GROUP]` (issue 29): the program runs as that user from
before its first constructor, under UKL (whose exec still needs root) and on
Linux alike: its ids, /proc/self/status, and the owner of what it creates on
a volume.  Without --user it is root, as before."""
import os

import pytest

from ukl import oci
from uklcli import ukl


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp", "baseline"])
@pytest.mark.parametrize("user,uid,gid", [("nobody", 65534, 65534), ("1000:nogroup", 1000, 65534)])
def test_the_program_runs_as_the_user(tmp_path, config, user, uid, gid):
    os.chmod(tmp_path, 0o777)
    res = ukl("run", "--config", config, "--user", user, "-v", f"{tmp_path}:/data",
              "whoami", "--", "/data")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout == (f"uid {uid} euid {uid} gid {gid} egid {gid} groups {gid}\n"
                          f"Uid:\t{uid}\t{uid}\t{uid}\t{uid}\n"
                          f"Gid:\t{gid}\t{gid}\t{gid}\t{gid}\n"
                          f"created a file owned by {uid}:{gid}\n")
    st = (tmp_path / "made-by-whoami").stat()
    assert (st.st_uid, st.st_gid) == (uid, gid)


def test_without_user_the_program_is_root():
    res = ukl("run", "--config", "ukl-ret-byp", "whoami")
    assert res.returncode == 0 and res.stdout.startswith("uid 0 euid 0 gid 0 egid 0 groups\n")


def test_an_oci_image_records_its_user(tmp_path):
    res = ukl("oci", "--user", "nobody", "whoami", "-o", str(tmp_path / "image"))
    assert res.returncode == 0, res.stderr[-2000:]
    _, config, _ = oci.read_layout(tmp_path / "image")
    assert config["config"]["User"] == "nobody"
