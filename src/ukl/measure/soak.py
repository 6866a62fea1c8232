"""`ukl soak`: Redis under load for a long time (issue 26), its data on a
volume with every write fsynced.  Throughout: redis-benchmark with 50
clients, a BGSAVE every minute, an ordinary process in the guest that forks
and execs in a loop, and a checker that writes keys with known values; with
--trinity, Debian's trinity too, as nobody, fuzzing 64-bit system calls in a
tmpfs of its own.  At the end every acknowledged key is read back; then QEMU
is killed, Redis restarted on the same volume, and every key is read back
again."""
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

from .. import api
from ..build import fetch, programs
from ..errors import UklError
from ..guest import console, net, volumes
from ..layout import OUT
from .results import pyplot, write
from .serverbench import PROBE_PORT, PROBE_TOOL, _sample

TESTS = "set,get,incr,lpush,rpop,sadd,hset"   # a fixed key set: memory stays flat
BATCH = 2000                                   # requests per test per redis-benchmark run
CHECKER_PERIOD = 0.05                          # seconds between the checker's writes
FORK_LOOP = ["/bin/sh", "-c", "while :; do /bin/true; done"]
TRINITY_DIR = "/opt/trinity"
TRINITY_SEED = 7    # some seeds crash trinity itself (a negative modulo in its socket setup)
# As root in the guest: a 32 MiB tmpfs for trinity's files, then trinity,
# which drops to nobody (-X), with glibc from the same directory.
TRINITY = ["/bin/sh", "-c", "mkdir -p /fuzz && mount -t tmpfs -o size=32m tmpfs /fuzz && "
           "chmod 777 /fuzz && cd /fuzz && exec " + TRINITY_DIR + "/ld-linux-x86-64.so.2 "
           "--library-path " + TRINITY_DIR + " " + TRINITY_DIR + "/trinity --dangerous -X "
           "-q -a 64 -C 4 -l off -V /fuzz -s " + str(TRINITY_SEED)]


def _trinity_dir(dest: Path) -> Path:
    """Debian's trinity and the glibc it needs, in one directory for the guest."""
    dest.mkdir(parents=True, exist_ok=True)
    libc = fetch.unpack("libc6")
    for path in (fetch.unpack("trinity") / "usr/bin/trinity",
                 libc / "lib/x86_64-linux-gnu/libc.so.6",
                 libc / "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"):
        shutil.copy(path, dest / path.name)
    return dest


class Resp:
    """A minimal Redis client on one connection."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.file = self.sock.makefile("rb")

    def __call__(self, *args: str):
        self.sock.sendall(b"".join([f"*{len(args)}\r\n".encode()] +
                                   [f"${len(a.encode())}\r\n{a}\r\n".encode() for a in args]))
        return self._reply()

    def _reply(self):
        line = self.file.readline().rstrip(b"\r\n").decode()
        kind, rest = line[:1], line[1:]
        if kind == "$":
            return None if rest == "-1" else self.file.read(int(rest) + 2)[:-2].decode()
        if kind == "*":
            return [self._reply() for _ in range(int(rest))]
        if kind == "-":
            raise UklError(f"redis: {rest}")
        return int(rest) if kind == ":" else rest

    def close(self):
        self.sock.close()


def value(i: int) -> str:
    return f"value-{i}-{i * 7919 % 1000003}"


def _read_back(port: int, keys: int) -> int:
    """How many of the checker's first KEYS keys hold their value."""
    r, ok = Resp(port), 0
    try:
        for start in range(0, keys, 1000):
            got = r("MGET", *(f"soak:{i}" for i in range(start, min(keys, start + 1000))))
            ok += sum(v == value(start + k) for k, v in enumerate(got))
    finally:
        r.close()
    return ok


def _wait_loaded(port: int, timeout: float = 600):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            r = Resp(port)
            try:
                if r("PING") == "PONG":
                    return
            finally:
                r.close()
        except (OSError, UklError):        # LOADING, or not listening yet
            pass
        time.sleep(1)
    raise UklError(f"redis did not serve its data within {timeout:.0f}s")


class _Load:
    """redis-benchmark runs, the checker and a BGSAVE a minute, until stopped."""

    def __init__(self, port: int, clients: int):
        self.port, self.clients, self.stop = port, clients, threading.Event()
        self.requests = self.failed_batches = self.acked = self.bgsaves = 0
        self.errors: list[str] = []
        self.threads = [threading.Thread(target=f, daemon=True)
                        for f in (self._bench, self._checker, self._bgsave)]

    def _bench(self):
        while not self.stop.is_set():
            res = subprocess.run(["redis-benchmark", "-p", str(self.port), "-c",
                                  str(self.clients), "-n", str(BATCH), "-t", TESTS, "-q"],
                                 capture_output=True, text=True)
            if res.returncode == 0:
                self.requests += BATCH * len(TESTS.split(","))
            else:
                self.failed_batches += 1
                self.errors.append(f"redis-benchmark: {(res.stderr or res.stdout)[-200:]}")

    def _checker(self):
        r = Resp(self.port)
        try:
            while not self.stop.is_set():
                if r("SET", f"soak:{self.acked}", value(self.acked)) != "OK":
                    raise UklError(f"SET soak:{self.acked} was not acknowledged")
                self.acked += 1
                time.sleep(CHECKER_PERIOD)
        except (OSError, UklError) as e:
            self.errors.append(f"checker: {e}")
        finally:
            r.close()

    def _bgsave(self):
        while not self.stop.wait(60):
            r = Resp(self.port)
            try:
                r("BGSAVE", "SCHEDULE")       # after an AOF rewrite in progress, if any
                self.bgsaves += 1
            except UklError as e:                 # one still in progress
                self.errors.append(f"BGSAVE: {e}")
            finally:
                r.close()

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join()


def _snapshot(port: int, probe: int, start: float) -> dict:
    r = Resp(port)
    try:
        info = r("INFO", "memory")
    finally:
        r.close()
    rss = int(next(line.split(":")[1] for line in info.splitlines()
                   if line.startswith("used_memory_rss:")))
    sample = _sample(probe)
    return {"seconds": round(time.monotonic() - start), "redis_rss_kb": rss // 1024,
            "mem_available_kb": sample[5], "processes": sample[6]}


def _kernel_warnings(server: api.Server) -> list[str]:
    """What the killed guest's console shows of a kernel failure (the run
    itself failed only because it was killed)."""
    if server.machine is None:
        return [f"no console: {server.error}"]
    failure = console.kernel_failure(server.console.read_text(errors="replace"))
    return [failure] if failure else []


def _boot(built, data: Path, port: int, probe: int, trinity: Path | None = None) -> api.Server:
    args = programs.resolve("redis").args
    vols = [volumes.Volume(data.resolve(), "/data", "rw")]
    services = [["/bin/ukl-busy", str(PROBE_PORT)], FORK_LOOP]
    if trinity:
        vols.append(volumes.Volume(trinity.resolve(), TRINITY_DIR, "ro"))
        services.append(TRINITY)
    opts = api.Options(args=(*args, "--appendonly", "yes", "--appendfsync", "always"), smp=2,
                       timeout=24 * 3600, ports=[(port, 6379), (probe, PROBE_PORT)],
                       volumes=vols, services=services, tools=api.guest_tools(PROBE_TOOL))
    return api.Server(built, opts)


def measure(minutes: float, config: str = "ukl-ret-byp", clients: int = 50,
            trinity: bool = False, progress=print) -> dict:
    built = api.build("redis", config)
    work = OUT / "soak" / time.strftime("%Y%m%d-%H%M%S")
    data = work / "data"
    data.mkdir(parents=True)
    fuzzer = _trinity_dir(work / "trinity") if trinity else None
    port, probe = net.free_port(), net.free_port()
    samples, start = [], time.monotonic()
    server = _boot(built, data, port, probe, fuzzer)
    with server:
        _wait_loaded(port)
        samples.append(_snapshot(port, probe, start))
        with _Load(port, clients) as load:
            while time.monotonic() - start < minutes * 60 and not server.error:
                time.sleep(min(60, max(1, minutes * 60 - (time.monotonic() - start))))
                samples.append(_snapshot(port, probe, start))
                progress(f"ukl: soak {samples[-1]['seconds']}s: {load.requests} requests, "
                         f"{load.acked} keys, RSS {samples[-1]['redis_rss_kb']} kB, "
                         f"MemAvailable {samples[-1]['mem_available_kb']} kB")
        samples.append(_snapshot(port, probe, start))
        found_live = _read_back(port, load.acked)
        server.kill()
    warnings = _kernel_warnings(server)
    progress(f"ukl: soak: QEMU killed; restarting on {data}")
    port, probe = net.free_port(), net.free_port()   # the killed guest's may linger
    restarted = _boot(built, data, port, probe)
    with restarted:
        _wait_loaded(port)
        found_after_kill = _read_back(port, load.acked)
    if restarted.error:
        warnings.append(str(restarted.error).split(" [console:")[0])
    return {"config": config, "minutes": minutes, "clients": clients, "data": str(data),
            "trinity": trinity,
            "requests": load.requests, "failed_batches": load.failed_batches,
            "errors": load.errors, "bgsaves": load.bgsaves, "keys": load.acked,
            "found_live": found_live, "found_after_kill": found_after_kill,
            "kernel_warnings": warnings, "samples": samples}


def passed(results: dict) -> bool:
    return (results["found_live"] == results["found_after_kill"] == results["keys"] > 0 and
            not results["kernel_warnings"] and not results["failed_batches"])


def table(results: dict) -> str:
    first, last = results["samples"][0], results["samples"][-1]
    rows = [("configuration", f"{results['config']}, 2 CPUs, {results['clients']} clients"
             + (", trinity as nobody" if results.get("trinity") else "")),
            ("minutes", f"{results['minutes']:g}"),
            ("requests served (redis-benchmark)", results["requests"]),
            ("failed benchmark batches", results["failed_batches"]),
            ("BGSAVEs", results["bgsaves"]),
            ("keys written and acknowledged", results["keys"]),
            ("read back before the kill", results["found_live"]),
            ("read back after SIGKILL and restart", results["found_after_kill"]),
            ("kernel warnings", len(results["kernel_warnings"])),
            ("Redis RSS, start / end (kB)", f"{first['redis_rss_kb']} / {last['redis_rss_kb']}"),
            ("guest MemAvailable, start / end (kB)",
             f"{first['mem_available_kb']} / {last['mem_available_kb']}"),
            ("processes forked in the guest", last["processes"] - first["processes"]),
            ("verdict", "pass" if passed(results) else "FAIL")]
    lines = ["# Soak: Redis with appendfsync always on a volume\n", "| | |", "|---|---|",
             *(f"| {k} | {v} |" for k, v in rows)]
    lines += [f"- {e}" for e in results["errors"][:20] + results["kernel_warnings"][:20]]
    return "\n".join(lines) + "\n"


def plot(results: dict, path: Path):
    plt = pyplot()
    s = results["samples"]
    minutes = [x["seconds"] / 60 for x in s]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot(minutes, [x["redis_rss_kb"] / 1024 for x in s], "o-", label="Redis RSS")
    ax.plot(minutes, [x["mem_available_kb"] / 1024 for x in s], "s-", label="guest MemAvailable")
    ax.set_xlabel("minutes")
    ax.set_ylabel("MiB")
    ax.set_ylim(bottom=0)
    ax.set_title(f"soak, {results['config']}: {results['requests']} requests, "
                 f"{results['keys']} keys, {'pass' if passed(results) else 'FAIL'}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(minutes: float, config: str, clients: int, trinity: bool = False) -> Path:
    try:
        results = measure(minutes, config, clients, trinity)
    except OSError as e:
        raise UklError(f"the soak lost its connection to redis: {e}") from None
    dest = write("soak-", results, table, plot)
    if not passed(results):
        raise UklError(f"the soak failed: see {dest / 'table.md'}")
    return dest
