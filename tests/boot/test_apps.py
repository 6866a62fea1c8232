"""Real servers, unmodified, from Debian sources: each under UKL and on the baseline,
reached from the host through published ports with the standard clients."""
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from ukl import api
from ukl.build import programs
from ukl.guest import net, volumes
from ukl.layout import ROOT

pytestmark = pytest.mark.parametrize("config", ["ukl", "baseline"])
CLIENT_TIMEOUT = 120


def serve(program, config, guest_port, args=(), volumes=()):
    """Boot PROGRAM with GUEST_PORT published on a free host port."""
    built = api.build(program, config)
    host = net.free_port()
    return api.Server(built, api.Options(tuple(args), ports=[(host, guest_port)],
                                         volumes=list(volumes))), host


def redis_cli(port, *args):
    res = subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True,
                         timeout=CLIENT_TIMEOUT)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def test_redis(config):
    recipe_args = programs.resolve("redis").args
    srv, port = serve("redis", config, 6379, (*recipe_args, "--enable-debug-command", "yes"))
    with srv:
        assert redis_cli(port, "SET", "greeting", "hello") == "OK"
        assert redis_cli(port, "GET", "greeting") == "hello"
        assert redis_cli(port, "INCR", "counter") == "1"
        assert redis_cli(port, "LPUSH", "list", "a", "b", "c") == "3"
        assert redis_cli(port, "LRANGE", "list", "0", "-1").split() == ["c", "b", "a"]

        bench = subprocess.run(["redis-benchmark", "-p", str(port), "-n", "2000", "-t", "set,get",
                                "-q"], capture_output=True, text=True, timeout=CLIENT_TIMEOUT)
        assert bench.returncode == 0 and "error" not in bench.stdout.lower() + bench.stderr.lower()
        assert re.search(r"SET: [\d.]+ requests per second", bench.stdout), bench.stdout
        assert re.search(r"GET: [\d.]+ requests per second", bench.stdout), bench.stdout

        # BGSAVE forks; clients keep writing while the child saves.
        written, stop = [], threading.Event()

        def writer():
            with socket.create_connection(("127.0.0.1", port)) as s:
                f = s.makefile("rb")
                while not stop.is_set():
                    i = len(written)
                    s.sendall(f"SET w:{i} v{i}\r\n".encode())
                    assert f.readline() == b"+OK\r\n"
                    written.append(i)

        t = threading.Thread(target=writer)
        t.start()
        while len(written) < 50:
            time.sleep(0.05)
        before = len(written)
        assert redis_cli(port, "BGSAVE") == "Background saving started"
        deadline = time.monotonic() + CLIENT_TIMEOUT
        while "rdb_bgsave_in_progress:1" in redis_cli(port, "INFO", "persistence"):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        stop.set()
        t.join()
        assert "rdb_last_bgsave_status:ok" in redis_cli(port, "INFO", "persistence")
        assert len(written) > before, "the writer did not keep writing during BGSAVE"

        # Load the RDB that BGSAVE wrote: the snapshot at fork time, consistent.
        assert redis_cli(port, "DEBUG", "RELOAD", "NOSAVE") == "OK"
        assert redis_cli(port, "GET", "greeting") == "hello"
        assert redis_cli(port, "LRANGE", "list", "0", "-1").split() == ["c", "b", "a"]
        saved = int(redis_cli(port, "EVAL", "return #redis.call('KEYS', 'w:*')", "0"))
        assert before <= saved <= len(written)
        for i in (0, before - 1, saved - 1):
            assert redis_cli(port, "GET", f"w:{i}") == f"v{i}"
        assert redis_cli(port, "EXISTS", f"w:{saved}") == "0"

        subprocess.run(["redis-cli", "-p", str(port), "SHUTDOWN", "NOSAVE"],
                       capture_output=True, timeout=CLIENT_TIMEOUT)
        assert srv.wait(60).status == 0


def memcached(port, *lines):
    with socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT) as s:
        s.sendall("".join(f"{line}\r\n" for line in lines).encode())
        s.shutdown(socket.SHUT_WR)
        return b"".join(iter(lambda: s.recv(4096), b"")).decode()


def test_memcached(config):
    srv, port = serve("memcached", config, 11211)
    with srv:
        assert memcached(port, "set fruit 0 0 5", "apple") == "STORED\r\n"
        assert memcached(port, "get fruit") == "VALUE fruit 0 5\r\napple\r\nEND\r\n"
        assert memcached(port, "delete fruit", "get fruit") == "DELETED\r\nEND\r\n"


def test_nginx(config, tmp_path):
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(1 << 20))
    recipe_args = programs.resolve("nginx").args
    args = [*recipe_args[:-1], recipe_args[-1] + " error_log stderr notice;"]
    srv, port = serve("nginx", config, 80, args,
                      [volumes.parse_volume(f"{big}:/nginx/html/big.bin")])
    with srv:
        got = subprocess.run(["curl", "-sf", f"http://127.0.0.1:{port}/big.bin"],
                             capture_output=True, timeout=CLIENT_TIMEOUT)
        assert got.returncode == 0
        assert hashlib.sha256(got.stdout).digest() == hashlib.sha256(big.read_bytes()).digest()
        wrk = subprocess.run(["wrk", "-t1", "-c4", "-d2s", f"http://127.0.0.1:{port}/"],
                             capture_output=True, text=True, timeout=CLIENT_TIMEOUT)
        assert wrk.returncode == 0, wrk.stderr
        assert re.search(r"(\d+) requests in", wrk.stdout), wrk.stdout
        assert "Socket errors" not in wrk.stdout and "Non-2xx" not in wrk.stdout, wrk.stdout
        workers = re.findall(r"start worker process \d+", srv.stderr.text())
        assert len(workers) == 2, srv.stderr.text()


def test_fio(config, runs):
    res = runs("fio", config)
    assert res.status == 0, res.stderr
    job = json.loads(res.stdout[res.stdout.index("{"):])["jobs"][0]
    assert job["read"]["io_bytes"] > 0 and job["write"]["io_bytes"] > 0
    assert job["read"]["io_bytes"] + job["write"]["io_bytes"] == 4 << 20


def test_echo_server_readiness_and_sigterm(config):
    """Through the command line: the readiness line, 1000 round trips, then SIGTERM,
    which kills echo in the guest: 143."""
    port = net.free_port()
    cmd = [sys.executable, "-m", "ukl.cli", "run", "echo", "-p", f"{port}:7"]
    if config == "baseline":
        cmd.append("--baseline")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = ""
    try:
        for line in proc.stderr:
            if "is ready" in line:
                break
        assert line.strip() == f"ukl: echo is ready: 127.0.0.1:{port} -> guest port 7"
        with socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT) as s:
            f = s.makefile("rb")
            for i in range(1000):
                s.sendall(f"round trip {i}\n".encode())
                assert f.readline() == f"round trip {i}\n".encode()
        proc.send_signal(signal.SIGTERM)         # echo keeps the default action
        assert proc.wait(30) == 143
        err = proc.stderr.read()
        assert "ukl: sent SIGTERM to echo" in err
        assert "ukl: echo was killed by SIGTERM (exit 143)" in err
    finally:
        proc.kill()
        proc.wait()


def test_makefile_project(config, tmp_path):
    """An unmodified Makefile, given CC=ukl-cc (or CC='ukl-cc --baseline')."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "examples" / "project", project)
    ukl_cc = os.path.join(os.path.dirname(sys.executable), "ukl-cc")
    cc = ukl_cc if config == "ukl" else f"{ukl_cc} --baseline"
    build = subprocess.run(["make", f"CC={cc}"], cwd=project, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    if config == "ukl":
        assert "ukl-cc: warning: dlopen, dlsym linked" in build.stderr
    out = subprocess.run([sys.executable, "-m", "ukl.cli", "run", str(project / "stats"),
                          *(["--baseline"] if config == "baseline" else []), "--", "1", "2", "3"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "n=3 mean=2.000 stddev=0.816 min=1.000 max=3.000"
    if config == "ukl":
        assert lines[1] == ("plugin: Dynamic loading not supported: "
                            "a UKL program is linked into the kernel and cannot load code")
    else:
        assert lines[1] == "plugin: Dynamic loading not supported"


def test_a_client_that_connects_before_the_server_listens_is_served(config):
    # As a user's script does: start the server, wait until the port
    # accepts, then make a request.  The port accepts long before the
    # guest's nginx listens; the connection must be held, not reset.
    srv, port = serve("nginx", config, 80)
    srv.thread.start()
    try:
        deadline = time.monotonic() + CLIENT_TIMEOUT
        while True:
            try:
                client = socket.create_connection(("127.0.0.1", port), timeout=300)
                break
            except OSError:
                assert time.monotonic() < deadline, "the published port never accepted"
                time.sleep(0.05)
        early = not srv.ready.is_set()
        client.sendall(b"GET / HTTP/1.0\r\n\r\n")
        reply = b"".join(iter(lambda: client.recv(65536), b""))
        client.close()
    finally:
        srv.stop()
    assert early                        # the condition: it connected before ready
    assert reply.startswith(b"HTTP/1.1 200 OK") and b"Welcome to nginx!" in reply, reply[:200]
