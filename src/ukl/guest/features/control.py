"""Stopping the program as `docker stop` does (qemu.Stop): each line the host
writes on a virtio port is a signal's name, which /init sends to the program
(whose pid the shell that execs it leaves in spec.PIDFILE), or the recipe's
stop_signal instead, as Docker's STOPSIGNAL.  A read before
the host has connected returns end-of-file, hence the outer loop."""
from .out import serial_bus
from ..options import Option, duration
from ..qemu import CONTROL
from ..spec import PIDFILE

ORDER = 60

OPTIONS = [
    Option("stop", None),          # qemu.Stop: the host's SIGTERM and SIGINT for the program
    Option("stop_timeout", 10.0, ("--stop-timeout",), parse=duration("seconds"), metavar="SECONDS",
           help="SIGTERM or SIGINT goes to the program as the same signal; the guest is "
                "killed if it has not exited after this long (default 10), or at a second "
                "signal"),
]

PORT = "ukl.ctl"            # the virtio port's name
LOOP = """for port in /sys/class/virtio-ports/*; do
  [ "$(cat $port/name)" = {name} ] && while :; do
    while read -r sig; do
      until [ -s {pidfile} ]; do sleep 0.1; done
      kill -s {signal} "$(cat {pidfile})"
    done </dev/${{port##*/}}
    sleep 1
  done &
done
"""


def check(opts, config, bind=True):
    pass


def contribute(spec, built, opts):
    if opts.stop is None:
        return
    serial_bus(spec)
    spec.devices += ["-chardev", f"socket,id=uklctl,path={spec.workdir / CONTROL},"
                     "server=on,wait=off",
                     "-device", f"virtserialport,bus=uklser.0,chardev=uklctl,name={PORT}"]
    signal = built.program.run.stop_signal or '"$sig"'
    spec.hook("setup", "60-control", LOOP.format(name=PORT, pidfile=PIDFILE, signal=signal))
