"""`ukl profile`: every instruction of the bench's window, attributed; its total
agrees with the bench's own count of the same window."""
import json

from ukl.measure import profile


def _check(dest, marks):
    results = json.loads((dest / "results.json").read_text())
    assert [r["config"] for r in results["runs"]] == ["baseline", "ukl-ret-byp"]
    for run in results["runs"]:
        for w in run["windows"]:
            if "clock_busy" not in w:       # a server's bench counts with the profiler
                assert abs(w["total"] - w["bench_total"]) <= 0.01 * w["bench_total"], w["name"]
            not_work = w.get("idle_loop", 0) + w.get("spin", 0)
            assert abs((sum(w["layers"].values()) + not_work) * w["operations"] - w["total"]) < 1
            stem = f"{run['config']}-{w['name'].replace(' ', '-')}"
            assert marks[run["config"]] in (dest / f"{stem}.folded").read_text()
            assert (dest / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"
    return results


def test_lebench_operation_profile():
    dest = profile.run("lebench", ["ukl-ret-byp"], ["getppid"])
    _check(dest, {"baseline": "op_getppid;getppid;entry_SYSCALL_64;do_syscall_64",
                  "ukl-ret-byp": "op_getppid;getppid;__ukl_syscall;ukl_byp_syscall;x64_sys_call"})
    table = (dest / "table.md").read_text()
    assert table.startswith("lebench getppid: guest instructions per operation, by layer")


def test_server_batch_profile():
    dest = profile.run("redis", ["ukl-ret-byp"], requests=300)
    results = _check(dest, {"baseline": "processCommand", "ukl-ret-byp": "processCommand"})
    for run in results["runs"]:
        (w,) = run["windows"]
        assert w["layers"]["TCP/IP"] > 1000 and w["layers"]["virtio-net driver"] > 100
        # The bench's count is the window's, less the idle loop and the
        # background; where no task halts, the kernel's clock agrees with it.
        total = w["total"] / w["operations"]
        assert w["bench_work"] == w["bench_total"]
        assert abs(w["bench_total"] - (total - w["idle_loop"] - w["background"])) < 1
        assert 0 < w["idle_loop"] and 0 < w["background"] < 0.05 * total
        assert abs(w["clock_busy"] - (total - w["idle_loop"])) < 0.02 * total, w
    assert "| **a request's work, as `ukl bench` reports it** |" in (dest / "table.md").read_text()
    linux, ukl = (_idle_interrupt_entry_cost(dest / f"{c}-get.folded")
                  for c in ("baseline", "ukl-ret-byp"))
    assert ukl <= linux, (ukl, linux)


def _idle_interrupt_entry_cost(folded):
    """The instructions of error_entry and error_return (or the stock ones of
    the IDT every task but a UKL task runs with) for each instruction of the
    device-interrupt stub, in interrupts that the idle loop took: the stub's
    instructions are the same per interrupt on both kernels."""
    entry_exit = stub = 0
    for line in folded.read_text().splitlines():
        stack, count = line.rsplit(" ", 1)
        frames = stack.split(";")
        if "do_idle" not in frames or len(frames) < 2 or \
                not frames[-2].endswith("irq_entries_start"):
            continue
        if frames[-1].startswith("asm_common_interrupt"):
            stub += int(count)
        elif frames[-1] in ("error_entry", "error_return",
                            "ukl_error_entry_plain", "ukl_error_return_plain"):
            entry_exit += int(count)
    assert stub, "no device interrupt was taken in the idle loop"
    return entry_exit / stub
