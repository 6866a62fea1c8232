"""The library API that the CLI, the tests and the benchmarks all call."""
import functools
import sys
from dataclasses import dataclass
from pathlib import Path

from . import image, kernel, libc, programs, qemu
from .errors import UklError
from .layout import RUNS

DEFAULT_TIMEOUT = 180.0
# Examples installed in every guest's /bin as ordinary (ring 3) programs.
GUEST_TOOLS = ["cpl"]


@dataclass
class Built:
    name: str
    flavor: str          # "baseline", "ukl" or another UKL kernel (kernel.FLAVORS)
    kernel: Path         # bzImage to boot
    program: bytes       # what goes to /app/<name>
    tools: dict          # ordinary executables for /bin, by name


@dataclass
class Result:
    status: int
    console: Path
    run_dir: Path


@functools.cache
def _guest_tools() -> dict[str, bytes]:
    """Built once per process: examples/ does not change under a running process."""
    return {tool: programs.build(tool, "baseline").read_bytes() for tool in GUEST_TOOLS}


def build(program: str, baseline: bool = False) -> Built:
    """Build everything PROGRAM needs: C library, program, kernel (relinked for UKL)."""
    name = programs.name(program)
    libc.build("plain")
    tools = _guest_tools()
    if baseline:
        binary = programs.build(program, "baseline")
        return Built(name, "baseline", kernel.build("baseline"), binary.read_bytes(), tools)
    libc.build("ukl")
    obj = programs.build(program, "ukl")
    return Built(name, kernel.ukl_flavor(), kernel.link(obj, name), image.ukl_marker(name), tools)


def _probe_kvm(kernel_image: Path) -> bool:
    work = RUNS / "kvm-probe"
    initrd = image.build(work, "true", b"#!/bin/busybox sh\nexit 0\n", [])
    m = qemu.Machine(kernel_image, initrd, work, accel="kvm")
    return qemu.boot(m, timeout=15).failure is None


def boot(built: Built, args=(), smp: int = 1, timeout: float = DEFAULT_TIMEOUT,
         icount: bool = False, stdout=None, stderr=None, disk: Path | None = None) -> Result:
    """Boot a built program; its stdout/stderr go to the given binary streams."""
    if smp < 1:
        raise UklError(f"--smp must be at least 1, not {smp}")
    work = RUNS / f"{built.name}-{built.flavor}"
    initrd = image.build(work, built.name, built.program, list(args), built.tools)
    accel = "tcg" if icount else qemu.choose_accel(lambda: _probe_kvm(built.kernel))
    # Measurements also fix the address-space layout, which otherwise moves
    # page-table and fork costs by a few percent from boot to boot.
    extra = ["norandmaps"] if icount else []
    m = qemu.Machine(built.kernel, initrd, work, smp=smp, accel=accel, icount=icount, disk=disk,
                     cmdline_extra=extra)
    result = qemu.boot(m, timeout, stdout=stdout, stderr=stderr)
    if result.failure:
        sys.stderr.write(f"--- console tail ({result.console}) ---\n{result.console_tail()}\n")
        raise UklError(f"{built.name} ({built.flavor}): {result.failure} [console: {result.console}]")
    return Result(result.status, result.console, work)


def run(program: str, args=(), baseline: bool = False, smp: int = 1,
        timeout: float = DEFAULT_TIMEOUT, stdout=None, stderr=None) -> Result:
    return boot(build(program, baseline), args, smp, timeout, stdout=stdout, stderr=stderr)
