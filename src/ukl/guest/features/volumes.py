"""-v HOSTPATH:GUESTPATH[:rw|:ro]: a directory shared live over virtio-9p and
mounted before the program starts (which must not run without it: its data
would be lost); a file copied into the initramfs (guest/volumes.py parses)."""
import shlex

from .. import console
from ..volumes import mounted

MOUNT_FAILED = 125      # the status then, as `docker run` exits when it cannot start
MOUNT = """mkdir -p {guest} && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144{ro} {tag} {guest} || {{
  echo "ukl: cannot mount the volume at {guest}" >/dev/$ukl_err; echo "{status_line}" >/dev/$ukl_status; reboot -f
}}
"""


def check(opts, config, bind=True):
    pass            # parse_volume checked each when it was made


def contribute(spec, built, opts):
    spec.files += [(v.host, v.guest) for v in opts.volumes if not v.mounted]
    shares = mounted(opts.volumes)
    for tag, v in shares:
        escaped = str(v.host).replace(",", ",,")
        spec.devices += ["-fsdev", f"local,id={tag},path={escaped},security_model=none"
                         + (",readonly=on" if v.mode == "ro" else ""),
                         "-device", f"virtio-9p-pci,fsdev={tag},mount_tag={tag}"]
    if shares:
        spec.hook("setup", "10-volumes", "".join(
            MOUNT.format(tag=tag, guest=shlex.quote(v.guest), ro=",ro" if v.mode == "ro" else "",
                         status_line=console.STATUS_LINE.format(status=MOUNT_FAILED))
            for tag, v in shares))
