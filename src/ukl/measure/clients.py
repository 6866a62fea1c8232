"""The clients on the host that `ukl bench` drives a server with; a recipe's
[bench] table names one (build/recipes.py, BENCH_CLIENTS).  A client sends a
batch of requests and returns the host-side rate and latencies, which under
TCG measure the emulator as much as the guest: the bench keeps them as noisy."""
import csv
import http.client
import io
import re
import socket
import subprocess
import time
from dataclasses import dataclass
from typing import Callable

from ..errors import UklError

TIMEOUT = 1800


def _redis_benchmark(port: int, test: str, n: int, connections: int) -> dict:
    res = subprocess.run(["redis-benchmark", "-p", str(port), "-c", str(connections), "-P", "1",
                          "-n", str(n), "-t", test, "--csv"], capture_output=True, text=True,
                         timeout=TIMEOUT)
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    if res.returncode != 0 or len(rows) != 1:
        raise UklError(f"redis-benchmark -t {test} failed: {(res.stderr or res.stdout)[-200:]}")
    row = rows[0]
    return {"rps": float(row["rps"]), "p50_ms": float(row["p50_latency_ms"]),
            "p99_ms": float(row["p99_latency_ms"])}


def _timed(n: int, one_request) -> dict:
    """N sequential requests; host-side rate and latency percentiles."""
    lat = []
    start = time.monotonic()
    for i in range(n):
        t = time.monotonic()
        one_request(i)
        lat.append(time.monotonic() - t)
    total = time.monotonic() - start
    lat.sort()
    return {"rps": n / total, "p50_ms": 1e3 * lat[n // 2], "p99_ms": 1e3 * lat[(99 * n) // 100]}


def _memcached(port: int, test: str, n: int, connections: int) -> dict:
    """The memcached text protocol over one connection, one request at a time."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as s:
        f = s.makefile("rb")

        def request(i):
            if test == "set":
                s.sendall(b"set key:%d 0 0 8\r\nvalue%03d\r\n" % (i % 100, i % 1000))
                assert f.readline() == b"STORED\r\n"
            else:
                s.sendall(b"get key:%d\r\n" % (i % 100))
                while f.readline() not in (b"END\r\n", b""):
                    pass
        return _timed(n, request)


def _http(port: int, test: str, n: int, connections: int) -> dict:
    """HTTP/1.1 GETs of / over one kept-alive connection.  (wrk runs for a
    duration, not a count, so the nginx tests use it and this does not.)"""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)

    def request(i):
        conn.request("GET", "/")
        res = conn.getresponse()
        res.read()
        if res.status != 200:
            raise UklError(f"the server answered HTTP {res.status}")
    try:
        return _timed(n, request)
    finally:
        conn.close()


# pgbench's built-in scripts, by test name.
PGBENCH_SCRIPTS = {"select-only": ["-b", "select-only"], "tpcb-like": ["-b", "tpcb-like"]}
PGBENCH_SERVER = ["-h", "127.0.0.1", "-U", "postgres"]
PGBENCH_TPS = re.compile(r"^tps = ([0-9.]+) \(without initial connection time\)$", re.M)
PGBENCH_LATENCY = re.compile(r"^latency average = ([0-9.]+) ms$", re.M)


def pg_wait(port: int, timeout: float = 120):
    """Until the server accepts connections: its port listens before the
    startup process (a recovery, say) has finished."""
    deadline = time.monotonic() + timeout
    while subprocess.run(["pg_isready", *PGBENCH_SERVER, "-p", str(port)],
                         capture_output=True).returncode != 0:
        if time.monotonic() > deadline:
            raise UklError(f"postgres did not accept connections within {timeout:.0f}s")
        time.sleep(0.5)


def _pgbench_prepare(port: int):
    """pgbench's tables at scale 1 (100,000 accounts), once per boot."""
    pg_wait(port)
    res = subprocess.run(["pgbench", *PGBENCH_SERVER, "-p", str(port), "-i", "-q", "-s", "1",
                          "postgres"], capture_output=True, text=True, timeout=TIMEOUT)
    if res.returncode != 0:
        raise UklError(f"pgbench -i failed: {res.stderr.strip()[-200:]}")


def _pgbench(port: int, test: str, n: int, connections: int) -> dict:
    """N transactions of a built-in script over one connection; pgbench gives
    the rate and the mean latency, not percentiles."""
    res = subprocess.run(["pgbench", *PGBENCH_SERVER, "-p", str(port), "-n",
                          *PGBENCH_SCRIPTS[test], "-t", str(n), "postgres"],
                         capture_output=True, text=True, timeout=TIMEOUT)
    tps, latency = PGBENCH_TPS.search(res.stdout), PGBENCH_LATENCY.search(res.stdout)
    if res.returncode != 0 or not (tps and latency):
        raise UklError(f"pgbench -b {test} failed: {(res.stderr or res.stdout).strip()[-200:]}")
    return {"rps": float(tps.group(1)), "p50_ms": None, "p99_ms": None,
            "mean_ms": float(latency.group(1))}


@dataclass(frozen=True)
class Client:
    send: Callable                  # (port, test, requests, connections) -> host-side numbers
    reset: list | None              # requests that reset the server, each answered by a
                                    # line (None: none, nor a connection)
    connections: bool = False       # it can open more than one connection (--clients)
    prepare: Callable | None = None     # (port): once per boot, before the warm-up


# The keys memcached's gets find.
MEMCACHED_KEYS = [b"set key:%d 0 0 8\r\nvalue%03d\r\n" % (i, i) for i in range(100)]
CLIENTS = {
    "redis-benchmark": Client(_redis_benchmark, [b"FLUSHALL\r\n"], connections=True),
    "memcached": Client(_memcached, [b"flush_all\r\n", *MEMCACHED_KEYS]),
    "http": Client(_http, []),
    "pgbench": Client(_pgbench, None, prepare=_pgbench_prepare),
}


def reset(client: Client, port: int):
    """Before every batch, outside the measurement: each starts from the same state."""
    if client.reset is None:
        return
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        f = s.makefile("rb")
        for line in client.reset:
            s.sendall(line)
            f.readline()
