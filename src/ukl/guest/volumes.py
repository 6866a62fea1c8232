"""Host files and directories given to the guest (-v HOSTPATH:GUESTPATH): copied
into its initramfs before the program starts; and what the guest leaves in
/out, brought back (--out HOSTDIR)."""
import tarfile
from pathlib import Path, PurePosixPath

from ..errors import UklError


def parse_volume(spec: str) -> tuple[Path, str]:
    """'HOSTPATH:GUESTPATH' -> (existing host path, absolute guest path)."""
    host, sep, guest = spec.rpartition(":")
    if not sep or not host:
        raise UklError(f"-v {spec}: expected HOSTPATH:GUESTPATH")
    if not guest.startswith("/"):
        raise UklError(f"-v {spec}: the guest path {guest!r} is not absolute")
    path = Path(host).expanduser()
    if not path.exists():
        raise UklError(f"-v {spec}: {host} does not exist")
    return path.resolve(), guest


def check_out_dir(path: Path):
    """--out HOSTDIR: a directory, made if missing; fail before boot otherwise."""
    if path.exists() and not path.is_dir():
        raise UklError(f"--out {path}: not a directory")


def collect(tar: Path, dest: Path) -> list[str]:
    """Unpack the guest's /out (a tar stream) into DEST; return the names.
    Only regular files and directories below DEST are taken."""
    if not tar.exists() or tar.stat().st_size == 0:
        return []
    try:
        with tarfile.open(tar) as t:
            members = [m for m in t.getmembers() if (m.isfile() or m.isdir()) and
                       not PurePosixPath(m.name).is_absolute() and
                       ".." not in PurePosixPath(m.name).parts]
            for m in members:
                m.mode = (m.mode & 0o777) | (0o700 if m.isdir() else 0o600)
            dest.mkdir(parents=True, exist_ok=True)
            t.extractall(dest, members=members)
    except tarfile.TarError as e:
        raise UklError(f"--out {dest}: the guest's /out arrived cut short ({e})") from None
    return [m.name for m in members if m.isfile()]
