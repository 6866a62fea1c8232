"""Build the initramfs: busybox, a generated /init, and the program under /app."""
import gzip
import io
import os
import shlex
from pathlib import Path

from . import console
from ..build import fetch

UKL_MAGIC = b"\x7fUKL\n"
GUEST_ENV = {"HOME": "/", "PATH": "/bin", "TERM": "dumb", "UKL_EXAMPLE": "1"}

INIT = """#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox mount -t tmpfs tmpfs /tmp
/bin/busybox --install -s /bin
export PATH=/bin
ip link set lo up
# The kernel has configured eth0 already when given ip=... (as urunc boots it).
grep -qE '(^| )ip=' /proc/cmdline ||
  {{ ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 && ip route add default via 10.0.2.2; }}
mkdir -p /run
{mounts}{services}{readiness}{control}{raw}cd /tmp
echo "ukl: starting {argv0}"
{core}{recorder}sh -c 'echo $$ >{pidfile}; {trace_start}exec "$@"' {argv0} env -i {env} {cmd} </dev/null >/dev/{out} 2>/dev/{err}
status=$?
echo "ukl: {argv0} exited with status $status"
{trace_end}echo "{status_line}" >/dev/{status}
{collect}sync
reboot -f
"""
# With --out: /out exists for the program, and what it holds when the program
# ends goes to the host as a tar stream on the virtio port named OUT_PORT.
OUT_PORT = "ukl.out"
COLLECT = """for port in /sys/class/virtio-ports/*; do
  [ "$(cat $port/name)" = {name} ] && tar -C /out -cf /dev/${{port##*/}} .
done
"""
# With a stop timeout: each line the host writes on the virtio port named
# CONTROL_PORT is a signal's name, sent to the program (whose pid the shell
# that execs it leaves in PIDFILE).  A read before the host has connected
# returns end-of-file, hence the outer loop.
CONTROL_PORT = "ukl.ctl"
PIDFILE = "/run/ukl-program.pid"
CONTROL = """for port in /sys/class/virtio-ports/*; do
  [ "$(cat $port/name)" = {name} ] && while :; do
    while read -r sig; do
      until [ -s {pidfile} ]; do sleep 0.1; done
      kill -s "$sig" "$(cat {pidfile})"
    done </dev/${{port##*/}}
    sleep 1
  done &
done
"""


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


# With --ftrace: function_graph under the given kernel functions, and a stack
# trace at each of their calls (who called them), for the program's process
# and what it starts; the trace goes to /out when it ends.
TRACEFS = "/sys/kernel/tracing"
TRACE_SETUP = """mount -t tracefs tracefs {t}
echo {funcs} >{t}/set_graph_function
for f in {funcs}; do echo "$f:stacktrace" >>{t}/set_ftrace_filter; done
echo 1 >{t}/options/function-fork
"""
TRACE_START = "echo $$ >{t}/set_ftrace_pid; echo function_graph >{t}/current_tracer; "
TRACE_END = """echo 0 >{t}/tracing_on
cat {t}/trace >/out/{name}
"""
TRACE_FILE = "ftrace.txt"
# With --strace: strace (in /bin) runs the program, following its threads
# and children, and writes the trace to its stderr, the program's.
STRACE = ["strace", "-f", "-qq"]
# With --perf: perf (in /bin) records the program's cpu-clock samples with
# call chains into /out; `perf script` then lists them as addresses, which
# the host names (the guest's perf has no ELF reader).  perf starts the shell
# that becomes the program, so that the pidfile, and a stop, name the program.
PERF = ["perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", "/out/perf.data",
        "--"]
PERF_END = "perf script -i /out/perf.data -F comm,ip >/out/perf.script 2>/out/perf.log\n"
# With --core: a crash leaves /out/core.
CORE = """echo /out/core >/proc/sys/kernel/core_pattern
ulimit -c unlimited
"""

# A volume: a host directory shared by QEMU under a 9p tag, mounted before the
# program starts; without it the program must not run (its data would be lost).
MOUNT = """mkdir -p {guest} && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144{ro} {tag} {guest} || {{
  echo "ukl: cannot mount the volume at {guest}" >/dev/{err}; echo "{status_line}" >/dev/{status}; reboot -f
}}
"""
MOUNT_FAILED = 125      # the status then, as `docker run` exits when it cannot start

# Until every port listens (state 0A in /proc/net/tcp), then one line for the host.
READINESS = """(for port in {ports}; do
  until grep -q "^ *[0-9]*: [0-9A-F]*:$port [0-9A-F:]* 0A " /proc/net/tcp; do sleep 0.1; done
done; echo {ready} >/dev/{status}) &
"""
# Users a server may switch to (nginx's workers run as nobody).
PASSWD = b"root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
GROUP = b"root:x:0:\nnogroup:x:65534:\n"


def init_script(argv: list[str], ports=(), services=(), out=False, control=False,
                ftrace=(), core=False, strace=False, mounts=(), one_console=False,
                perf=False) -> str:
    """MOUNTS: (9p tag, guest directory, read-only) for each volume.  With
    ONE_CONSOLE the program's output and status go to the console, for a
    machine with one serial port (as urunc starts it)."""
    out, err, status = ("console",) * 3 if one_console else \
        (console.STDOUT, console.STDERR, console.STATUS)
    raw = "" if one_console else "".join(f"stty -F /dev/{c} raw -echo\n" for c in (out, err))
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in GUEST_ENV.items())
    readiness = READINESS.format(ports=" ".join(f"{p:04X}" for p in ports),
                                 status=status, ready=console.READY) if ports else ""
    started = "".join(f"{shlex.join(cmd)} </dev/null >/dev/null 2>&1 &\n" for cmd in services)
    funcs = shlex.join(ftrace)
    if ftrace:
        started = TRACE_SETUP.format(t=TRACEFS, funcs=funcs) + started
    if out:
        started = "mkdir -m 1777 /out\n" + started
    mounted = "".join(MOUNT.format(tag=tag, guest=shlex.quote(guest), ro=",ro" if ro else "",
                                   err=err, status=status,
                                   status_line=console.STATUS_LINE.format(status=MOUNT_FAILED))
                      for tag, guest, ro in mounts)
    return INIT.format(mounts=mounted, core=CORE if core else "",
                       trace_start=TRACE_START.format(t=TRACEFS) if ftrace else "",
                       trace_end=(TRACE_END.format(t=TRACEFS, name=TRACE_FILE) if ftrace else "")
                       + (PERF_END if perf else ""),
                       collect=COLLECT.format(name=OUT_PORT) if out else "",
                       control=CONTROL.format(name=CONTROL_PORT, pidfile=PIDFILE) if control else "",
                       pidfile=PIDFILE, out=out, err=err, status=status, raw=raw,
                       status_line=console.STATUS_LINE.format(status="$status"),
                       argv0=shlex.quote(argv[0]), env=env,
                       cmd=shlex.join([*STRACE, *argv] if strace else argv),
                       recorder=shlex.join(PERF) + " " if perf else "",
                       readiness=readiness, services=started)


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


def build(dest: Path, program_name: str, program: bytes, args: list[str],
          tools: dict[str, bytes] | None = None, ports=(), files=(), dirs=(),
          services=(), out=False, control=False, ftrace=(), core=False,
          strace=False, mounts=(), one_console=False, perf=False) -> Path:
    """Write <dest>/initramfs.cpio.gz running /app/<program_name> with args.

    TOOLS maps names to ordinary executables installed in /bin; FILES are
    (host path, guest path) pairs copied in, DIRS empty guest directories;
    the guest reports when every TCP port in PORTS listens; SERVICES are
    commands started in the background before the program; with OUT, /out
    is sent to the host when the program ends; with CONTROL, the host may
    signal the program (CONTROL_PORT); FTRACE names kernel functions to
    trace into /out, and with CORE a crash dumps core there (both need OUT);
    with STRACE, /bin/strace (in TOOLS) runs the program, with PERF
    /bin/perf records it into /out (which needs OUT); MOUNTS are
    volumes shared by QEMU, and ONE_CONSOLE is for urunc (init_script)."""
    busybox = fetch.unpack("busybox") / "bin" / "busybox"
    cpio = Cpio()
    made = {"bin", "dev", "proc", "sys", "tmp", "app", "etc"}
    for d in sorted(made):
        cpio.dir(d)
    cpio.chardev("dev/console", 5, 1)
    cpio.file("bin/busybox", busybox.read_bytes())
    cpio.file("etc/passwd", PASSWD, 0o644)
    cpio.file("etc/group", GROUP, 0o644)
    for tool, data in (tools or {}).items():
        cpio.file(f"bin/{tool}", data)
    for guest in dirs:
        _mkdirs(cpio, guest.strip("/"), made)
    for host, guest in files:
        _add_tree(cpio, Path(host), guest, made)
    argv = [f"/app/{program_name}", *args]
    cpio.file("init", init_script(argv, ports, services, out, control, ftrace, core,
                                  strace, mounts, one_console, perf).encode())
    cpio.file(f"app/{program_name}", program)
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / "initramfs.cpio.gz"
    out.write_bytes(cpio.gz())
    return out


def ukl_marker(program_name: str) -> bytes:
    """The file that starts the kernel's linked application (see fs/binfmt_ukl.c)."""
    return UKL_MAGIC + f"linked application: {program_name}\n".encode()
