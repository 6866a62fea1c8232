"""-v: a directory is a 9p share mounted before the program (read-only for
:ro), and /init stops with status 125 if it cannot; a file is copied in."""
from ukl import api
from ukl.guest import volumes


def test_a_mounted_volume_is_a_9p_share_and_a_mount_before_the_program(guest, tmp_path):
    share = tmp_path / "a,b"
    share.mkdir()
    copied = tmp_path / "f.conf"
    copied.write_text("conf")
    vols = [volumes.Volume(share, "/data", "rw"), volumes.Volume(tmp_path, "/conf", "ro"),
            volumes.Volume(copied, "/etc/f.conf", "copy")]
    g = guest(api.Options(volumes=vols))
    argv = g.argv
    assert f"local,id=uklvol0,path={tmp_path}/a,,b,security_model=none" in argv
    assert f"local,id=uklvol1,path={tmp_path},security_model=none,readonly=on" in argv
    assert "virtio-9p-pci,fsdev=uklvol1,mount_tag=uklvol1" in argv
    setup = g.hooks("setup")
    assert "msize=262144 uklvol0 /data ||" in setup
    assert "msize=262144,ro uklvol1 /conf ||" in setup
    assert 'echo "status 125" >/dev/$ukl_status' in setup
    assert g.files["etc/f.conf"][1] == b"conf"
    assert "9p" not in guest().hooks("setup")
