"""redis-shortcut: Redis whose connections read and write with the UKL TCP
shortcuts serves clients as the unpatched recipe does, under the fastest
configuration, where the shortcuts are taken."""
import re
import subprocess
import time

from test_apps import CLIENT_TIMEOUT, redis_cli, serve

BIG = "x" * 100000          # several reads of 16 KiB, and writes past the send buffer
SCRIPT = [("SET", "greeting", "hello"), ("GET", "greeting"), ("INCR", "counter"),
          ("LPUSH", "list", "a", "b", "c"), ("LRANGE", "list", "0", "-1"),
          ("SET", "big", BIG), ("STRLEN", "big"), ("GETRANGE", "big", "99990", "-1"),
          ("HSET", "h", "f", "v"), ("HGETALL", "h"), ("INCR", "greeting"),
          ("DEL", "greeting"), ("GET", "greeting"), ("EXISTS", "nosuch")]


def _replies(program):
    srv, port = serve(program, "ukl-ret-byp", 6379)
    with srv:
        replies = [redis_cli(port, *cmd) for cmd in SCRIPT]
        replies.append(len(subprocess.run(["redis-cli", "-p", str(port), "GET", "big"],
                                          capture_output=True, text=True).stdout.strip()))
        if program == "redis-shortcut":
            bench = subprocess.run(["redis-benchmark", "-p", str(port), "-c", "50", "-n", "2000",
                                    "-t", "set,get", "-q"], capture_output=True, text=True,
                                   timeout=CLIENT_TIMEOUT)
            assert bench.returncode == 0, bench.stderr
            assert re.search(r"GET: [\d.]+ requests per second", bench.stdout), bench.stdout
            assert redis_cli(port, "BGSAVE") == "Background saving started"
            while "rdb_bgsave_in_progress:1" in redis_cli(port, "INFO", "persistence"):
                time.sleep(0.2)
            assert "rdb_last_bgsave_status:ok" in redis_cli(port, "INFO", "persistence")
        subprocess.run(["redis-cli", "-p", str(port), "SHUTDOWN", "NOSAVE"],
                       capture_output=True, timeout=CLIENT_TIMEOUT)
        assert srv.wait(60).status == 0
    return replies


def test_redis_shortcut_replies_as_redis():
    shortcut = _replies("redis-shortcut")
    assert shortcut == _replies("redis")
    assert shortcut[-1] == len(BIG)
