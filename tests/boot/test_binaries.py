"""Unmodified executables (`ukl run --binary`), built by the host's ordinary
compilers with no ukl-cc: the UKL kernel, built once, starts each at CPL0
with no relink, and each gives what the same file gives at CPL3 on stock
Linux."""
import functools
import io
import re
import shutil
import subprocess
import tarfile
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection
from pathlib import Path

import pytest

from ukl import api, configs, oci, symbols
from ukl.build import libc, programs
from ukl.guest import image as guest_image, net
from ukl.guest.features import Options
from ukl.layout import CACHE, EXAMPLES, TEST_PROGRAMS
from uklcli import UKL

# (name, source, compiler flags); "musl" builds with the baseline's musl-gcc
BINARIES = {
    "hello-glibc": (EXAMPLES / "hello.c", ["-static"]),
    "hello-glibc-dynamic": (EXAMPLES / "hello.c", []),
    "hello-musl": (EXAMPLES / "hello.c", ["musl", "-static"]),
    "cpl": (EXAMPLES / "cpl.c", ["-static"]),
    "sysregs": (TEST_PROGRAMS / "sysregs.c", ["-static"]),
    "redzone": (TEST_PROGRAMS / "redzone.c", ["-static"]),
    "uklexec": (TEST_PROGRAMS / "uklexec.c", ["-static"]),
    "execmark": (TEST_PROGRAMS / "execmark.c", ["-static"]),
    "uprobed": (TEST_PROGRAMS / "uprobed.c", ["-static"]),
    "unmapself": (TEST_PROGRAMS / "unmapself.c", ["musl", "-static", "-pthread"]),
}


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    out = tmp_path_factory.mktemp("binaries")

    @functools.cache
    def build(name: str) -> Path:
        src, flags = BINARIES[name]
        cc = ["gcc"]
        if "musl" in flags:
            cc = [str(libc.build(configs.get("baseline")) / "bin" / "musl-gcc")]
            flags = [f for f in flags if f != "musl"]
        subprocess.run([*cc, "-O2", *flags, str(src), "-o", str(out / name)], check=True)
        return out / name
    return build


@functools.cache
def _boot(path: Path, config: str, smp: int = 1, tools: tuple = (), args: tuple = ()):
    built = api.build(programs.binary(str(path)), config)
    out, err = io.BytesIO(), io.BytesIO()
    res = api.boot(built, Options(args=args, smp=smp, tools=dict(tools)), stdout=out,
                   stderr=err)
    return res.status, out.getvalue().decode(), res.console.read_text(errors="replace")


def test_a_static_glibc_binary_runs_at_cpl0(binary):
    status, out, console = _boot(binary("cpl"), "ukl")
    assert "CPL 0\n" in out, console[-2000:]
    assert "CR0 = 0x" in out and "PE=1 PG=1" in out      # a ring-0-only read succeeded
    assert "CR4.SMEP = 1, CR4.SMAP = 1" in out
    assert status == 0
    base_status, base_out, _ = _boot(binary("cpl"), "baseline")
    assert "CPL 3\n" in base_out and "reading CR0 trapped" in base_out


@pytest.mark.parametrize("config,smp", [("ukl", 1), ("ukl-ret-byp", 2)])
@pytest.mark.parametrize("name", ["hello-glibc", "hello-glibc-dynamic", "hello-musl"])
def test_output_and_status_as_on_linux(binary, name, config, smp):
    status, out, console = _boot(binary(name), config, smp)
    base_status, base_out, _ = _boot(binary(name), "baseline")
    assert base_status == 3 and "Hello from UKL" in base_out
    assert (status, out) == (base_status, base_out), console[-2000:]


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_syscall_keeps_registers_as_on_linux(binary, config):
    status, out, console = _boot(binary("sysregs"), config)
    assert _boot(binary("sysregs"), "baseline")[:2] == (0, "registers kept\n")
    assert (status, out) == (0, "registers kept\n"), console[-2000:]


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_nothing_writes_the_red_zone(binary, config):
    status, out, console = _boot(binary("redzone"), config)
    assert (status, out) == (0, "red zone kept\n"), console[-2000:]


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_threads_that_free_their_own_stack_end_as_on_linux(binary, config):
    status, out, console = _boot(binary("unmapself"), config, 2)
    assert _boot(binary("unmapself"), "baseline", 2)[:2] == (0, "64 detached threads ended\n")
    assert (status, out) == (0, "64 detached threads ended\n"), console[-2000:]


def test_only_who_may_load_a_module_starts_a_file_at_cpl0(binary):
    """uklexec runs at CPL3 on the UKL kernel: its children try as uid 1000
    and as root without CAP_SYS_MODULE; then root starts /bin/cpl at CPL0."""
    tools = (("cpl", binary("cpl")),)
    status, out, console = _boot(binary("uklexec"), "cpl3-on-ukl", 1, tools, ("/bin/cpl",))
    lines = out.splitlines()
    assert "uid 1000: EPERM" in lines, console[-2000:]
    assert "root without CAP_SYS_MODULE: EPERM" in lines
    assert "CPL 0" in lines and status == 0         # root's exec ran /bin/cpl at CPL0
    # The stock kernel knows no such flag.
    base = _boot(binary("uklexec"), "baseline", 1, tools, ("/bin/cpl",))[1].splitlines()
    assert "root: EINVAL" in base


def test_a_second_user_cannot_write_what_the_program_executes(binary):
    status, out, console = _boot(binary("execmark"), "ukl")
    assert out.splitlines() == ["mode 0666: EACCES", "uid 1000's: EACCES", "root's 0644: mapped",
                                "root without CAP_SYS_MODULE appends: refused",
                                "unsealed memfd: EACCES", "sealed memfd: mapped"], console[-2000:]
    assert "ukl: /tmp/ukl-lib refused as CPL0 code: writable by group or others" in console
    base = _boot(binary("execmark"), "baseline")[1].splitlines()
    assert base == ["mode 0666: mapped", "uid 1000's: mapped", "root's 0644: mapped",
                    "root without CAP_SYS_MODULE appends: written",
                    "unsealed memfd: mapped", "sealed memfd: mapped"]


@pytest.mark.parametrize("where", ["volume", "group-writable"])
def test_a_file_another_party_may_change_is_not_started_at_cpl0(binary, tmp_path, where):
    """Root starts a file at CPL0 from a virtiofs volume, whose host may
    change it, or with mode 0775: refused (uklexec, at CPL3 on the UKL
    kernel).  The same file from the initramfs starts: see
    test_only_who_may_load_a_module_starts_a_file_at_cpl0."""
    shutil.copy(binary("cpl"), tmp_path / "cpl")
    if where == "volume":
        volume, target = f"{tmp_path}:/vol", "/vol/cpl"
    else:
        (tmp_path / "cpl").chmod(0o775)
        volume, target = f"{tmp_path / 'cpl'}:/bin/cplw", "/bin/cplw"
    res = subprocess.run([*UKL, "run", "--binary", str(binary("uklexec")), "--config",
                          "cpl3-on-ukl", "-v", volume, "--", target],
                         capture_output=True, text=True, timeout=600)
    assert "root: Permission denied" in res.stdout.splitlines(), res.stderr[-2000:]
    why = "on a filesystem another machine" if where == "volume" else "writable by group"
    assert f"ukl: {target} refused as CPL0 code: {why}" in res.stderr, res.stderr[-2000:]


def test_ukl_run_names_the_file_it_started_at_cpl0(binary):
    res = subprocess.run([*UKL, "run", "--binary", str(binary("cpl")), "--config",
                          "ukl-ret-byp"], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    assert re.search(r"^ukl: the kernel says under ukl-ret-byp: ukl: cpl\[\d+\] runs /app/cpl "
                     r"at CPL0 \(ukl=byp,ret\)$", res.stderr, re.M), res.stderr[-2000:]


def test_an_image_of_a_binary_boots_it_at_cpl0(binary, tmp_path):
    """`ukl image --binary`: the kernel as built, no program linked in; the
    file, its libraries and ukl-exec in the image's initramfs."""
    dest = tmp_path / "cpl.img"
    made = subprocess.run([*UKL, "image", "--binary", str(binary("cpl")), "--config",
                           "ukl-ret-byp", "-o", str(dest)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr[-2000:]
    res = subprocess.run([*UKL, "boot", str(dest), "--timeout", "300"], capture_output=True,
                         text=True, timeout=400)
    console = res.stdout.replace("\r\n", "\n")
    assert "CPL 0\n" in console, console[-2000:]
    assert res.returncode == 0, res.stderr[-2000:]


def test_an_oci_image_of_a_binary_starts_it_at_cpl0_as_urunc_boots_it(binary, tmp_path):
    dest = tmp_path / "cpl.tar"
    made = subprocess.run([*UKL, "oci", "--binary", str(binary("cpl")), "--config",
                           "ukl-ret-byp", "-o", str(dest)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr[-2000:]
    with tarfile.open(dest) as t:
        t.extractall(tmp_path / "layout")
    _, config, files = oci.read_layout(tmp_path / "layout")
    assert {"app/cpl", "bin/ukl-exec"} <= set(guest_image.read(files[oci.INITRD]))
    (tmp_path / "kernel").write_bytes(files[".boot/kernel"])
    (tmp_path / "initrd").write_bytes(files[".boot/initrd"])
    cmdline = oci.urunc_cmdline(config["config"]["Env"], "10.0.2.15", "10.0.2.2",
                                "255.255.255.0")
    # urunc's QEMU command (test_oci.py), without its NIC
    res = subprocess.run(["qemu-system-x86_64", "-m", "256M", "-cpu", "max", "-nographic",
                          "-vga", "none", "-kernel", str(tmp_path / "kernel"), "-initrd",
                          str(tmp_path / "initrd"), "-no-reboot", "-serial", "stdio",
                          "-nodefaults", "-append", cmdline], stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=400)
    console = res.stdout.replace("\r\n", "\n")
    assert "CPL 0\n" in console, console[-2000:]
    assert "ukl: /app/cpl exited with status 0" in console, console[-2000:]


def _file_offset(path: Path, symbol: str) -> int:
    """Where SYMBOL's code is in the file PATH, as uprobe_events wants it."""
    addr = {name: addr for addr, name in symbols.nm(path)}[symbol]
    segments = subprocess.run(["readelf", "-lW", str(path)], capture_output=True, text=True,
                              check=True).stdout
    for line in segments.splitlines():
        fields = line.split()
        if fields[:1] == ["LOAD"]:
            offset, vaddr, size = (int(f, 16) for f in (fields[1], fields[2], fields[4]))
            if vaddr <= addr < vaddr + size:
                return addr - vaddr + offset
    raise AssertionError(f"{symbol} is in no segment of {path}")


def test_a_uprobe_does_not_fire_in_a_ukl_process(binary):
    """A uprobe on the file: its int3 at CPL0 would be a kernel breakpoint."""
    path = binary("uprobed")
    tracing = "/sys/kernel/tracing"
    prepare = (f"mount -t tracefs nodev {tracing} 2>/dev/null; "
               f"echo 'p:ukltest /app/uprobed:{_file_offset(path, 'probed'):#x}' "
               f">{tracing}/uprobe_events && echo 1 >{tracing}/events/uprobes/ukltest/enable")

    def run(config):
        out = io.BytesIO()
        res = api.boot(api.build(programs.binary(str(path)), config), Options(prepare=prepare),
                       stdout=out, stderr=io.BytesIO())
        return res.status, out.getvalue().decode()
    assert run("baseline") == (0, "sum 9\nukltest hits: 3\n")
    assert run("ukl") == (0, "sum 9\nukltest hits: 0\n")


GO = Path("/usr/bin/go")                # Debian's golang-go (setup.sh)


def _get(port: int, path: str) -> str:
    conn = HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("GET", path)
        return conn.getresponse().read().decode()
    finally:
        conn.close()


@pytest.mark.parametrize("config", ["baseline", "ukl-ret-byp"])
def test_a_static_go_server_serves_load_at_cpl0(tmp_path, config):
    """Go's runtime makes its own raw system calls, runs threads, reads the
    vDSO clock, preempts busy goroutines with SIGURG and collects garbage:
    a net/http server built by Debian's Go with CGO_ENABLED=0 serves 8
    clients' 400 requests under ukl-ret-byp, at CPL0, as on Linux."""
    exe = tmp_path / "goserver"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CGO_ENABLED": "0",
           "GOCACHE": str(CACHE / "go-build"), "GOPATH": str(tmp_path / "gopath")}
    subprocess.run([str(GO), "build", "-trimpath", "-o", str(exe), "."], check=True, env=env,
                   cwd=TEST_PROGRAMS / "goserver", timeout=900)
    port = net.free_port()
    server = api.Server(api.build(programs.binary(str(exe)), config),
                        Options(smp=2, ports=[(port, 8080)], timeout=600))
    with server:
        with ThreadPoolExecutor(8) as pool:
            replies = list(pool.map(lambda _: _get(port, "/"), range(400)))
        assert _get(port, "/quit") == "bye\n"
        server.thread.join(120)
    assert sorted(int(r.split()[1]) for r in replies) == list(range(1, 401))
    cpl = 0 if config != "baseline" else 3
    assert server.stdout.text() == (f"CPL {cpl}\nserved 400 requests\n"
                                    "garbage collected: true\n")
    assert server.result.status == 0
