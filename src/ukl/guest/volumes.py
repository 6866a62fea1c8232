"""Host files and directories given to the guest (-v HOSTPATH:GUESTPATH): copied
into its initramfs before the program starts."""
from pathlib import Path

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
