"""--out HOSTDIR: /out exists for the program, and what it holds when the
program ends goes to the host as a tar stream on a virtio port, unpacked
into HOSTDIR (guest/volumes.py checks and collects)."""
from pathlib import Path

from .. import volumes
from ..options import Option

ORDER = 50
OPTIONS = [Option("out", None, ("--out",), parse=Path, metavar="HOSTDIR",
                  help="what the program leaves in the guest's /out is copied here when it "
                       "ends (also after a crash)")]

PORT = "ukl.out"            # the virtio port's name
TAR = "out.tar"             # where it arrives, in the run directory
COLLECT = """for port in /sys/class/virtio-ports/*; do
  [ "$(cat $port/name)" = {name} ] && tar -C /out -cf /dev/${{port##*/}} .
done
"""


def check(opts, config, bind=True):
    if opts.out is not None:
        volumes.check_out_dir(opts.out)


def serial_bus(spec):
    """The virtio-serial bus the host's ports hang on, once."""
    bus = ["-device", "virtio-serial-pci,id=uklser"]
    if "virtio-serial-pci,id=uklser" not in spec.devices:
        spec.devices += bus


def contribute(spec, built, opts):
    if opts.out is None:
        return
    serial_bus(spec)
    tar = spec.workdir / TAR
    spec.devices += ["-chardev", f"file,id=uklout,path={tar}",
                     "-device", f"virtserialport,bus=uklser.0,chardev=uklout,name={PORT}"]
    spec.hook("setup", "20-out", "mkdir -m 1777 /out\n")
    spec.hook("exit", "10-out", COLLECT.format(name=PORT))


def before_boot(spec, built, opts):
    (spec.workdir / TAR).unlink(missing_ok=True)


def finish(built, opts, spec):
    if opts.out is not None:
        volumes.collect(spec.workdir / TAR, opts.out)
