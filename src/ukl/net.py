"""Publishing guest ports on the host's loopback, and copying host files in."""
import errno
import socket
from pathlib import Path

from .errors import UklError


def _port(text: str, spec: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise UklError(f"-p {spec}: {text!r} is not a TCP port number")
    return int(text)


def parse_port(spec: str) -> tuple[int, int]:
    """'HOST:GUEST' (or 'PORT' for both) -> (host port, guest port)."""
    host, _, guest = spec.partition(":")
    return _port(host, spec), _port(guest or host, spec)


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


def check_host_ports(ports: list[int]):
    """Fail before booting if another process holds a host port."""
    if len(set(ports)) != len(ports):
        raise UklError(f"host port published twice: {sorted(ports)}")
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            # As QEMU binds it: a connection still in TIME_WAIT does not count.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    raise UklError(f"host port {port} is in use") from None
                raise UklError(f"host port {port} cannot be published: {e.strerror}") from None


def free_port() -> int:
    """A host port nothing listens on now (for tests and benchmarks)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
