"""`ukl image`: a program and its kernel as one file a firmware boots, for a
VM host, a cloud or a machine; and `ukl boot`, which boots such a file under
QEMU with UEFI firmware (Debian's OVMF), as a VM host would.

The image is the guest `ukl run` boots (the same GuestSpec and /init), with
three differences: its kernel carries the initramfs and the command line
(an embedded boot configuration) itself, so that firmware, kexec or a boot
menu need pass nothing; its network comes from DHCP or --ip, on whatever
NIC the machine has; and with no host at the other end, the program's
output and status go to the console, on serial and on the screen, and the
machine powers off, reboots or halts after the program (--on-exit)."""
import ipaddress
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import api, configs
from .build import kernel, programs
from .errors import UklError
from .guest import console, disk, image as initramfs, net, qemu
from .guest.features import data
from .guest.spec import PIDFILE
from .proc import need

FORMATS = ("raw", "qcow2", "efi")
ON_EXIT = ("poweroff", "reboot", "halt")
NICS = {"virtio": "virtio-net-pci", "e1000": "e1000"}
OVMF = Path("/usr/share/ovmf/OVMF.fd")         # Debian's ovmf
# /init's first setup hook in an image: how the machine ends, DNS from the
# kernel's DHCP, the console mirrored on the screen (init's own messages
# too), and the power button (a VM host's shutdown) sending the program its
# stop signal, after which the machine powers off whatever --on-exit says.
SETUP = """ukl_on_exit={on_exit}
[ -e /etc/resolv.conf ] || ln -s /proc/net/pnp /etc/resolv.conf
if mkfifo /dev/ukl-screen; then
  tee /dev/tty0 </dev/ukl-screen >/dev/console &
  ukl_screen=$!
  exec >/dev/ukl-screen 2>&1
  ukl_out=ukl-screen ukl_err=ukl-screen ukl_status=ukl-screen
fi
mkdir -p /etc/acpi/PWRF
cat >/etc/acpi/PWRF/00000080 <<'EOF'
#!/bin/sh
echo "ukl: power button: SIG{signal} to the program" >/dev/console
touch /run/ukl-power-off
kill -s {signal} "$(cat {pidfile})"
EOF
chmod +x /etc/acpi/PWRF/00000080
acpid -c /etc/acpi -l /dev/console
"""
EXIT = """[ -e /run/ukl-power-off ] && ukl_on_exit=poweroff
exec >/dev/console 2>&1
[ -z "$ukl_screen" ] || wait $ukl_screen
"""
STOP_TIMEOUT = 30.0     # seconds a powered-down machine has before it is killed
EXITED = re.compile(r"^ukl: /app/\S+ exited with status (\d+)", re.M)
HALTED = "reboot: System halted"    # --on-exit halt: the machine stays, QEMU with it


class _Console:
    """A sink for the console's pump: the console on SINK as it comes, each
    complete line checked once for a kernel failure or a halt."""

    def __init__(self, sink):
        self.sink, self.partial = sink, b""
        self.failure: str | None = None
        self.halted = False

    def write(self, data: bytes):
        self.sink.write(data)
        *lines, self.partial = (self.partial + data).split(b"\n")
        text = b"\n".join(lines).decode(errors="replace")
        self.failure = self.failure or console.kernel_failure(text)
        self.halted |= HALTED in text

    def flush(self):
        self.sink.flush()


def parse_ip(text: str) -> str:
    """--ip ADDR/NN,GATEWAY as the kernel's ip= (static, on the first NIC)."""
    addr, _, gateway = text.partition(",")
    try:
        iface = ipaddress.IPv4Interface(addr)
        gw = ipaddress.IPv4Address(gateway)
    except ValueError:
        raise UklError(f"--ip {text}: expected ADDR/NN,GATEWAY, e.g. 192.168.1.10/24,192.168.1.1")
    if "/" not in addr or gw not in iface.network:
        raise UklError(f"--ip {text}: give the prefix length, and a gateway in "
                       f"{iface.network}")
    return f"{iface.ip}::{gw}:{iface.netmask}::eth0:off"


def bootconfig(args: list[str]) -> str:
    """Kernel command-line words as a boot configuration's kernel.* keys."""
    lines, seen = [], set()
    for arg in args:
        key, eq, value = arg.partition("=")
        if not re.fullmatch(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*", key):
            raise UklError(f"kernel argument {arg!r} cannot go in an image's boot configuration")
        if not eq:
            if key not in seen:
                lines.append(f"kernel.{key}")
        else:
            lines.append(f'kernel.{key} {"+=" if key in seen else "="} "{value}"')
        seen.add(key)
    return "\n".join(lines) + "\n"


def kernel_args(spec_args: list[str], on_exit: str, ip: str | None) -> list[str]:
    # A panic waits on the screen unless the machine should come back.
    return ["console=tty0", "console=ttyS0,115200", f"panic={10 if on_exit == 'reboot' else 0}",
            "sysctl.kernel.panic_on_oops=1", f"ip={ip or 'dhcp'}", *spec_args]


def data_disk(dest: Path, fmt: str) -> Path:
    """Where --data goes beside DEST: redis.img -> redis-data.img."""
    suffix = ".qcow2" if fmt == "qcow2" else ".img"
    return dest.with_name(f"{dest.stem}-data{suffix}")


def check_dest(dest: Path, fmt: str):
    if fmt not in FORMATS:
        raise UklError(f"unknown image format {fmt!r}; valid: {', '.join(FORMATS)}")
    if not dest.parent.is_dir():
        raise UklError(f"-o {dest}: {dest.parent} is not a directory")
    if dest.is_dir():
        raise UklError(f"-o {dest}: is a directory")


def image(program: "str | programs.Program", config: str, opts, dest: Path, fmt: str = "raw",
          ip: str | None = None, on_exit: str = "poweroff") -> list[Path]:
    """Write PROGRAM under CONFIG, booted with OPTS, as DEST (and its data disk
    with opts.data); the files written.  Nothing is left unless all are."""
    check_dest(dest, fmt)
    if on_exit not in ON_EXIT:
        raise UklError(f"--on-exit {on_exit}: valid: {', '.join(ON_EXIT)}")
    opts = api.validate(opts, config, bind=False)
    built = api.build(program, config)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=f".{dest.name}.") as tmp:
        work = Path(tmp)
        guest = api.spec(built, opts, work, one_console=True)
        guest.hook("setup", "00-deploy", SETUP.format(
            on_exit=on_exit, signal=built.program.run.stop_signal or "TERM", pidfile=PIDFILE))
        guest.hook("exit", "99-deploy", EXIT)
        initrd = initramfs.build(work, guest)
        (work / "bootconfig").write_text(bootconfig(kernel_args(guest.kernel_args, on_exit, ip)))
        # A file started at CPL0 (--binary) runs on the kernel as it is built.
        linked = built.config.ukl and built.program.kind != "binary"
        app = built.kernel.parent / "app-image.o" if linked else None
        efi = kernel.efi(built.config.kernel, app, initrd, work / "bootconfig",
                         work / "BOOTX64.EFI")
        written = []
        if opts.data is not None:
            raw = work / "data.raw"
            data.create(raw, opts.data)
            disk.convert(raw, work / "data", "qcow2" if fmt == "qcow2" else "raw")
            (work / "data").replace(data_disk(dest, fmt))
            written.append(data_disk(dest, fmt))
        if fmt == "efi":
            efi.replace(dest)
        else:
            disk.gpt(efi, work / "disk", fmt)
            (work / "disk").replace(dest)
    return [dest, *written]


def data_beside(image_path: Path) -> Path | None:
    """The data disk `ukl image --data` wrote beside IMAGE_PATH, if there is one."""
    found = [p for fmt in ("raw", "qcow2") if (p := data_disk(image_path, fmt)).exists()]
    return found[0] if found else None


def qemu_argv(image_path: Path, console_log: Path, ports=(), nic="virtio", smp=1,
              memory_mb=1024, data_path: Path | None = None, accel="tcg") -> list:
    """QEMU as a VM host runs the image: UEFI firmware, the disk(s), one NIC."""
    fwd = "".join(f",hostfwd=tcp:127.0.0.1:{h}-:{g}" for h, g in ports)
    argv = ["qemu-system-x86_64", "-machine", "q35", "-accel", accel, "-cpu", "max",
            "-m", f"{memory_mb}M", "-smp", str(smp), "-bios", str(OVMF),
            "-drive", f"file={image_path},format={disk.format_of(image_path)},if=virtio"]
    if data_path:
        argv += ["-drive", f"file={data_path},format={disk.format_of(data_path)},if=virtio"]
    argv += ["-netdev", f"user,id=net0{fwd}", "-device", f"{NICS[nic]},netdev=net0",
             "-vga", "std", "-display", "none", "-no-reboot",
             "-serial", f"file:{console_log}"]
    return argv


def boot(image_path: Path, ports=(), nic: str = "virtio", smp: int = 1, memory_mb: int = 1024,
         timeout: float | None = None, data_path: Path | None = None, stdout=None) -> int:
    """Boot IMAGE_PATH until the machine ends; its program's exit status.
    The console goes to STDOUT as it comes; a kernel failure or a timeout
    raises UklError after the console's tail.  SIGINT or SIGTERM presses the
    power button (the program gets its stop signal); a second one, or
    STOP_TIMEOUT seconds, kills QEMU (status 137)."""
    if not image_path.is_file():
        raise UklError(f"{image_path}: no such image")
    if nic not in NICS:
        raise UklError(f"--nic {nic}: valid: {', '.join(NICS)}")
    if not OVMF.exists():
        raise UklError(f"{OVMF} is missing: UEFI firmware comes with Debian's ovmf (./setup.sh)")
    need("qemu-system-x86_64")
    net.check_host_ports([h for h, _ in ports])
    for path in [image_path, data_path]:
        if path and disk.format_of(path) == "raw" and path.stat().st_size % 512:
            raise UklError(f"{path}: not a disk image (its size is not whole sectors)")
    work = api.RUNS / f"boot-{image_path.stem}"
    work.mkdir(parents=True, exist_ok=True)
    log = work / "console.log"
    log.write_bytes(b"")
    argv = qemu_argv(image_path, log, ports, nic, smp, memory_mb, data_path,
                     configs.forced_accel() or "tcg")
    argv += ["-monitor", f"unix:{work / qemu.MONITOR},server=on,wait=off"]
    (work / "qemu.cmd").write_text(shlex.join(argv) + "\n")
    watch = _Console(stdout or sys.stdout.buffer)
    pump = qemu.Pump(log, watch)
    asked: list[float] = []
    handlers = {s: signal.signal(s, lambda n, f: asked.append(time.monotonic()))
                for s in (signal.SIGINT, signal.SIGTERM)}
    with open(work / "qemu.log", "wb") as qlog:
        proc = subprocess.Popen(["setpriv", "--pdeathsig", "KILL", *argv],
                                stdin=subprocess.DEVNULL, stdout=qlog, stderr=subprocess.STDOUT,
                                process_group=0)
        deadline, failure = time.monotonic() + (timeout or float("inf")), None
        pressed = killed = False
        try:
            while True:
                if asked and not pressed:
                    pressed = True
                    qemu.monitor(work, "system_powerdown")
                    print(f"ukl: pressed the power button; waiting up to {STOP_TIMEOUT:g}s "
                          f"(again to kill it now)", file=sys.stderr, flush=True)
                if len(asked) > 1 or (asked and time.monotonic() - asked[0] > STOP_TIMEOUT):
                    killed = True
                    break
                done = proc.poll() is not None
                pump()
                failure = watch.failure
                if done or failure or watch.halted:
                    break
                if time.monotonic() > deadline:
                    failure = f"timed out after {timeout:g}s"
                    break
                time.sleep(0.1)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
    if killed:
        print(f"ukl: killed the machine (exit 137) [console: {log}]", file=sys.stderr)
        return 137
    text = log.read_text(errors="replace")
    status = EXITED.findall(text)
    if failure or not status:
        console.show_tail(log)
        why = failure or f"the machine ended without its program's status (qemu exit " \
                         f"{proc.returncode})"
        raise UklError(f"{image_path.name}: {why} [console: {log}]")
    return int(status[-1])
