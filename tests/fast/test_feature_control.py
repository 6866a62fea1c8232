"""A stop: QEMU gets the control port on a socket in the run directory, and
/init kills the program with each signal named on it; without, neither."""
from ukl import api
from ukl.guest import qemu, spec
from ukl.guest.features import control


def test_the_control_port_carries_signals_to_the_program(guest, tmp_path):
    g = guest(api.Options(stop=qemu.Stop("p", 10)))
    argv = g.argv
    assert (f"socket,id=uklctl,path={tmp_path / 'run' / qemu.CONTROL},server=on,wait=off"
            in argv)
    assert f"virtserialport,bus=uklser.0,chardev=uklctl,name={control.PORT}" in argv
    assert argv.count("virtio-serial-pci,id=uklser") == 1
    assert f'kill -s "$sig" "$(cat {spec.PIDFILE})"' in g.hooks("setup")
    assert g.command.startswith(f"sh -c 'echo $$ >{spec.PIDFILE}; ")
    plain = guest()
    assert "uklctl" not in " ".join(plain.argv) and "kill -s" not in plain.hooks("setup")
    assert "virtio-serial-pci,id=uklser" not in plain.argv
