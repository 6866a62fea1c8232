"""-v HOSTPATH:GUESTPATH[:rw|:ro]: a directory shared live and mounted before
the program starts (which must not run without it: its data would be lost);
a file copied into the initramfs (guest/volumes.py parses).  A missing
directory is made before the boot, not by a dry run.

A read-write directory is virtiofs, served by Debian's virtiofsd with the
guest's page cache write-through (cache=auto, no writeback): a write() is in
the host's file when it returns, fsync is the host's, and MAP_SHARED writable
mappings work, which 9p without its cache cannot give.  A read-only one is
9p, whose readonly=on the host enforces (virtiofsd has no such option).
virtiofsd needs root; without it a read-write volume is 9p too."""
import os
import shlex
from pathlib import Path

from .. import console
from ..daemons import Daemon
from ..options import Option
from ..volumes import Volume, make_missing, mounted, parse_volume
from ...errors import UklError

VIRTIOFSD = Path("/usr/lib/qemu/virtiofsd")     # Debian 12's, from qemu-system-common
MOUNT_FAILED = 125      # the status then, as `docker run` exits when it cannot start
MOUNT = {
    "9p": "mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144{ro} {tag} {guest}",
    "virtiofs": "mount -t virtiofs {tag} {guest}",
}
MOUNT_OR_STOP = """mkdir -p {guest} && {mount} || {{
  echo "ukl: cannot mount the volume at {guest}" >/dev/$ukl_err; echo "{status_line}" >/dev/$ukl_status; reboot -f
}}
"""


ORDER = 40
OPTIONS = [Option("volumes", [], ("-v",), parse=parse_volume, many=True,
                  metavar="HOSTPATH:GUESTPATH[:rw|:ro]",
                  help="mount a host directory in the guest, live, read-write (default) or "
                       "read-only, made if missing; a host file is copied in (repeatable)")]


def transport(v: Volume) -> str:
    return "virtiofs" if v.mode == "rw" and os.geteuid() == 0 else "9p"


def check(opts, config, bind=True):
    # parse_volume checked each volume when it was made
    if any(transport(v) == "virtiofs" for v in opts.volumes if v.mounted) and \
            not os.access(VIRTIOFSD, os.X_OK):
        raise UklError(f"-v: a read-write volume is shared by {VIRTIOFSD}, which is missing "
                       f"(it comes with qemu-system-common; run ./setup.sh)")


def _virtiofsd(tag: str, v: Volume, workdir: Path) -> Daemon:
    source = str(v.host).replace("\\", "\\\\").replace(",", "\\,")
    return Daemon(f"-v {v.host}:{v.guest}",
                  [str(VIRTIOFSD), f"--socket-path={workdir / f'{tag}.sock'}",
                   "-o", f"source={source}", "-o", "cache=auto", "-o", "no_writeback"],
                  workdir / f"{tag}.sock", workdir / f"virtiofsd-{tag}.log")


def _share(tag: str, v: Volume, spec):
    """V's device on QEMU's command line, and for virtiofs its daemon."""
    if transport(v) == "virtiofs":
        daemon = _virtiofsd(tag, v, spec.workdir)
        spec.daemons.append(daemon)
        spec.shared_memory = True
        spec.devices += ["-chardev", f"socket,id={tag},path={daemon.socket}",
                         "-device", f"vhost-user-fs-pci,chardev={tag},tag={tag}"]
        return
    escaped = str(v.host).replace(",", ",,")
    spec.devices += ["-fsdev", f"local,id={tag},path={escaped},security_model=none"
                     + (",readonly=on" if v.mode == "ro" else ""),
                     "-device", f"virtio-9p-pci,fsdev={tag},mount_tag={tag}"]


def before_boot(spec, built, opts):
    make_missing(opts.volumes)


def contribute(spec, built, opts):
    spec.files += [(v.host, v.guest) for v in opts.volumes if not v.mounted]
    shares = mounted(opts.volumes)
    for tag, v in shares:
        _share(tag, v, spec)
    if shares:
        status_line = console.STATUS_LINE.format(status=MOUNT_FAILED)
        spec.hook("setup", "10-volumes", "".join(
            MOUNT_OR_STOP.format(guest=shlex.quote(v.guest), status_line=status_line,
                                 mount=MOUNT[transport(v)].format(
                                     tag=tag, guest=shlex.quote(v.guest),
                                     ro=",ro" if v.mode == "ro" else ""))
            for tag, v in shares))
