"""The program's references to the kernel, which KASLR moves at boot.

The program is linked against the kernel's link-time addresses.  When KASLR
moves the kernel by an offset, every field of the image that holds a kernel
address, or a displacement to one, grows by that offset: a call's rel32, a
sign-extended 32-bit immediate, a pointer in the data.  Kernel addresses lie in
the top 2 GiB and KASLR keeps them there, so such a field grows in its low 32
bits only, without carry: the kernel adds the offset to a list of 32-bit fields
(binfmt_ukl), which this module finds.

It finds them by linking the program a second time with every kernel address
SHIFT higher: the fields are where the two images differ.  Whatever form a
reference took (a call, a relaxed GOT load, a pointer in .data or in an unwind
table), it is found; any other difference fails the link.
"""
import struct

from ..errors import UklError

# One KASLR step (a multiple of CONFIG_PHYSICAL_ALIGN) that moves only the
# fourth byte of each field, by one.
SHIFT = 1 << 24
_CHUNK = 1 << 16


def _differing(first: bytes, second: bytes):
    """The offsets where FIRST and SECOND differ, skipping equal chunks fast."""
    for base in range(0, len(first), _CHUNK):
        a, b = first[base:base + _CHUNK], second[base:base + _CHUNK]
        if a != b:
            yield from (base + i for i in range(len(a)) if a[i] != b[i])


def fields(first: bytes, second: bytes) -> list[int]:
    """Offsets of the 32-bit fields that grow by SHIFT from FIRST, the image
    linked at the kernel's addresses, to SECOND, linked SHIFT higher."""
    if len(first) != len(second):
        raise UklError("the program's layout depends on the kernel's addresses, "
                       "so KASLR cannot move it")
    found: list[int] = []
    for at in _differing(first, second):
        start = at - 3
        old, new = (struct.unpack_from("<I", image, start)[0] if start >= 0 else None
                    for image in (first, second))
        if start < 0 or (old + SHIFT) % (1 << 32) != new:
            raise UklError(f"the program refers to the kernel at image offset {at:#x} "
                           f"in a form KASLR cannot move")
        found.append(start)
    return found


def table(offsets: list[int]) -> bytes:
    """The list as binfmt_ukl reads it: little-endian u32 offsets into the image."""
    return struct.pack(f"<{len(offsets)}I", *offsets)
