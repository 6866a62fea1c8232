"""Disk images a firmware boots: a GPT disk whose one partition is an EFI
system partition holding \\EFI\\BOOT\\BOOTX64.EFI, the path UEFI boots from
removable and new disks without a boot entry.  Made without root, by
Debian's mtools, fdisk (sfdisk) and qemu-utils."""
import os
import subprocess
from pathlib import Path

from ..errors import UklError
from ..proc import need

MIB = 1 << 20
ESP_TYPE = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
MIN_ESP = 64 * MIB          # FAT32, which every firmware reads, needs about 33 MiB


def _run(argv: list[str], what: str, stdin: str | None = None):
    done = subprocess.run([need(argv[0]), *argv[1:]], input=stdin, capture_output=True,
                          text=True, env={**os.environ, "MTOOLS_SKIP_CHECK": "1"})
    if done.returncode:
        raise UklError(f"{what} failed: {(done.stderr or done.stdout).strip()[-300:]}")


def _esp(efi: Path, dest: Path) -> int:
    """A FAT32 file system at DEST holding EFI as the removable-media boot file;
    its size in bytes."""
    size = max(MIN_ESP, -(-(efi.stat().st_size * 5 // 4 + 4 * MIB) // MIB) * MIB)
    with open(dest, "wb") as f:
        f.truncate(size)
    _run(["mformat", "-i", str(dest), "-F", "-v", "UKL-ESP", "::"], "formatting the ESP")
    _run(["mmd", "-i", str(dest), "::/EFI", "::/EFI/BOOT"], "writing the ESP")
    _run(["mcopy", "-i", str(dest), str(efi), "::/EFI/BOOT/BOOTX64.EFI"], "writing the ESP")
    return size


def gpt(efi: Path, dest: Path, fmt: str = "raw"):
    """DEST: a GPT disk (raw or qcow2) whose EFI system partition boots EFI."""
    raw = dest.with_name(f"{dest.name}.raw")
    esp = dest.with_name(f"{dest.name}.esp")
    size = _esp(efi, esp)
    with open(raw, "wb") as f:
        f.truncate(MIB + size + MIB)        # the primary and the backup GPT around it
    table = (f"label: gpt\nfirst-lba: 2048\nstart=2048, size={size // 512}, "
             f"type={ESP_TYPE}, name=\"EFI system partition\"\n")
    _run(["sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", str(raw)],
         "partitioning the disk", table)
    with open(raw, "r+b") as f, open(esp, "rb") as part:
        f.seek(MIB)
        while chunk := part.read(MIB):
            f.write(chunk)
    esp.unlink()
    convert(raw, dest, fmt)


def convert(raw: Path, dest: Path, fmt: str):
    """RAW as DEST in FMT (the raw file is moved or removed)."""
    if fmt == "raw":
        raw.replace(dest)
        return
    _run(["qemu-img", "convert", "-f", "raw", "-O", fmt, str(raw), str(dest)],
         f"converting the disk to {fmt}")
    raw.unlink()


def format_of(path: Path) -> str:
    """raw or qcow2, from the file's first bytes."""
    with open(path, "rb") as f:
        return "qcow2" if f.read(4) == b"QFI\xfb" else "raw"
