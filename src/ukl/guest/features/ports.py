"""-p HOST:GUEST: guest TCP ports published on the host's loopback (through
net.Relay), and one 'ready' line for the host once every one listens (state
0A in /proc/net/tcp)."""
from .. import console, net
from ..options import Option
from ...errors import UklError

ORDER = 80
OPTIONS = [Option("ports", [], ("-p",), parse=net.parse_port, many=True, metavar="HOST:GUEST",
                  help="publish guest TCP port GUEST on the host's 127.0.0.1:HOST (repeatable)",
                  commands=("run", "boot"))]

READINESS = """(for port in {ports}; do
  until grep -q "^ *[0-9]*: [0-9A-F]*:$port [0-9A-F:]* 0A " /proc/net/tcp; do sleep 0.1; done
done; echo {ready} >/dev/$ukl_status) &
"""


def check(opts, config, bind=True):
    hosts = [h for h, _ in opts.ports]
    if len(set(hosts)) != len(hosts):
        raise UklError(f"host port published twice: {sorted(hosts)}")
    if bind:
        net.check_host_ports(hosts)


def contribute(spec, built, opts):
    spec.ports = list(opts.ports)
    if opts.ports:
        spec.hook("setup", "50-ports", READINESS.format(
            ports=" ".join(f"{g:04X}" for _, g in opts.ports), ready=console.READY))
