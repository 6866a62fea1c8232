"""memcached-shortcut: Memcached whose connections read with the UKL TCP
shortcut serves clients as the unpatched recipe does: 4 threads on 2 CPUs,
under ukl-ret-byp, where the shortcuts are taken, with 20 clients at once."""
import threading

from test_apps import memcached
from ukl import api
from ukl.build import programs
from ukl.guest import net

SCRIPT = [("set fruit 0 0 5", "apple"), ("get fruit",), ("append fruit 0 0 3", "pie"),
          ("get fruit",), ("incr fruit 1",), ("set n 0 0 1", "7"), ("incr n 5",),
          ("delete fruit", "get fruit"), ("get nosuch",), ("bogus command",)]


def _serve(program):
    args = (*programs.resolve(program).args, "-t", "4")
    built = api.build(program, "ukl-ret-byp")
    port = net.free_port()
    return api.Server(built, api.Options(args, smp=2, ports=[(port, 11211)])), port


def _client(port, n, errors):
    for i in range(50):
        value = f"v{n}-{i}"
        got = memcached(port, f"set k{n}:{i} 0 0 {len(value)}", value, f"get k{n}:{i}")
        if got != f"STORED\r\nVALUE k{n}:{i} 0 {len(value)}\r\n{value}\r\nEND\r\n":
            errors.append(got)


def _replies(program, clients):
    srv, port = _serve(program)
    with srv:
        replies = [memcached(port, *lines) for lines in SCRIPT]
        if clients:
            errors = []
            threads = [threading.Thread(target=_client, args=(port, n, errors))
                       for n in range(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors, errors[:3]
            assert "STAT threads 4" in memcached(port, "stats")
    return replies


def test_memcached_shortcut_replies_as_memcached():
    assert _replies("memcached-shortcut", 20) == _replies("memcached", 0)
