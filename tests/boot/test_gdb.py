"""`ukl run --gdb`: gdb, attached to QEMU's gdbstub with the command ukl
prints, stops in the program's code at its source lines, steps it, unwinds
from inside a system call through __ukl_syscall into the program, and
follows it to its exit.  gdb runs in batch mode; the test reads its output."""
import io
import socket
import subprocess
import threading
import time

import pytest

from ukl import api
from ukl.guest import tracing


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    """Whether something listens on PORT, read from /proc (a probe
    connection would be gdb's one connection)."""
    for line in open("/proc/net/tcp").read().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        if int(local.split(":")[1], 16) == port and state == "0A":
            return True
    return False


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_gdb_breaks_steps_and_unwinds_out_of_a_system_call(config):
    built, port = api.build("files", config), _free_port()
    result = {}
    boot = threading.Thread(target=lambda: result.update(res=api.boot(
        built, api.Options(gdb=True, gdb_port=port, timeout=300), stdout=io.BytesIO(),
        stderr=io.BytesIO())))
    boot.start()
    deadline = time.monotonic() + 60
    while not _listening(port):
        assert time.monotonic() < deadline and boot.is_alive(), "no gdbstub"
        time.sleep(0.2)
    script = tracing.gdb_script(built, api.run_dir(built), port)
    gdb = subprocess.run(["gdb", "-batch", "-nx", "-x", str(script),
                          "-ex", "break main", "-ex", "continue", "-ex", "step",
                          "-ex", "next", "-ex", "break ksys_write", "-ex", "continue",
                          "-ex", "bt", "-ex", "delete", "-ex", "continue"],
                         capture_output=True, text=True, timeout=240)
    boot.join(120)
    out = gdb.stdout
    assert "Breakpoint 1, main () at " in out and "files.c:26" in out, out
    assert "\n28\t" in out and "\n30\t" in out, out   # step over open(), next to write()
    bt = out[out.index("Breakpoint 2, "):]
    frames = [line.split(" in ")[1].split(" ")[0] for line in bt.splitlines()
              if line.startswith("#") and " in " in line]
    assert frames[:4] == ["ksys_write", "__ukl_syscall", "__syscall_cp_c", "write"], bt
    assert "[Inferior 1 (process 1) exited normally]" in out, out
    assert result["res"].status == 0
