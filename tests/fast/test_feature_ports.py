"""-p: the relay holds the host ports, QEMU forwards the guest ports from
private ones, and the guest says when every port listens."""
from ukl import api
from ukl.guest import console, net


def test_qemu_publishes_ports_on_loopback_only(guest):
    g = guest(api.Options(smp=2, ports=[(net.free_port(), 6379), (net.free_port(), 80)]))
    relay = net.Relay(g.spec.ports)
    try:
        g.machine.relay = relay
        argv = g.argv
    finally:
        relay.close()
    (redis, _), (http, _) = relay.forwards
    netdev = argv[argv.index("-netdev") + 1]
    assert netdev == (f"user,id=net0,hostfwd=tcp:127.0.0.1:{redis}-:6379,"
                      f"hostfwd=tcp:127.0.0.1:{http}-:80")
    assert argv[argv.index("-device", argv.index("-netdev")) + 1] == "virtio-net-pci,netdev=net0"
    assert argv[argv.index("-smp") + 1] == "2" and "-icount" not in argv


def test_without_a_relay_the_forwards_are_stable_placeholders(guest):
    """A dry run binds nothing: the private ports are named, not chosen."""
    argv = guest(api.Options(ports=[(6379, 6379), (8080, 80)])).argv
    assert argv[argv.index("-netdev") + 1] == (
        "user,id=net0,hostfwd=tcp:127.0.0.1:HOSTFWD0-:6379,hostfwd=tcp:127.0.0.1:HOSTFWD1-:80")


def test_the_guest_reports_once_every_port_listens(guest):
    setup = guest(api.Options(ports=[(1, 6379)])).hooks("setup")
    assert ":$port [0-9A-F:]* 0A " in setup and "for port in 18EB;" in setup
    assert f"echo {console.READY} >/dev/$ukl_status" in setup
    assert "/proc/net/tcp" not in guest().hooks("setup")
