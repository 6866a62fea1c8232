"""The references to the kernel that boot moves under KASLR: found by linking a
real program twice, and moved as binfmt_ukl moves them (32-bit fields grow by
the offset) to exactly what a link at the moved addresses gives."""
import struct

import pytest

from ukl.build import kernel, relocs
from ukl.errors import UklError

# A call (rel32), a sign-extended immediate (32S), a pointer in the data (64)
# and a load relaxed from the GOT: each form a C compiler emits.
PROGRAM = """
    .text
    .globl _start
_start:
    call __ukl_syscall
    mov $__ukl_syscall, %rax
    mov __ukl_shortcuts@GOTPCREL(%rip), %rbx
    hlt
    .data
    .quad __ukl_shortcuts
"""
KERNEL = {"__ukl_syscall": 0xffffffff81a01230, "__ukl_shortcuts": 0xffffffff81c04560}


def _image(tmp_path, name, resolved):
    src, obj = tmp_path / "p.s", tmp_path / "p.o"
    src.write_text(PROGRAM)
    kernel.cc.run_gcc(["gcc", "-c", str(src), "-o", str(obj)], "assembling failed")
    exe = tmp_path / name
    kernel._link_executable(obj, exe, resolved)
    return kernel._strip(exe).read_bytes()


def _moved(image, offsets, delta):
    moved = bytearray(image)
    for at in offsets:
        old = struct.unpack_from("<I", moved, at)[0]
        struct.pack_into("<I", moved, at, (old + delta) % (1 << 32))
    return bytes(moved)


def test_every_reference_to_the_kernel_moves_with_it(tmp_path):
    first = _image(tmp_path, "a", KERNEL)
    shifted = _image(tmp_path, "b", {s: a + relocs.SHIFT for s, a in KERNEL.items()})
    offsets = relocs.fields(first, shifted)
    assert len(offsets) >= 4           # the symbol table's values move too
    delta = 0x2e600000                  # a KASLR offset, far from SHIFT
    at_delta = _image(tmp_path, "c", {s: a + delta for s, a in KERNEL.items()})
    assert first != at_delta
    assert _moved(first, offsets, delta) == at_delta


def test_a_difference_that_is_not_a_reference_fails_the_link():
    first = bytes(16)
    second = bytearray(first)
    second[5] = 7
    with pytest.raises(UklError, match="offset 0x5"):
        relocs.fields(first, bytes(second))
    with pytest.raises(UklError, match="layout"):
        relocs.fields(first, first + b"\0")
