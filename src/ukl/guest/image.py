"""Build the initramfs from a GuestSpec: busybox, the static /init, and the
program under /app."""
import gzip
import io
import os
from pathlib import Path

from .spec import GuestSpec
from ..build import fetch

INIT = Path(__file__).with_name("init.sh")
INITRAMFS = "initramfs.cpio.gz"     # in the run's directory

UKL_MAGIC = b"\x7fUKL\n"
GUEST_ENV = {"HOME": "/", "PATH": "/bin", "TERM": "dumb"}

class Cpio:
    """Writer for the 'newc' cpio format the kernel unpacks."""

    def __init__(self):
        self.buf, self.ino = io.BytesIO(), 1

    def _entry(self, name: str, mode: int, data: bytes = b"", rdev=(0, 0)):
        fields = [self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1],
                  len(name) + 1, 0]
        self.ino += 1
        self.buf.write(b"070701" + "".join(f"{f:08x}" for f in fields).encode())
        self.buf.write(name.encode() + b"\0")
        self._pad()
        self.buf.write(data)
        self._pad()

    def _pad(self):
        self.buf.write(b"\0" * (-self.buf.tell() % 4))

    def dir(self, name: str):
        self._entry(name, 0o040755)

    def file(self, name: str, data: bytes, mode: int = 0o755):
        self._entry(name, 0o100000 | mode, data)

    def symlink(self, name: str, target: str):
        self._entry(name, 0o120777, target.encode())

    def chardev(self, name: str, major: int, minor: int):
        self._entry(name, 0o020600, rdev=(major, minor))

    def gz(self) -> bytes:
        self._entry("TRAILER!!!", 0)
        return gzip.compress(self.buf.getvalue(), mtime=0)


# Users a server may switch to (nginx's workers run as nobody, or as Debian's
# www-data under Debian's nginx.conf; postgres has the Docker image's ids).
PASSWD = (b"root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
          b"www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\n"
          b"postgres:x:999:999:PostgreSQL:/var/lib/postgresql:/bin/sh\n")
GROUP = b"root:x:0:\nnogroup:x:65534:\nwww-data:x:33:\npostgres:x:999:\n"


def read(initramfs: bytes) -> dict[str, tuple[int, bytes]]:
    """The entries of a gzipped newc archive (as build writes it): name -> (mode, data)."""
    data, files, pos = gzip.decompress(initramfs), {}, 0
    while True:
        fields = [int(data[pos + 6 + 8 * i:pos + 14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = fields[1], fields[6], fields[11]
        name = data[pos + 110:pos + 110 + namesize - 1].decode()
        pos = (pos + 110 + namesize + 3) & ~3
        if name == "TRAILER!!!":
            return files
        files[name] = (mode, data[pos:pos + size])
        pos = (pos + size + 3) & ~3


def _mkdirs(cpio: "Cpio", name: str, made: set):
    """Directory NAME and its parents, each once."""
    parts = name.split("/")
    for i in range(1, len(parts) + 1):
        path = "/".join(parts[:i])
        if path not in made:
            cpio.dir(path)
            made.add(path)


def _add_tree(cpio: "Cpio", host: Path, guest: str, made: set):
    """HOST (a file or a directory, recursively) at GUEST, with its parents."""
    name = guest.strip("/")
    if "/" in name:
        _mkdirs(cpio, name.rsplit("/", 1)[0], made)
    if host.is_symlink():
        cpio.symlink(name, os.readlink(host))
    elif host.is_dir():
        _mkdirs(cpio, name, made)
        for child in sorted(host.iterdir()):
            _add_tree(cpio, child, f"{name}/{child.name}", made)
    else:
        cpio.file(name, host.read_bytes(), host.stat().st_mode & 0o777)


def _contents(tool) -> bytes:
    """A tool's bytes: given, in a file, or from a function that builds it."""
    if callable(tool):
        tool = tool()
    return tool.read_bytes() if isinstance(tool, Path) else tool


def build(dest: Path, spec: GuestSpec) -> Path:
    """Write DEST/initramfs.cpio.gz for SPEC: busybox, the static /init, the
    program under /app, its tools under /bin, its files, and what the
    features put under /etc/ukl for /init."""
    busybox = fetch.unpack("busybox") / "bin" / "busybox"
    cpio = Cpio()
    made = {"bin", "dev", "proc", "sys", "tmp", "run", "app", "etc"}
    for d in sorted(made):
        cpio.dir(d)
    cpio.chardev("dev/console", 5, 1)
    cpio.file("bin/busybox", busybox.read_bytes())
    cpio.file("etc/passwd", PASSWD, 0o644)
    cpio.file("etc/group", GROUP, 0o644)
    for tool, data in spec.tools.items():
        cpio.file(f"bin/{tool}", _contents(data))
    for guest in spec.dirs:
        _mkdirs(cpio, guest.strip("/"), made)
    for host, guest in spec.files:
        _add_tree(cpio, Path(host), guest, made)
    for guest, data in sorted(spec.guest_files().items()):
        _mkdirs(cpio, guest.rsplit("/", 1)[0], made)
        cpio.file(guest, data, 0o644)
    cpio.file("init", INIT.read_bytes())
    cpio.file(f"app/{spec.name}", spec.program)
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / INITRAMFS
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    tmp.write_bytes(cpio.gz())
    tmp.replace(out)
    return out


def ukl_marker(program_name: str) -> bytes:
    """The file that starts the kernel's linked application (see fs/binfmt_ukl.c)."""
    return UKL_MAGIC + f"linked application: {program_name}\n".encode()
