"""Debian's binary packages as Debian built them (`ukl run --deb`, issue 53):
the package's program, linked against Debian's glibc and libraries, starts
at CPL0 with the files and libraries its Depends closure ships, and serves
the host as the same file does at CPL3 on stock Linux."""
import re
import socket
import subprocess
import urllib.request

import pytest

from ukl.guest import net
from uklcli import Run, assert_one_line_error, ukl, until_started

CLIENT_TIMEOUT = 120


def _started(run) -> str:
    """What `ukl run` said until the server was ready."""
    said = ""
    for line in until_started(run.proc.stderr):
        said += line
        if " is ready: " in line:
            return said
    raise AssertionError(f"never ready: {said[-2000:]}")


def _redis_cli(port, *args):
    res = subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True,
                         timeout=CLIENT_TIMEOUT)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


@pytest.mark.parametrize("config,cpl", [("ukl-ret-byp", 0), ("baseline", 3)])
def test_debians_redis_server_serves_the_host(config, cpl):
    port = net.free_port()
    with Run("--deb", "redis-server", "--config", config, "-p", f"{port}:6379", "--",
             "--protected-mode", "no", "--save", "") as run:
        said = _started(run)
        assert _redis_cli(port, "SET", "greeting", "hello") == "OK"
        assert _redis_cli(port, "GET", "greeting") == "hello"
        info = _redis_cli(port, "INFO", "server")
        assert "redis_version:7.0.15" in info and "gcc_version:12.2.0" in info  # Debian's build
        _redis_cli(port, "SHUTDOWN", "NOSAVE")
        status, _, err = run.finish(CLIENT_TIMEOUT)
    err = said + err
    assert status == 0, err[-2000:]
    assert re.search(r"^ukl: Debian's redis-server 5:7\.0\.15-1~deb12u\d+: /usr/bin/redis-server "
                     r"runs as /app/redis-server$", err, re.M), err[-2000:]
    said = re.search(r"^ukl: the kernel says under ukl-ret-byp: ukl: redis-server\[\d+\] runs "
                     r"/app/redis-server at CPL0 \(ukl=byp,ret\)$", err, re.M)
    assert bool(said) == (cpl == 0), err[-2000:]


def test_debians_memcached_serves_the_host_at_cpl0():
    port = net.free_port()
    with Run("--deb", "memcached", "--config", "ukl-ret-byp", "-p", f"{port}:11211", "--",
             "-u", "root") as run:
        said = _started(run)
        with socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT) as s:
            f = s.makefile("rb")
            s.sendall(b"set k 0 0 5\r\nhello\r\nget k\r\nversion\r\n")
            replies = [f.readline() for _ in range(5)]
        assert replies[:4] == [b"STORED\r\n", b"VALUE k 0 5\r\n", b"hello\r\n", b"END\r\n"]
        assert replies[4].startswith(b"VERSION 1.6.18")
        run.proc.terminate()
        _, _, err = run.finish(CLIENT_TIMEOUT)
    err = said + err
    assert re.search(r"ukl: memcached\[\d+\] runs /app/memcached at CPL0", err), err[-2000:]


SITE = """server {
    listen 80 default_server;
    root /usr/share/nginx/html;
    location ~ ^/re(g+)ex$ { return 200 "matched $1\\n"; }
}
"""


def test_debians_nginx_serves_a_regex_location_with_pcre_jit_at_cpl0(tmp_path):
    """Debian's nginx.conf as it is (user www-data, its worker forked and
    dropped to www-data), the site in from a volume; PCRE2 compiles the
    regex into executable memory at run time (pcre_jit)."""
    (tmp_path / "default").write_text(SITE)
    port = net.free_port()
    with Run("--deb", "nginx", "--config", "ukl-ret-byp", "-p", f"{port}:80", "-v",
             f"{tmp_path}:/etc/nginx/sites-enabled:ro", "--", "-e", "stderr", "-g",
             "daemon off; pcre_jit on;") as run:
        said = _started(run)
        get = lambda path: urllib.request.urlopen(f"http://127.0.0.1:{port}{path}",
                                                  timeout=CLIENT_TIMEOUT).read().decode()
        assert "Welcome to nginx!" in get("/")
        assert get("/reggggex") == "matched gggg\n"
        run.proc.terminate()
        status, _, err = run.finish(CLIENT_TIMEOUT)
    err = said + err
    assert status == 0, err[-2000:]
    assert re.search(r"ukl: nginx\[\d+\] runs /app/nginx at CPL0", err), err[-2000:]


@pytest.mark.parametrize("args,error", [
    (["--deb", "ukl-no-such-package"], "--deb ukl-no-such-package: Unable to locate package"),
    (["--deb", "redis-server=0.1-1"], "--deb redis-server=0.1-1: Version '0.1-1' for "
                                      "'redis-server' was not found"),
    (["--deb", "redis-tools"], "--deb redis-tools: 4 programs (/usr/bin/redis-benchmark, "
                               "/usr/bin/redis-check-aof, /usr/bin/redis-check-rdb, "
                               "/usr/bin/redis-cli); choose one with --entrypoint"),
    (["--deb", "awk"], "--deb awk: Package 'awk' has no installation candidate"),
    (["--deb", "redis-server", "--entrypoint", "/usr/bin/nosuch"],
     "--entrypoint /usr/bin/nosuch: not a file of redis-server or what it depends on"),
    (["--binary", "/bin/true", "--entrypoint", "/bin/true"], "--entrypoint applies to --deb only"),
])
def test_a_bad_package_or_entrypoint_is_one_line(args, error):
    res = ukl("run", *args, "--dry-run")
    assert_one_line_error(res, error)
