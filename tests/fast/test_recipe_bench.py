"""A recipe's [bench] table: how `ukl bench` and `ukl profile` drive a server,
as data.  Its schema, its errors, and that it stays out of the build's key."""
import subprocess

import pytest

from ukl.build import recipes
from ukl.errors import UklError
from ukl.measure import clients, profile, serverbench

HEAD = 'description = "x"\nsource = "redis"\nsteps = [["make"]]\nports = [6379, 6380]\n'


def test_the_servers_are_the_recipes_with_a_bench_table():
    assert serverbench.servers() == ["memcached", "memcached-shortcut", "nginx", "postgres",
                                     "redis", "redis-shortcut"]
    assert profile.targets() == ["lebench", *serverbench.servers()]
    assert recipes.load("redis").bench == recipes.Bench("redis-benchmark",
                                                        ("get", "set", "lpush"), 6379)
    assert recipes.load("memcached").bench == recipes.Bench("memcached", ("get", "set"), 11211)
    assert recipes.load("nginx").bench == recipes.Bench("http", ("get",), 80)
    assert recipes.load("postgres").bench == recipes.Bench(
        "pgbench", ("select-only", "tpcb-like"), 5432, (("POSTGRES_HOST_AUTH_METHOD", "trust"),))
    assert recipes.load("libevent").bench is None


def test_every_client_a_recipe_may_name_exists():
    assert set(clients.CLIENTS) == set(recipes.BENCH_CLIENTS)
    for name, client in clients.CLIENTS.items():
        assert client.connections == (name == "redis-benchmark")


def test_a_port_is_chosen_among_the_recipes_ports():
    text = HEAD + '\n[bench]\nclient = "redis-benchmark"\ntests = ["get"]\nport = 6380\n'
    assert recipes.parse("ok", text).bench.port == 6380
    one_port = text.replace("6379, 6380", "6380").replace("port = 6380\n", "")
    assert recipes.parse("ok", one_port).bench.port == 6380


@pytest.mark.parametrize("bench,error", [
    ('[bench]\nclient = "memtier"\ntests = ["get"]\nport = 6379',
     r"recipe bad: \[bench\]: client must be one of redis-benchmark, memcached, http"),
    ('[bench]\ntests = ["get"]\nport = 6379', "client must be one of"),
    ('[bench]\nclient = ["http"]\ntests = ["get"]\nport = 6379', "client must be one of"),
    ('[bench]\nclient = "redis-benchmark"\nport = 6379', "tests must be a list of distinct"),
    ('[bench]\nclient = "redis-benchmark"\ntests = []\nport = 6379', "tests must be a list"),
    ('[bench]\nclient = "redis-benchmark"\ntests = "get"\nport = 6379', "tests must be a list"),
    ('[bench]\nclient = "redis-benchmark"\ntests = ["get", "get"]\nport = 6379',
     "tests must be a list of distinct test names"),
    ('[bench]\nclient = "memcached"\ntests = ["get", "incr"]\nport = 6379',
     "memcached has no test 'incr'; valid: get, set"),
    ('[bench]\nclient = "redis-benchmark"\ntests = ["get"]',
     r"port must be one of the recipe's ports \(6379, 6380\)"),
    ('[bench]\nclient = "redis-benchmark"\ntests = ["get"]\nport = 80', "port must be one of"),
    ('[bench]\nclient = "redis-benchmark"\ntests = ["get"]\nport = "6379"', "port must be one"),
    ('[bench]\nclient = "redis-benchmark"\ntests = ["get"]\nport = 6379\nrequests = 5',
     "unknown key 'requests'; valid: client, tests, port"),
    ('bench = "redis"', r"\[bench\] must be a table, the last one in the file"),
    ('[bench]\nclient = "redis-benchmark"\ntests = ["get"]\nport = 6379\n[files]\n"/a" = "a"',
     "must be a table, the last one in the file"),
])
def test_a_malformed_bench_table_is_refused_in_one_line(bench, error):
    with pytest.raises(UklError, match=error) as e:
        recipes.parse("bad", HEAD + bench + "\n")
    assert "\n" not in str(e.value)


def test_pgbench_reports_its_rate_and_mean_latency(monkeypatch):
    out = ("transaction type: <builtin: select only>\nnumber of transactions actually processed:"
           " 100/100\nlatency average = 1.250 ms\ninitial connection time = 3.1 ms\n"
           "tps = 800.123456 (without initial connection time)\n")
    calls = []

    def run(cmd, **kw):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, out, "")
    monkeypatch.setattr(subprocess, "run", run)
    got = clients.CLIENTS["pgbench"].send(5433, "select-only", 100, 1)
    assert got == {"rps": 800.123456, "p50_ms": None, "p99_ms": None, "mean_ms": 1.25}
    assert calls[0][-6:] == ["-n", "-b", "select-only", "-t", "100", "postgres"]
    assert "-p" in calls[0] and "5433" in calls[0]


def test_a_recipe_without_ports_cannot_be_benched():
    text = HEAD.replace("ports = [6379, 6380]\n", "") + '[bench]\nclient = "http"\ntests = ["get"]'
    with pytest.raises(UklError, match="port must be one of the recipe's ports "
                                       r"\(it has none\)"):
        recipes.parse("bad", text)


def test_the_bench_table_is_not_part_of_the_build_key():
    table = '\n# How it is measured.\n[bench]  # the client\nclient = "http"\ntests = ["get"]\n'
    assert recipes.build_text(HEAD + table) == HEAD
    assert recipes.build_text(HEAD) == HEAD
    for name in ("redis", "memcached", "nginx"):
        text = recipes.path(name).read_text()
        assert "[bench]" in text and "[bench]" not in recipes.build_text(text)

