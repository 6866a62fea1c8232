"""--out: /out for the program, sent to the host as a tar on a virtio port
after its status, and unpacked into HOSTDIR."""
import io
import tarfile

from ukl import api
from ukl.guest.features import out


def test_out_is_made_and_sent_after_the_status(guest, tmp_path):
    g = guest(api.Options(out=tmp_path / "o"))
    assert f"file,id=uklout,path={tmp_path / 'run' / out.TAR}" in g.argv
    assert f"virtserialport,bus=uklser.0,chardev=uklout,name={out.PORT}" in g.argv
    assert "mkdir -m 1777 /out" in g.hooks("setup")
    assert "tar -C /out -cf" in g.hooks("exit")
    assert "/out" not in guest().hooks("setup") + guest().hooks("exit")


def test_what_arrives_is_unpacked_on_the_host(guest, tmp_path):
    opts = api.Options(out=tmp_path / "o")
    g = guest(opts)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        info = tarfile.TarInfo("./result.txt")
        info.size = 2
        t.addfile(info, io.BytesIO(b"ok"))
    (g.spec.workdir / out.TAR).write_bytes(buf.getvalue())
    out.finish(None, opts, g.spec)
    assert (tmp_path / "o" / "result.txt").read_bytes() == b"ok"
    out.before_boot(g.spec, None, opts)
    assert not (g.spec.workdir / out.TAR).exists()
