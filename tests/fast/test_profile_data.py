"""The profiler's host side on small inputs: parsing, folding, layers."""
import pytest

from ukl.errors import UklError
from ukl.measure import profile, profile_data
from ukl.measure.profile_data import Symbols, Window

KERNEL = 0xffffffff81000000


class FakeSymbols(Symbols):
    def __init__(self):
        self.tables = {"kernel": [(KERNEL, "entry_SYSCALL_64"), (KERNEL + 0x100, "do_syscall_64"),
                                  (KERNEL + 0x200, "tcp_sendmsg_locked"),
                                  (KERNEL + 0x300, "virtnet_poll"),
                                  (KERNEL + 0x400, "cpu_idle_poll"),
                                  (KERNEL + 0x500, "memcpy_orig")],
                       "program": [(0x401000, "main"), (0x401100, "write"),
                                   (0x402000, profile_data.VDSO)]}
        self.keys = {k: [a for a, _ in t] for k, t in self.tables.items()}
        self.libc, self.cache = {"write"}, {}


def test_plugin_output_is_parsed_window_by_window(tmp_path):
    raw = tmp_path / "profile.txt"
    raw.write_text(f"window 30\n20 401000;401100;{KERNEL + 0x210:x}\n10 401000;401005\nend\n"
                   f"window 7\n7 {KERNEL + 0x410:x}\nend\n")
    first, second = profile_data.parse(raw)
    assert first.total == 30 and first.stacks[0] == (20, [0x401000, 0x401100, KERNEL + 0x210])
    assert second == Window(7, [(7, [KERNEL + 0x410])])
    with pytest.raises(UklError, match="the profiler wrote nothing"):
        profile_data.parse(tmp_path / "missing.txt")


def test_stacks_fold_by_function_and_instructions_go_to_layers():
    window = Window(100, [(50, [0x401000, 0x401100, KERNEL + 0x10, KERNEL + 0x120]),
                          (20, [0x401000, 0x401100, 0x401108]),       # still in write()
                          (10, [0x401000, 0x401020]),
                          (15, [0x401000, 0x402010]),                 # the vDSO
                          (5, [KERNEL + 0x400])])
    folded = profile_data.fold(window, FakeSymbols())
    assert folded.splitlines() == ["main;write;entry_SYSCALL_64;do_syscall_64 50",
                                   "main;write 20", "main;[vdso] 15", "main 10",
                                   "cpu_idle_poll 5"]
    # The idle task's poll loop is not work: it is left out of the layers.
    layers = profile_data.layers(window, FakeSymbols())
    assert list(layers) == profile_data.LAYERS
    assert (layers["entry and exit"], layers["libc"], layers["application"],
            layers["timers"], layers["scheduler and idle"]) == (50, 20, 10, 15, 0)
    assert sum(layers.values()) == window.total - profile_data.idle_loop(folded) == 95


@pytest.mark.parametrize("function,layer", [
    ("tcp_sendmsg_locked", "TCP/IP"), ("ip_finish_output2", "TCP/IP"),
    ("virtqueue_add_split", "virtio-net driver"), ("vfs_write", "VFS and socket layer"),
    ("do_epoll_wait", "VFS and socket layer"), ("__ukl_syscall", "entry and exit"),
    ("ukl_byp_syscall", "entry and exit"), ("x64_sys_call", "system-call dispatch"),
    ("__do_softirq", "IRQ and softirq"), ("__schedule", "scheduler and idle"),
    ("hrtimer_interrupt", "timers"), ("__ukl_vdso_clock_gettime", "timers"),
    ("pskb_expand_head.constprop.0", "TCP/IP"), ("kmem_cache_free", "other"),
])
def test_kernel_functions_fall_in_their_layers(function, layer):
    assert profile_data.kernel_layer(function) == layer


def test_the_path_between_a_call_and_the_routine_that_does_the_work():
    folded = ("main;write;entry_SYSCALL_64 30\nmain;write;entry_SYSCALL_64;vfs_write;tcp_sendmsg 90\n"
              "main;write;entry_SYSCALL_64;vfs_write 20\nmain;read 50\n")
    assert profile_data.between(folded, "write", "tcp_sendmsg") == 50


def test_a_lebench_profile_tables_the_bench_samples_of_its_own_boot(tmp_path):
    def run(config, total, mins):
        rows = [{"op": "getppid", "size": 0, "count": 10, "min": mins, "samples": [mins]}]
        window = {"name": "getppid", "operations": 10, "total": total, "bench_total": total,
                  "layers": {"syscall entry and exit": total / 10}, "bench_min": mins}
        return {"config": config, "windows": [window],
                "bench": {"config": config, "metric": "guest instructions", "rows": rows}}
    results = {"target": "lebench", "runs": [run("ukl-ret-byp", 1500, 150),
                                             run("baseline", 2000, 200)]}
    assert ("| **an operation's cost, as `ukl bench` reports it (the minimum sample)** | "
            "**200** | **150** |") in profile.table(results).splitlines()
    for r in results["runs"]:
        r["windows"] = []               # no flame graphs: only bench.md
    profile._files({"target": "redis", "runs": [{"config": "ukl", "windows": []}]}, tmp_path)
    assert not (tmp_path / "bench.md").exists()
    profile._files(results, tmp_path)
    lines = (tmp_path / "bench.md").read_text().splitlines()
    assert "no mode-switch counts" in lines[0]
    assert lines[4] == "| getppid | 0 | 200 | 150 | -25.0% |"


def test_busy_poll_spin_is_the_loop_but_for_received_packets():
    folded = ("main;epoll_wait;ep_poll;napi_busy_loop;__napi_busy_loop;virtnet_poll 50\n"
              "main;epoll_wait;ep_poll;napi_busy_loop;__napi_busy_loop;virtnet_poll;"
              "receive_buf;napi_gro_receive 30\n"
              "main;epoll_wait;ep_poll;napi_busy_loop;__napi_busy_loop;busy_poll_stop 7\n"
              "main;read;tcp_recvmsg 100\n")
    assert profile_data.busy_poll_spin(folded) == 57
    assert profile_data.busy_poll_spin("main;read;tcp_recvmsg 100\n") == 0
