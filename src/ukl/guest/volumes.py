"""Host files and directories given to the guest (-v HOSTPATH:GUESTPATH[:MODE]):
a directory is mounted live (virtiofs or 9p, features/volumes.py says which),
read-write (as Docker does) or read-only; a file is copied into the initramfs.
A directory that does not exist is made before the boot, as `docker run -v`
makes it (a dry run makes nothing).
And what the guest leaves in /out, brought back (--out HOSTDIR)."""
import os
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import UklError

MODES = ("rw", "ro")


@dataclass(frozen=True)
class Volume:
    host: Path          # resolved; existing, or a directory to make (make_missing)
    guest: str          # absolute
    mode: str           # "rw" or "ro" (a live mount), or "copy" (a file)

    @property
    def mounted(self) -> bool:
        return self.mode != "copy"


def parse_volume(spec: str) -> Volume:
    """'HOSTPATH:GUESTPATH[:rw|:ro]' -> a Volume.  A directory without a mode
    is mounted read-write; a file can only be copied in (both share directories)."""
    host, sep, guest = spec.rpartition(":")
    mode = None
    if sep and not guest.startswith("/") and ":" in host:
        mode = guest
        host, _, guest = host.rpartition(":")
        if mode not in MODES:
            raise UklError(f"-v {spec}: unknown mode {mode!r}; valid: {', '.join(MODES)}")
    if not sep or not host:
        raise UklError(f"-v {spec}: expected HOSTPATH:GUESTPATH[:rw|:ro]")
    if not guest.startswith("/"):
        raise UklError(f"-v {spec}: the guest path {guest!r} is not absolute")
    path = Path(host).expanduser()
    if not os.path.exists(path):
        _check_makeable(spec, path.resolve())       # made before the boot
    elif not path.is_dir():
        if mode:
            raise UklError(f"-v {spec}: {host} is a file; only directories are mounted "
                           f"(without :{mode} it is copied in)")
        return Volume(path.resolve(), guest, "copy")
    return Volume(path.resolve(), guest, mode or "rw")


def _check_makeable(spec: str, path: Path):
    """PATH, missing, can be made: the nearest thing on its way that exists is
    a directory we may write in.  Nothing is made yet."""
    base = next(p for p in [path, *path.parents] if os.path.lexists(p))
    if not os.path.isdir(base):
        raise UklError(f"-v {spec}: cannot make {path}: {base} is not a directory")
    if not os.access(base, os.W_OK | os.X_OK):
        raise UklError(f"-v {spec}: cannot make {path}: {base} is not writable")


def _owner() -> tuple[int, int] | None:
    """Under sudo, the user who ran it (SUDO_UID, SUDO_GID), who then owns what
    ukl makes for them; None when what ukl makes is its own user's already."""
    uid, gid = os.environ.get("SUDO_UID", ""), os.environ.get("SUDO_GID", "")
    if os.geteuid() != 0 or not uid.isdigit():
        return None
    return int(uid), int(gid) if gid.isdigit() else -1


def make_missing(vols: list[Volume]):
    """Make each mounted volume's missing directory and its missing parents
    (mkdir -p), 0755 less the umask, owned by the user who ran ukl."""
    owner = _owner()
    for _, v in mounted(vols):
        missing = [p for p in [v.host, *v.host.parents] if not os.path.lexists(p)]
        for made in reversed(missing):
            try:
                made.mkdir(mode=0o755)
                if owner:
                    os.chown(made, *owner)
            except OSError as e:
                raise UklError(f"-v {v.host}:{v.guest}: cannot make {made}: "
                               f"{e.strerror}") from None


def mounted(vols: list[Volume]) -> list[tuple[str, Volume]]:
    """The volumes mounted live, each with the tag by which QEMU and the guest's init share it."""
    return [(f"uklvol{i}", v) for i, v in enumerate(v for v in vols if v.mounted)]


def check_out_dir(path: Path):
    """--out HOSTDIR: a directory, made if missing; fail before boot otherwise."""
    if path.exists() and not path.is_dir():
        raise UklError(f"--out {path}: not a directory")
    missing = [p for p in [path.absolute(), *path.absolute().parents] if not p.exists()]
    try:                                    # made and removed again: nothing is left
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError as e:
        raise UklError(f"--out {path}: cannot be written ({e.strerror})") from None
    finally:
        for made in missing:
            if made.exists():
                made.rmdir()


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
    except OSError as e:
        raise UklError(f"--out {dest}: {e.strerror}") from None
    return [m.name for m in members if m.isfile()]
