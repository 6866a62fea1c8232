"""The library API that the CLI, the tests and the benchmarks all call."""
import fcntl
import functools
import itertools
import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import configs
from .build import kernel, libc, programs
from .errors import UklError
from .guest import console, features, image, net, qemu
from .guest.features import Options
from .guest.options import DEFAULT_TIMEOUT
from .guest.spec import GuestSpec
from .layout import RUNS



@dataclass
class Built:
    program: programs.Program
    config: configs.Config     # config.kernel is the kernel built and booted
    kernel: Path         # bzImage to boot
    binary: bytes        # what goes to /app/<name>
    files: list = field(default_factory=list)   # (host path, guest path) the program needs
    vmlinux: Path | None = None    # the booted kernel's ELF, with symbols
    elf: Path | None = None        # the program's ELF, with symbols, as it runs

    @property
    def name(self) -> str:
        return self.program.name


@dataclass
class Result:
    status: int | None   # None when the host stopped the guest
    console: Path
    run_dir: Path


def guest_tools(sources: dict[str, Path]) -> dict[str, bytes]:
    """Ordinary (CPL3) programs for a guest's /bin (Options.tools), by name,
    from their C sources: what a test or a benchmark puts beside its program."""
    return {name: _guest_tool(name, Path(src)) for name, src in sources.items()}


@functools.cache
def _guest_tool(name: str, source: Path) -> bytes:
    """Built once per process: sources do not change under a running process."""
    program = programs.Program("source", name, source)
    return programs.build(program, configs.get("baseline")).read_bytes()


def build(program: str | programs.Program, config: "str | configs.Config" = "ukl") -> Built:
    """Build everything PROGRAM needs under CONFIG: C library, program, kernel
    (relinked for a UKL program)."""
    cfg = configs.get(config)
    prog = programs.resolve(program) if isinstance(program, str) else program
    if prog.kind == "binary":
        return _build_binary(prog, cfg)
    libc.build(cfg)
    binary = programs.build(prog, cfg)
    tree = programs.built_tree(prog, cfg)
    files = [(tree / src, guest) for guest, src in prog.files.items()]
    if cfg.kernel == "baseline":
        return Built(prog, cfg, kernel.build("baseline"), binary.read_bytes(), files,
                     kernel.build_dir("baseline") / "vmlinux", binary)
    if cfg.ukl:
        image_, payload = kernel.link(binary, prog.name, cfg.kernel), image.ukl_marker(prog.name)
        vmlinux, elf = image_.parent / "vmlinux", image_.parent / "app.elf"
    else:                           # an ordinary program on the UKL kernel
        image_, payload = kernel.build(cfg.kernel), binary.read_bytes()
        vmlinux, elf = kernel.build_dir(cfg.kernel) / "vmlinux", binary
    configs.check_kernel(cfg, kernel.config_values(cfg.kernel))
    return Built(prog, cfg, image_, payload, files, vmlinux, elf)


def _build_binary(prog: programs.Program, cfg: configs.Config) -> Built:
    """A host executable, unmodified: under a UKL configuration the UKL
    kernel starts it at CPL0 (no relink); otherwise it runs at CPL3."""
    files = list(prog.loads) or programs.closure(prog.path)
    kern = kernel.build(cfg.kernel)
    built_with = kernel.config_values(cfg.kernel)
    configs.check_kernel(cfg, built_with)
    if cfg.ukl and built_with.get("CONFIG_UKL_BINARIES") != "y":
        raise UklError(f"the {cfg.kernel} kernel was built without CONFIG_UKL_BINARIES: "
                       f"it cannot start {prog.name} at CPL0")
    return Built(prog, cfg, kern, prog.path.read_bytes(), files,
                 kernel.build_dir(cfg.kernel) / "vmlinux", prog.path)


def _probe_kvm(kernel_image: Path) -> bool:
    work = RUNS / "kvm-probe"
    probe = GuestSpec("true", b"#!/bin/busybox sh\nexit 0\n", [], kernel_image, work)
    initrd = image.build(work, probe)
    return qemu.boot(qemu.Machine(probe, initrd, accel="kvm"), 15).failure is None


_run_dirs: dict[tuple[str, str], tuple[Path, object]] = {}


def run_dir(built: Built) -> Path:
    """Where boots of BUILT by this process keep their consoles, initramfs,
    QEMU command and plugin output: runs/<name>-<config>, or, while another
    process holds that, runs/<name>-<config>.2 and so on.  Two `ukl run`s at
    once never share one."""
    key = (built.name, built.config.name)
    if key not in _run_dirs:
        RUNS.mkdir(parents=True, exist_ok=True)
        for n in itertools.count(1):
            path = RUNS / (f"{key[0]}-{key[1]}" + (f".{n}" if n > 1 else ""))
            held = open(RUNS / f".{path.name}.in-use", "w")
            try:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held.close()
                continue
            _run_dirs[key] = (path, held)       # held until this process exits
            break
    return _run_dirs[key][0]


def validate(opts: Options, config: "str | configs.Config", bind: bool = True) -> Options:
    """The one check of OPTS, before anything is built (see features.validate):
    OPTS marked checked, which boot() then does not check again."""
    return features.validate(opts, configs.get(config), bind)


def spec(built: Built, opts: Options, work: Path, one_console=False) -> GuestSpec:
    """The guest that boots BUILT with OPTS, as data; nothing is built.
    Without ARGS the program gets its recipe's default arguments."""
    prog = built.program
    guest = GuestSpec(built.name, built.binary, list(opts.args or prog.args), built.kernel, work,
                      env=dict(image.GUEST_ENV), tools=dict(opts.tools),
                      files=list(built.files), dirs=list(prog.dirs), one_console=one_console,
                      config=built.config.name)
    features.contribute(guest, built, opts)
    return guest


def initramfs(built: Built, opts: Options, work: Path, one_console=False) -> Path:
    """Write WORK/initramfs.cpio.gz for BUILT booted with OPTS."""
    return image.build(work, spec(built, opts, work, one_console))


def machine(built: Built, opts: Options = Options(), dry_run: bool = False) -> qemu.Machine:
    """The guest that boots BUILT: its initramfs written, its QEMU command
    decided, and, unless DRY_RUN, its published ports bound (close its
    relay if it does not boot).  A dry run binds and boots nothing: the
    private forward ports are placeholders, and KVM is used only if an
    earlier probe found it usable."""
    guest = spec(built, opts, run_dir(built))
    initrd = guest.workdir / image.INITRAMFS if dry_run else image.build(guest.workdir, guest)
    if guest.tcg_only:
        accel = "tcg"
    elif dry_run:
        accel = qemu.known_accel()
    else:
        accel = qemu.choose_accel(lambda: _probe_kvm(built.kernel))
    relay = None if dry_run else net.Relay(list(opts.ports))
    return qemu.Machine(guest, initrd, accel=accel, relay=relay)


def boot_timeout(opts: Options) -> float:
    if opts.timeout is not None:
        return opts.timeout
    return float("inf") if opts.gdb else DEFAULT_TIMEOUT


def boot(built: Built, opts: Options = Options(), stdout=None, stderr=None, on_ready=None,
         stop: threading.Event | None = None, on_start=None) -> Result:
    """Boot a built program; its stdout/stderr go to the given binary streams.
    With opts.out, what the guest left in /out is in that directory afterwards.
    ON_START gets the qemu.Machine and QEMU's process once it runs."""
    if not opts.checked:
        opts = validate(opts, built.config, bind=False)   # the relay's bind checks ports
    m = machine(built, opts)
    features.before_boot(m.spec, built, opts)
    result = qemu.boot(m, boot_timeout(opts), stdout=stdout, stderr=stderr, on_ready=on_ready,
                       stop=stop, stop_by_signal=opts.stop,
                       on_start=on_start and (lambda proc: on_start(m, proc)))
    features.finish(built, opts, m.spec)
    if result.failure:
        console.show_tail(result.console)
        raise UklError(f"{built.name} ({built.config.name}): {result.failure} [console: {result.console}]")
    return Result(result.status, result.console, m.workdir)


def run(program: str, config="ukl", args=(), smp: int = 1, timeout: float = DEFAULT_TIMEOUT,
        stdout=None, stderr=None, tools: dict | None = None) -> Result:
    return boot(build(program, config),
                Options(args=tuple(args), smp=smp, timeout=timeout, tools=tools or {}),
                stdout=stdout, stderr=stderr)


class Server:
    """A program booted in the background until it exits or is stopped:
    `with Server(built, opts) as s:` returns once its ports listen.  While
    it runs, s.machine is its QEMU command (its spec, run directory and
    ports), s.qemu QEMU's process and s.console the console's file;
    opts.stop, if given, its control channel."""

    def __init__(self, built: Built, opts: Options, ready_timeout: float = 300.0):
        self.built, self.opts, self.ready_timeout = built, opts, ready_timeout
        self.ready, self._stop = threading.Event(), threading.Event()
        self.stdout, self.stderr = _Buffer(), _Buffer()
        self.result: Result | None = None
        self.error: Exception | None = None
        self.machine: qemu.Machine | None = None
        self.qemu = None
        self.thread = threading.Thread(target=self._boot, daemon=True)

    @property
    def console(self) -> Path:
        return self.machine.serial(console.CONSOLE)

    def _started(self, machine: qemu.Machine, proc):
        self.machine, self.qemu = machine, proc

    def stop(self):
        """Stop the guest (QEMU is terminated) and wait for the boot to end."""
        self._stop.set()
        self.thread.join()

    def kill(self):
        """SIGKILL to QEMU, as a crash of the host process would end it."""
        if self.qemu is None:
            raise UklError(f"{self.built.name}: QEMU is not running")
        self.qemu.kill()
        self.thread.join(60)

    def _boot(self):
        try:
            self.result = boot(self.built, self.opts, self.stdout, self.stderr,
                               on_ready=self.ready.set, stop=self._stop,
                               on_start=self._started)
        except Exception as e:          # reported by the caller's thread
            self.error = e
        finally:
            self.ready.set()

    def __enter__(self) -> "Server":
        self.thread.start()
        if not self.ready.wait(self.ready_timeout):
            self.stop()
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
        self.stop()


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
