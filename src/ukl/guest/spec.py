"""What a guest is, as data: the one record the image builder and the QEMU
machine read.  Each `ukl run` feature (guest/features/) adds its part; the
static /init (init.sh) reads the files they put under /etc/ukl."""
import shlex
from dataclasses import dataclass, field
from pathlib import Path

# Where /init looks: shell fragments it sources at each point of the run,
# in name order, and the command that runs the program.
HOOKS = {
    "setup": "etc/ukl/setup.d",    # before the program (mounts, services, tracing...)
    "start": "etc/ukl/start.d",    # in the shell that execs the program, with its pid
    "finish": "etc/ukl/finish.d",  # after it exits, before its status goes to the host
    "exit": "etc/ukl/exit.d",      # after the status (e.g. /out leaves for the host)
}
COMMAND = "etc/ukl/command"        # the program's command line, shell-quoted
PROGRAM = "etc/ukl/program"        # its path, for /init's messages
ONE_CONSOLE = "etc/ukl/one-console"   # present: everything goes to the console
PIDFILE = "/run/ukl-program.pid"   # the program's pid, written before it execs


@dataclass
class GuestSpec:
    name: str                      # the program is /app/<name>
    program: bytes
    argv: list[str]                # without argv[0]
    kernel: Path                   # the bzImage to boot
    workdir: Path                  # the run's directory on the host (consoles, sockets)
    env: dict[str, str] = field(default_factory=dict)
    # /bin/<name>: bytes, a file, or a function that builds one (called when
    # the initramfs is written, so that a dry run builds nothing it shows)
    tools: dict = field(default_factory=dict)
    files: list = field(default_factory=list)   # (host path, guest path) copied in
    dirs: list = field(default_factory=list)    # empty guest directories
    data: dict[str, bytes] = field(default_factory=dict)    # generated files, by guest path
    wrappers: list = field(default_factory=list)        # commands the program runs under,
    inner_wrappers: list = field(default_factory=list)  # outside and inside `env -i`
    one_console: bool = False      # a machine with one serial port (as urunc starts it)
    config: str = ""               # the configuration's name, for what `ukl run` says
    # The machine.
    kernel_args: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)    # QEMU arguments
    daemons: list = field(default_factory=list)    # daemons.Daemon: host processes QEMU uses
    shared_memory: bool = False    # guest RAM in a shared memfd (for vhost-user daemons)
    ports: list = field(default_factory=list)           # (host, guest) TCP ports published
    smp: int = 1
    memory_mb: int = 512
    cpu: str = "max"
    icount: bool = False
    icount_sleep: bool = True
    tcg_only: bool = False         # KVM cannot serve (gdb's breakpoints)

    def hook(self, point: str, name: str, script: str):
        """A fragment /init sources at POINT (HOOKS), ordered by NAME.  It may
    use $ukl_out, $ukl_err and $ukl_status, the devices of the program's
    output, errors and status."""
        self.data[f"{HOOKS[point]}/{name}"] = script.encode()

    def command(self) -> list[str]:
        """The program's command line as /init runs it: the wrappers, the
        shell that records the pid and runs the start hooks, a clean
        environment, the inner wrappers, the program."""
        argv = [f"/app/{self.name}", *self.argv]
        start = (f"echo $$ >{PIDFILE}; for f in /{HOOKS['start']}/*; do "
                 '[ -e "$f" ] && . "$f"; done; exec "$@"')
        return [*(w for wrap in self.wrappers for w in wrap), "sh", "-c", start, argv[0],
                "env", "-i", *(f"{k}={v}" for k, v in self.env.items()),
                *(w for wrap in self.inner_wrappers for w in wrap), *argv]

    def guest_files(self) -> dict[str, bytes]:
        """What /init reads, beside the features' own files."""
        files = {COMMAND: (shlex.join(self.command()) + "\n").encode(),
                 PROGRAM: f"/app/{self.name}\n".encode(), **self.data}
        if self.one_console:
            files[ONE_CONSOLE] = b""
        return files
