"""`ukl image --format efi` runs under `kexec -l` from a running Debian
system (issue 39): Debian 12's own cloud kernel boots with a small
initramfs (busybox, and kexec-tools built from Debian's source), loads the
image with kexec and jumps to it; the UKL program then runs at CPL0 with the
command line the image carries."""
import subprocess

from ukl import configs
from ukl.build import fetch, recipes
from ukl.guest.image import Cpio
from uklcli import ukl

DEBIAN_INIT = b"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
echo "debian guest: $(uname -r)"
kexec -l /ukl.efi && kexec -e
echo "debian guest: kexec failed"
poweroff -f
"""


def debian_guest(efi: bytes) -> bytes:
    c = Cpio()
    for d in ["bin", "dev", "proc", "sys", "tmp"]:
        c.dir(d)
    c.chardev("dev/console", 5, 1)
    c.file("bin/busybox", (fetch.unpack("busybox") / "bin" / "busybox").read_bytes())
    kexec = recipes.binary(recipes.load("kexec-tools"), configs.get("baseline"))
    c.file("bin/kexec", kexec.read_bytes())
    c.file("ukl.efi", efi, 0o644)
    c.file("init", DEBIAN_INIT)
    return c.gz()


def test_kexec_from_a_debian_guest_starts_the_ukl_program(tmp_path):
    efi = tmp_path / "cpl.efi"
    res = ukl("image", "cpl", "--config", "ukl-ret-byp", "--format", "efi", "-o", str(efi))
    assert res.returncode == 0, res.stderr[-3000:]
    initrd = tmp_path / "debian.cpio.gz"
    initrd.write_bytes(debian_guest(efi.read_bytes()))
    vmlinuz = next((fetch.unpack("debian-kernel") / "boot").glob("vmlinuz-*"))
    run = subprocess.run(["qemu-system-x86_64", "-machine", "q35", "-accel", "tcg", "-cpu", "max",
                          "-m", "1G", "-nographic", "-no-reboot", "-kernel", str(vmlinuz),
                          "-initrd", str(initrd), "-append", "console=ttyS0 panic=-1",
                          "-nic", "user,model=virtio-net-pci"],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    console = run.stdout.replace("\r\n", "\n")
    debian, _, ukl_side = console.partition("kexec_core: Starting new kernel")
    assert "debian guest: 6.12.117+deb12-cloud-amd64" in debian, console[-3000:]
    assert "Linux version 6.12.117+deb12-cloud-amd64 (debian-kernel@" in debian
    assert "ukl=ret,byp" in ukl_side          # the image's own command line
    assert "CPL 0\n" in ukl_side
    assert "ukl: /app/cpl exited with status 0" in ukl_side
    assert "reboot: Power down" in ukl_side
