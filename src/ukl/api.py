"""The library API that the CLI, the tests and the benchmarks all call."""
import functools
import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import configs
from .build import kernel, libc, perf, programs
from .errors import UklError
from .guest import console, image, net, qemu, tracing, volumes
from .layout import EXAMPLES, ROOT, RUNS

DEFAULT_TIMEOUT = 180.0
# Ordinary (ring 3) programs in every guest's /bin.
GUEST_TOOLS = {"cpl": EXAMPLES / "cpl.c", "ukl-busy": ROOT / "bench" / "busy.c",
               "ukl-intruder": EXAMPLES / "intruder.c"}


@dataclass
class Built:
    program: programs.Program
    config: configs.Config     # config.kernel is the kernel built and booted
    kernel: Path         # bzImage to boot
    binary: bytes        # what goes to /app/<name>
    tools: dict          # ordinary executables for /bin, by name
    files: list = field(default_factory=list)   # (host path, guest path) the program needs
    vmlinux: Path | None = None    # the booted kernel's ELF, with symbols
    elf: Path | None = None        # the program's ELF, with symbols, as it runs

    @property
    def name(self) -> str:
        return self.program.name


@dataclass
class Options:
    """How to boot: everything but the program and its kernel."""
    args: tuple = ()
    smp: int = 1
    timeout: float = DEFAULT_TIMEOUT
    icount: bool = False
    disk: Path | None = None
    ports: list = field(default_factory=list)      # (host, guest) TCP ports
    volumes: list = field(default_factory=list)    # volumes.Volume: mounted, or copied in
    services: list = field(default_factory=list)   # commands started before the program
    kernel_args: list = field(default_factory=list)
    plugin: tuple | None = None    # a QEMU TCG plugin and its "key=value" arguments
    cpu: str = "max"               # QEMU's -cpu
    out: Path | None = None        # the host directory that receives the guest's /out
    stop: qemu.Stop | None = None  # delivers the host's SIGTERM and SIGINT to the program
    ftrace: tuple = ()             # kernel functions to trace into out/ftrace.txt
    core: bool = False             # a crash leaves out/core, beside out/program
    gdb_port: int | None = None    # wait for gdb on 127.0.0.1:PORT (tracing.gdb_script)
    strace: bool = False           # strace runs the program; the trace goes to its stderr
    perf: bool = False             # perf records the program into out/perf.data


@dataclass
class Result:
    status: int | None   # None when the host stopped the guest
    console: Path
    run_dir: Path


@functools.cache
def _guest_tools() -> dict[str, bytes]:
    """Built once per process: examples/ does not change under a running process."""
    baseline = configs.get("baseline")
    return {tool: programs.build(programs.Program("source", tool, src), baseline).read_bytes()
            for tool, src in GUEST_TOOLS.items()}


def build(program: str | programs.Program, config: "str | configs.Config" = "ukl") -> Built:
    """Build everything PROGRAM needs under CONFIG: C library, program, kernel
    (relinked for a UKL program)."""
    cfg = configs.get(config)
    prog = programs.resolve(program) if isinstance(program, str) else program
    libc.build(configs.get("baseline"))
    tools = _guest_tools()
    libc.build(cfg)
    binary = programs.build(prog, cfg)
    tree = programs.built_tree(prog, cfg)
    files = [(tree / src, guest) for guest, src in prog.files.items()]
    if cfg.kernel == "baseline":
        return Built(prog, cfg, kernel.build("baseline"), binary.read_bytes(), tools, files,
                     kernel.build_dir("baseline") / "vmlinux", binary)
    if cfg.ukl:
        image_, payload = kernel.link(binary, prog.name, cfg.kernel), image.ukl_marker(prog.name)
        vmlinux, elf = image_.parent / "vmlinux", image_.parent / "app.elf"
    else:                           # an ordinary program on the UKL kernel
        image_, payload = kernel.build(cfg.kernel), binary.read_bytes()
        vmlinux, elf = kernel.build_dir(cfg.kernel) / "vmlinux", binary
    configs.check_kernel(cfg, kernel.config_values(cfg.kernel))
    return Built(prog, cfg, image_, payload, tools, files, vmlinux, elf)


def _probe_kvm(kernel_image: Path) -> bool:
    work = RUNS / "kvm-probe"
    initrd = image.build(work, "true", b"#!/bin/busybox sh\nexit 0\n", [])
    return qemu.boot(qemu.Machine(kernel_image, initrd, work, accel="kvm"), 15).failure is None


def run_dir(built: Built) -> Path:
    """Where a boot of BUILT keeps its consoles, QEMU command and plugin output."""
    return RUNS / f"{built.name}-{built.config.name}"


def initramfs(built: Built, opts: Options, work: Path, one_console=False) -> Path:
    """Write WORK/initramfs.cpio.gz for BUILT booted with OPTS (see image.build)."""
    prog = built.program
    files = built.files + [(v.host, v.guest) for v in opts.volumes if not v.mounted]
    tools = {**built.tools, **({"strace": tracing.strace_binary()} if opts.strace else {}),
             **({"perf": perf.binary().read_bytes()} if opts.perf else {})}
    return image.build(work, built.name, built.binary, list(opts.args or prog.args),
                       tools, ports=[g for _, g in opts.ports], files=files,
                       dirs=prog.dirs, services=opts.services, out=opts.out is not None,
                       control=opts.stop is not None, ftrace=opts.ftrace, core=opts.core,
                       strace=opts.strace, one_console=one_console, perf=opts.perf,
                       mounts=[(tag, v.guest, v.mode == "ro")
                               for tag, v in volumes.mounted(opts.volumes)])


def machine(built: Built, opts: Options = Options()) -> qemu.Machine:
    """The guest that boots BUILT: its initramfs written, its published ports
    bound, its QEMU command decided (close its relay if it does not boot).
    Without ARGS the program gets its recipe's default arguments."""
    if opts.smp < 1:
        raise UklError(f"--smp must be at least 1, not {opts.smp}")
    net.check_host_ports([h for h, _ in opts.ports])
    work = run_dir(built)
    initrd = initramfs(built, opts, work)
    shares = [(tag, v.host, v.mode == "ro") for tag, v in volumes.mounted(opts.volumes)]
    # gdb's breakpoints need TCG: under KVM QEMU writes them to physical memory.
    accel = "tcg" if opts.icount or opts.gdb_port else \
        qemu.choose_accel(lambda: _probe_kvm(built.kernel))
    # Measurements also fix the address-space layout, which otherwise moves
    # page-table and fork costs by a few percent from boot to boot.
    extra = ((["norandmaps"] if opts.icount else []) + built.config.kernel_args()
             + list(opts.kernel_args))
    return qemu.Machine(built.kernel, initrd, work, smp=opts.smp, accel=accel,
                        icount=opts.icount, disk=opts.disk, cmdline_extra=extra,
                        relay=net.Relay(list(opts.ports)), plugin=opts.plugin, cpu=opts.cpu,
                        out_tar=work / "out.tar" if opts.out else None,
                        control=opts.stop is not None, gdb_port=opts.gdb_port, shares=shares)


def boot(built: Built, opts: Options = Options(), stdout=None, stderr=None, on_ready=None,
         stop: threading.Event | None = None) -> Result:
    """Boot a built program; its stdout/stderr go to the given binary streams.
    With opts.out, what the guest left in /out is in that directory afterwards."""
    if opts.out:
        volumes.check_out_dir(opts.out)
    tracing.check(built, opts.ftrace, opts.core, opts.out, opts.perf)
    if opts.gdb_port:
        tracing.check_gdb(built.config, opts.gdb_port)
    m = machine(built, opts)
    if m.out_tar:
        m.out_tar.unlink(missing_ok=True)
    result = qemu.boot(m, opts.timeout, stdout=stdout, stderr=stderr, on_ready=on_ready,
                       stop=stop, stop_by_signal=opts.stop)
    if m.out_tar:
        volumes.collect(m.out_tar, opts.out)
        tracing.finish(built, opts.ftrace, opts.core, opts.out)
    if result.failure:
        console.show_tail(result.console)
        raise UklError(f"{built.name} ({built.config.name}): {result.failure} [console: {result.console}]")
    return Result(result.status, result.console, m.workdir)


def run(program: str, config="ukl", args=(), smp: int = 1, timeout: float = DEFAULT_TIMEOUT,
        stdout=None, stderr=None) -> Result:
    return boot(build(program, config), Options(tuple(args), smp, timeout),
                stdout=stdout, stderr=stderr)


class Server:
    """A program booted in the background until it exits or is stopped:
    `with Server(built, opts) as s:` returns once its ports listen."""

    def __init__(self, built: Built, opts: Options, ready_timeout: float = 300.0):
        self.built, self.opts, self.ready_timeout = built, opts, ready_timeout
        self.ready, self.stop = threading.Event(), threading.Event()
        self.stdout, self.stderr = _Buffer(), _Buffer()
        self.result: Result | None = None
        self.error: Exception | None = None
        self.thread = threading.Thread(target=self._boot, daemon=True)

    def _boot(self):
        try:
            self.result = boot(self.built, self.opts, self.stdout, self.stderr,
                               on_ready=self.ready.set, stop=self.stop)
        except Exception as e:          # reported by the caller's thread
            self.error = e
        finally:
            self.ready.set()

    def __enter__(self) -> "Server":
        self.thread.start()
        if not self.ready.wait(self.ready_timeout):
            self.stop.set()
            self.thread.join()
            raise UklError(f"{self.built.name} did not listen within {self.ready_timeout:.0f}s")
        if self.error:
            raise self.error
        if self.result is not None:
            raise UklError(f"{self.built.name} exited with {self.result.status} before it "
                           f"listened: {self.stderr.text()[-300:]}")
        return self

    def wait(self, timeout: float) -> Result:
        """The program's own exit (e.g. after a SHUTDOWN command)."""
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise UklError(f"{self.built.name} did not exit within {timeout:.0f}s")
        if self.error:
            raise self.error
        return self.result

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


class _Buffer:
    """A binary stream the boot thread writes and the test reads."""

    def __init__(self):
        self.data, self.lock = bytearray(), threading.Lock()

    def write(self, b: bytes):
        with self.lock:
            self.data += b

    def flush(self):
        pass

    def text(self) -> str:
        with self.lock:
            return self.data.decode(errors="replace")
