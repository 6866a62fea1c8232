"""Linux's tools on the program, on the host's side: naming the program's
frames in a function_graph trace (features.ftrace), gdb's script for QEMU's
gdbstub (features.gdb), and strace for the guest (features.strace)."""
import re
from pathlib import Path

from .. import configs, symbols
from ..build import recipes

USER_TOP = 0x0000_8000_0000_0000       # lower addresses are the program's
_FRAME = re.compile(r"^( => )(0x[0-9a-f]+|[0-9a-f]{16})$")


def name_program_frames(trace: Path, table: list):
    """Stack-trace lines the kernel could only print as addresses (the
    program's code has no kallsyms) get the program's symbol, e.g.
    ' => 0x401a2b' becomes ' => 0x401a2b <write+0x1b> [program]'."""
    lines = trace.read_text(errors="replace").splitlines(keepends=True)
    for i, line in enumerate(lines):
        m = _FRAME.match(line.rstrip("\n"))
        if m and int(m.group(2), 16) < USER_TOP:
            where = symbols.locate(table, int(m.group(2), 16))
            if where:
                lines[i] = f"{line.rstrip()} <{where}> [program]\n"
    tmp = trace.with_suffix(".tmp")
    tmp.write_text("".join(lines))
    tmp.replace(trace)


# The program is linked at the low addresses that static executables such as
# busybox use too, so a breakpoint in it also fires when another process runs
# code there.  Those processes run at CPL3 and the UKL program at CPL0: every
# breakpoint gets the condition that CS is the kernel's.
#
# The kernel has no DWARF, so gdb cannot unwind its C frames.  A UKL system
# call's stack is known, though: the pt_regs that __ukl_syscall built sit at
# the top of the task's kernel stack, with the return address of its call
# into C just below.  So any kernel frame of a system call unwinds to that
# call in __ukl_syscall, and __ukl_syscall to the program's frame in the
# pt_regs (ip, sp): from a breakpoint in the kernel, `bt` goes on through
# the program's own frames.  The frames between are left out.
GDB_SCRIPT = """set pagination off
set confirm off
file {elf}
add-symbol-file {vmlinux}
target remote 127.0.0.1:{port}
python
import gdb
import struct
from gdb.unwinder import Unwinder, register_unwinder

GATE = ({gate_start:#x}, {gate_end:#x})       # __ukl_syscall
KERNEL, USER_TOP, STACK, REGS = 0xffff800000000000, 0x800000000000, 0x4000, 21 * 8


# Every breakpoint stops only at CPL0: gdb resumes at once, silently, where
# another process hits it at CPL3.
def _ukl_only_cpl0(bp):
    if bp.type in (gdb.BP_BREAKPOINT, gdb.BP_HARDWARE_BREAKPOINT):
        at_cpl0 = "($cs & 3) == 0"
        if bp.condition is None:
            bp.condition = at_cpl0
        elif at_cpl0 not in bp.condition:
            bp.condition = f"{{at_cpl0}} && ({{bp.condition}})"


class FrameId:
    def __init__(self, sp, pc):
        self.sp, self.pc = sp, pc


class UklSyscall(Unwinder):
    def __init__(self):
        super().__init__("ukl-syscall")

    def __call__(self, frame):
        pc, sp = int(frame.read_register("rip")), int(frame.read_register("rsp"))
        if pc < KERNEL or sp < KERNEL:
            return None
        regs = (sp & ~(STACK - 1)) + STACK - REGS
        mem = gdb.selected_inferior().read_memory
        fields = struct.unpack("<21Q", mem(regs, REGS))
        ip, cs, app_sp = fields[16], fields[17], fields[19]
        if cs != 0x10 or ip >= USER_TOP:
            return None                     # not a UKL program's system call
        if GATE[0] <= pc < GATE[1] and sp == regs:
            caller = {{"rip": ip, "rsp": app_sp}}
        else:
            ret = struct.unpack("<Q", mem(regs - 8, 8))[0]
            if not GATE[0] <= ret < GATE[1] or sp >= regs:
                return None
            caller = {{"rip": ret, "rsp": regs}}
        # gdb stops at a frame whose id lies below the one before it; the
        # program's stack is below the kernel's, so kernel frames get ids just
        # below the program's sp, in their order on the kernel stack.
        as_sp = frame.read_register("rsp").type
        info = frame.create_unwind_info(FrameId(gdb.Value(app_sp - 16 - (regs - sp)).cast(as_sp),
                                                frame.read_register("rip")))
        for reg, value in caller.items():
            info.add_saved_register(reg, gdb.Value(value).cast(as_sp))
        return info


gdb.events.breakpoint_created.connect(_ukl_only_cpl0)
register_unwinder(None, UklSyscall(), replace=True)
end
"""


def gdb_script(built, run_dir: Path, port: int) -> Path:
    """The gdb commands that load the program's and the kernel's symbols and
    attach to the waiting guest."""
    script = run_dir / "ukl.gdb"
    run_dir.mkdir(parents=True, exist_ok=True)
    gate = next((addr, size) for addr, size, name in symbols.sized(built.vmlinux)
                if name == "__ukl_syscall")
    script.write_text(GDB_SCRIPT.format(elf=built.elf, vmlinux=built.vmlinux, port=port,
                                        gate_start=gate[0], gate_end=gate[0] + gate[1]))
    return script


def strace_binary() -> bytes:
    """strace for the guest's /bin: Debian's, built with `ukl-cc --baseline`
    (apps/strace.toml)."""
    return recipes.binary(recipes.load("strace"), configs.get("baseline")).read_bytes()
