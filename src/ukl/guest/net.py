"""Publishing guest ports on the host's loopback."""
import contextlib
import errno
import socket
import threading
import time
from pathlib import Path

from ..errors import UklError


def _port(text: str, spec: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise UklError(f"-p {spec}: {text!r} is not a TCP port number")
    return int(text)


def parse_port(spec: str) -> tuple[int, int]:
    """'HOST:GUEST' (or 'PORT' for both) -> (host port, guest port)."""
    host, _, guest = spec.partition(":")
    return _port(host, spec), _port(guest or host, spec)


def _bind_error(port: int, e: OSError) -> UklError:
    if e.errno == errno.EADDRINUSE:
        return UklError(f"host port {port} is in use")
    return UklError(f"host port {port} cannot be published: {e.strerror}")


def check_host_ports(ports: list[int]):
    """Fail before booting if another process holds a host port."""
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            # As QEMU binds it: a connection still in TIME_WAIT does not count.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
            except OSError as e:
                raise _bind_error(port, e) from None


def free_port() -> int:
    """A host port nothing listens on now (for tests and benchmarks)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _accept_queue(port: int) -> int:
    """Connections waiting in the accept queue of the host's listener on PORT."""
    local = f"0100007F:{port:04X}"
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        f = line.split()
        if f[1] == local and f[3] == "0A":                     # LISTEN
            return int(f[4].split(":")[1], 16)
    return 0


def _pipe(src: socket.socket, dst: socket.socket):
    try:
        while data := src.recv(65536):
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


class Relay:
    """Published ports, listened on here and handed to QEMU one at a time.

    QEMU's user networking listens for a published port with a backlog of 1.
    When clients connect faster than it accepts (50 at once from
    redis-benchmark on a loaded host), the host kernel drops the handshake's
    last ACK for the overflow, and those clients wait on connections that no
    one ever accepts (seen: 33 of 50, reset after two minutes).  So the
    published port is this relay's, with a full backlog, and each connection
    reaches QEMU's forward on a private port only once QEMU has accepted the
    one before.

    The relay listens from before the guest boots, so a client that connects
    early is held until the guest's server listens (`open()`), not forwarded
    to a guest that would reset it."""

    def __init__(self, ports: list[tuple[int, int]]):
        self.lock, self.listeners, self.forwards = threading.Lock(), [], []
        self.ready, self.closed = threading.Event(), False
        try:
            for host, guest in ports:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                self.listeners.append(s)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    s.bind(("127.0.0.1", host))
                except OSError as e:
                    raise _bind_error(host, e) from None
                s.listen(socket.SOMAXCONN)
                self.forwards.append((free_port(), guest))
        except UklError:
            self.close()
            raise

    def start(self):
        for s, (inner, _) in zip(self.listeners, self.forwards):
            threading.Thread(target=self._accept, args=(s, inner), daemon=True).start()

    def _accept(self, listener: socket.socket, inner: int):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return                                          # closed
            threading.Thread(target=self._connect, args=(client, inner), daemon=True).start()

    def open(self):
        """The guest's servers listen: forward held and new connections."""
        self.ready.set()

    def _connect(self, client: socket.socket, inner: int):
        self.ready.wait()
        if self.closed:
            client.close()
            return
        with self.lock:
            deadline = time.monotonic() + 30
            while _accept_queue(inner) and time.monotonic() < deadline:
                time.sleep(0.005)
            try:
                upstream = socket.create_connection(("127.0.0.1", inner))
            except OSError:
                client.close()
                return
        threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
        _pipe(client, upstream)

    def close(self):
        self.closed = True
        self.ready.set()                    # held clients are closed, not forwarded
        for s in self.listeners:
            s.close()
