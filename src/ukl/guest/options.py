"""How to boot a built program: everything but the program and its kernel.
Each field is read by the feature (guest/features/) that owns it."""
from dataclasses import dataclass, field
from pathlib import Path

from .qemu import Stop

DEFAULT_TIMEOUT = 180.0


@dataclass
class Options:
    args: tuple = ()
    smp: int = 1
    timeout: float = DEFAULT_TIMEOUT
    icount: bool = False
    # with icount: off, a halted guest's clock jumps to its next timer, not at
    # the host's pace, so that its timing does not depend on the host's load
    icount_sleep: bool = True
    disk: Path | None = None
    ports: list = field(default_factory=list)      # (host, guest) TCP ports
    volumes: list = field(default_factory=list)    # volumes.Volume: mounted, or copied in
    services: list = field(default_factory=list)   # commands started before the program
    kernel_args: list = field(default_factory=list)   # words added to the kernel's command line
    plugins: list = field(default_factory=list)    # QEMU TCG plugins: (path, "key=value" args)
    cpu: str = "max"               # QEMU's -cpu
    out: Path | None = None        # the host directory that receives the guest's /out
    stop: Stop | None = None       # delivers the host's SIGTERM and SIGINT to the program
    ftrace: tuple = ()             # kernel functions to trace into out/ftrace.txt
    core: bool = False             # a crash leaves out/core, beside out/program
    gdb_port: int | None = None    # wait for gdb on 127.0.0.1:PORT (features.gdb.script)
    strace: bool = False           # strace runs the program; the trace goes to its stderr
    perf: bool = False             # perf records the program into out/perf.data
    tools: dict = field(default_factory=dict)      # name -> ordinary executable (bytes) for /bin
    user: str | None = None        # USER[:GROUP] the program runs as (features.user)
    env: tuple = ()                # (name, value): the program's variables (features.environment)
