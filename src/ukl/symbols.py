"""Code symbols of an ELF file, by address."""
import bisect
import subprocess
from pathlib import Path

from .errors import UklError


def nm(elf: Path) -> list[tuple[int, str]]:
    """ELF's code symbols, sorted by address."""
    res = subprocess.run(["nm", "-n", "--defined-only", str(elf)], capture_output=True,
                         text=True)
    if res.returncode != 0:
        raise UklError(f"nm {elf} failed: {res.stderr.strip()[-200:]}")
    table = []
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtWw":
            table.append((int(parts[0], 16), parts[2]))
    return table


def locate(table: list[tuple[int, str]], addr: int) -> str | None:
    """'name+0xoff' for ADDR in TABLE (from nm), or None below its first symbol."""
    i = bisect.bisect_right(table, (addr, "\uffff")) - 1
    if i < 0:
        return None
    start, name = table[i]
    return f"{name}+{addr - start:#x}"


def sized(elf: Path) -> list[tuple[int, int, str]]:
    """ELF's code symbols with their sizes: (address, size, name)."""
    res = subprocess.run(["nm", "-S", "--defined-only", str(elf)], capture_output=True, text=True)
    if res.returncode != 0:
        raise UklError(f"nm {elf} failed: {res.stderr.strip()[-200:]}")
    return [(int(f[0], 16), int(f[1], 16), f[3]) for f in map(str.split, res.stdout.splitlines())
            if len(f) == 4 and f[2] in "Tt"]
