"""The fast tier: no kernel, no C library, no guest.  `pytest -m "not boot"` runs these."""
import base64
import dataclasses
import hashlib
import json
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ukl import api, configs, oci
from ukl.build import cc, fetch, programs, recipes, series, steps
from ukl.guest import image, net, qemu, volumes
from ukl.measure import bench, fuzz, serverbench, soak
from ukl.errors import UklError
from ukl.layout import ROOT


def test_every_recipe_parses():
    assert {"redis", "memcached", "libevent", "nginx", "fio"} <= set(recipes.names())
    for name in recipes.names():
        r = recipes.load(name)
        assert r.source in fetch.pins(), f"{name}: source {r.source} is not pinned"
        assert all(recipes.path(d).is_file() for d in r.depends)
    assert recipes.load("redis").ports == (6379,)
    assert recipes.load("memcached").depends == ("libevent",)
    assert recipes.load("sqlite-wal").sources == ("sqlite-wal.c",)


@pytest.mark.parametrize("text,error", [
    ('description = "x"\nsource = "redis"', "missing key 'steps'"),
    ('description = "x"\nsource = "redis"\nsteps = [["make"]]\nport = [1]', "unknown key 'port'"),
    ('description = "x"\nsource = "redis"\nsteps = ["make"]', "steps must be a list of commands"),
    ('description = "x"\nsource = "r"\nsteps = [["make"]]\nports = [0]', "TCP port numbers"),
    ('description = "x"\nsource = "r"\nsteps = [["make"]]\ndirs = ["logs"]', "not absolute"),
    ('description = "x"\nsource = "r"\nsteps = [["make"]]\nsources = ["no.c"]',
     "source file 'no.c' is not a file under apps/"),
    ('description = ', "recipe bad:"),
])
def test_bad_recipes_are_refused(text, error):
    with pytest.raises(UklError, match=error):
        recipes.parse("bad", text)


def test_resolver_kinds(tmp_path):
    assert programs.resolve("hello").kind == "example"
    redis = programs.resolve("redis")
    assert (redis.kind, redis.ports, redis.name) == ("recipe", (6379,), "redis")
    src = tmp_path / "tool.c"
    src.write_text("int main(void) { return 0; }\n")
    assert programs.resolve(str(src)) == programs.Program("source", "tool", src)
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(UklError, match="neither a C or C.. file nor a program linked"):
        programs.resolve(str(text))
    with pytest.raises(UklError, match="not an app recipe .*memcached"):
        programs.resolve("no-such")


def test_port_and_volume_specs(tmp_path):
    assert net.parse_port("8080:80") == (8080, 80)
    assert net.parse_port("6379") == (6379, 6379)
    d, f = tmp_path.resolve(), tmp_path / "f"
    f.write_text("x")
    assert volumes.parse_volume(f"{tmp_path}:/data") == volumes.Volume(d, "/data", "rw")
    assert volumes.parse_volume(f"{tmp_path}:/data:ro") == volumes.Volume(d, "/data", "ro")
    assert volumes.parse_volume(f"{f}:/etc/f") == volumes.Volume(f.resolve(), "/etc/f", "copy")
    # A missing directory is a volume to make before the boot; parsing makes nothing.
    assert volumes.parse_volume(f"{tmp_path}/new/d:/d:ro") == \
        volumes.Volume(d / "new" / "d", "/d", "ro")
    assert not (tmp_path / "new").exists()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(UklError, match=f"host port {s.getsockname()[1]} is in use"):
            net.check_host_ports([s.getsockname()[1]])


def test_the_initramfs_holds_the_program_its_files_users_and_the_static_init(guest, tmp_path):
    site = tmp_path / "site"
    (site / "docs").mkdir(parents=True)
    (site / "index.html").write_text("hi")
    (site / "docs" / "a.txt").write_text("a")
    g = guest(api.Options(args=("-x", "a b")), name="server", files=[(site, "/srv/www")])
    assert g.files["app/server"][1] == b"\x7fELF..."
    assert g.files["srv/www/index.html"][1] == b"hi"
    assert g.files["srv/www/docs/a.txt"][1] == b"a"
    assert b"nobody:x:65534:65534" in g.files["etc/passwd"][1]
    assert g.files["init"][1] == image.INIT.read_bytes()
    assert "ip addr add 10.0.2.15/24 dev eth0" in g.text("init")
    assert g.command.endswith(" env -i HOME=/ PATH=/bin TERM=dumb "
                              "/app/server -x 'a b'\n")
    assert g.text("etc/ukl/program") == "/app/server\n"
    assert sorted(n for n in g.files if n.startswith("bin/")) == ["bin/busybox"]


def test_a_test_s_own_tools_go_to_its_guest_s_bin_only(guest):
    g = guest(api.Options(tools={"ukl-intruder": b"\x7fELF intruder"}))
    assert g.files["bin/ukl-intruder"] == (0o100755, b"\x7fELF intruder")
    assert "bin/ukl-intruder" not in guest().files


def test_a_recipe_s_directories_are_made(guest):
    from ukl.build import recipes
    recipe = recipes.parse("srv", 'description = "x"\nsource = "redis"\nsteps = [["make"]]\n'
                                  'dirs = ["/var/log/server"]\nargs = ["--port", "1"]')
    g = guest(program=programs.Program("recipe", "srv", recipe=recipe))
    assert g.files["var/log/server"][0] & 0o170000 == 0o040000
    assert "/app/srv --port 1\n" in g.command


def test_a_one_console_guest_writes_everything_to_the_console(guest):
    """For urunc's machine, with one serial port: /init sees the marker file."""
    g = guest(one_console=True)
    assert "etc/ukl/one-console" in g.files
    assert "etc/ukl/one-console" not in guest().files
    init = g.text("init")
    assert "[ -e /etc/ukl/one-console ]" in init
    assert "ukl_out=console ukl_err=console ukl_status=console" in init
    assert '"$@" </dev/null >/dev/$ukl_out 2>/dev/$ukl_err' in init


def test_the_api_refuses_what_the_cli_refuses():
    """One validation: an API caller gets the CLI's errors."""
    config = configs.get("ukl")
    for opts, error in ((api.Options(perf=True, strace=True, out=Path("/tmp")),
                         "--perf and --strace both run the program"),
                        (api.Options(core=True), "--core needs --out"),
                        (api.Options(smp=0), "--smp must be at least 1"),
                        (api.Options(ports=[(5000, 1), (5000, 2)]), "published twice"),
                        (api.Options(gdb=True), "--gdb debugs a UKL program")):
        with pytest.raises(UklError, match=error):
            api.validate(opts, "baseline" if opts.gdb else config, bind=False)


def test_bench_table_is_relative_to_linux_whatever_the_order():
    row = lambda op, n: {"op": op, "size": 0, "min": n}
    results = {"runs": [
        {"config": "ukl", "metric": "guest instructions", "rows": [row("getppid", 50)]},
        {"config": "baseline", "metric": "guest instructions", "rows": [row("getppid", 200)]},
    ]}
    head, _, first = bench.table(results).splitlines()[:3]
    assert head.startswith("| operation | size | baseline (min guest instructions) | ukl (min)")
    assert first == "| getppid | 0 | 200 | 50 | -75.0% |"
    assert results["runs"][0]["config"] == "ukl"


def test_server_bench_table_reports_work_total_spread_events_and_noisy_host_numbers():
    def run(config, work, spin=0):
        return {"config": config, "rows": [
            {"test": "get", "repeat": i, "requests": 100, "per_request": v,
             "total_per_request": v + spin,
             "host_noisy": {"rps": 900.0, "p50_ms": 1.0, "p99_ms": None},
             "events_per_request": {"interrupts": 1 + i, "context_switches": 2 * i,
                                    "softirqs": 1, "busy_poll_rx": 0}}
            for i, v in enumerate(work)]}
    results = {"server": "redis", "requests": 100,
               "runs": [run("ukl", [40000, 40100]), run("baseline", [50000, 50250, 50100]),
                        run("baseline-busypoll", [45000, 45000, 45000], spin=5000)]}
    lines = serverbench.table(results).splitlines()
    assert lines[6] == ("| configuration | work | total | work vs Linux | work vs busy polling "
                        "| total vs busy polling | batch spread, work / total | interrupts | context switches "
                        "| busy-poll packets | noisy: rps | noisy: p50/p99 ms |")
    # Stock Linux first; the events of the median batch: the baseline's third, ukl's second.
    assert lines[8] == ("| baseline | 50100 | 50100 | +0.0% | +11.3% | +0.2% | 0.50% / 0.50% | 3.00 | "
                        "4.00 | 0.00 | 900 | 1.00/- |")
    assert lines[9] == ("| ukl | 40050 | 40050 | -20.1% | -11.0% | -19.9% | 0.25% / 0.25% | 2.00 | "
                        "2.00 | 0.00 | 900 | 1.00/- |")
    assert lines[10].startswith("| baseline-busypoll | 45000 | 50000 | -10.2% | +0.0% | +0.0% |")


def test_server_bench_rows_get_the_switches_of_their_own_window(tmp_path):
    # The counter writes a line at every probe sample; sample 3 closes the batch.
    log = tmp_path / "switches.jsonl"
    log.write_text("".join(f'{{"syscall": {n}, "sysret": {n}}}\n' for n in (900, 5, 7, 200)))
    rows = [{"window": 3, "requests": 100, "per_request": 1000.0}]
    serverbench._add_switches(rows, log)
    assert rows[0]["switches"] == {"syscall": 2.0, "sysret": 2.0}
    assert rows[0]["est_cycles"] == {"swapgs=0": 1136, "swapgs=30": 1136}


def test_a_series_that_fails_to_apply_leaves_no_usable_tree(tmp_path, monkeypatch):
    """Nothing may build from upstream alone after `git am` failed half way."""
    tree = tmp_path / "linux"
    tree.mkdir()
    (tree / "a.c").write_text("int a;\n")
    git = [*series.GIT, "-C", str(tree)]
    for step in (["init", "-q"], ["add", "a.c"], ["commit", "-q", "-m", "upstream"],
                 ["tag", "upstream"]):
        subprocess.run([*git, *step], check=True)
    subprocess.run([*git, "update-ref", series.APPLIED, "HEAD"], check=True)
    steps.mark(tree, "an-older-series")
    bad = tmp_path / "0001-x.patch"
    bad.write_text("From: A <a@example.org>\nSubject: [PATCH] x\n\n---\ndiff --git a/b.c b/b.c\n"
                   "--- a/b.c\n+++ b/b.c\n@@ -1 +1 @@\n-int b;\n+int c;\n")
    monkeypatch.setattr(series, "TREES", tmp_path)
    monkeypatch.setattr(series, "patches", lambda name: [bad])
    for _ in range(2):
        with pytest.raises(UklError):
            series.tree("linux")
        assert steps.recorded(tree) is None
        assert not (tree / ".git" / "rebase-apply").exists()


def test_configurations_are_one_record_each():
    assert configs.get("ukl-ret-byp").kernel_args() == ["ukl=ret,byp"]
    assert configs.get("ukl").kernel_args() == [] and configs.get("ukl").ukl
    assert not configs.get("cpl3-on-ukl").ukl and configs.get("cpl3-on-ukl").kernel == "ukl"
    with pytest.raises(UklError, match="valid: baseline, ukl, ukl-ret"):
        configs.get("ukl-fast")
    built = {"CONFIG_UNIKERNEL_LINUX": "y", "CONFIG_UKL_RET": "y"}
    configs.check_kernel(configs.get("ukl-ret"), built)
    with pytest.raises(UklError, match="needs CONFIG_UKL_BYP, which the ukl kernel was not built"):
        configs.check_kernel(configs.get("ukl-ret-byp"), built)


def test_the_ukl_kernel_is_resolved_once_into_the_configuration(monkeypatch):
    monkeypatch.setenv("UKL_KERNEL", "ukl-debug")
    assert configs.get("ukl-ret-byp").kernel == "ukl-debug"
    assert configs.get("cpl3-on-ukl").kernel == "ukl-debug"
    assert configs.get("baseline").kernel == "baseline"
    monkeypatch.setenv("UKL_KERNEL", "baseline")
    with pytest.raises(UklError, match="unknown UKL kernel 'baseline' in UKL_KERNEL"):
        configs.get("ukl")


def test_every_build_step_takes_the_kernel_from_the_configuration(monkeypatch, tmp_path):
    """A Config naming the mitigated kernel selects its C library, programs,
    recipes and ukl-cc's kernel without UKL_KERNEL; only configs reads it."""
    from ukl.build import libc
    monkeypatch.delenv("UKL_KERNEL", raising=False)
    mitigated = dataclasses.replace(configs.get("ukl-ret-byp"), kernel="ukl-mitigated")
    assert configs.get("ukl").kernel == "ukl"
    assert libc.variant(mitigated) == "ukl-thunks" and libc.variant(configs.get("ukl")) == "ukl"
    assert libc.sysroot(mitigated).name == "ukl-thunks"
    baseline_here = dataclasses.replace(configs.get("cpl3-on-ukl"), kernel="ukl-mitigated")
    assert libc.variant(baseline_here) == "baseline"
    assert libc.variant(libc.of_kind(baseline_here, "ukl")) == "ukl-thunks"
    assert recipes.ukl_cc_env(mitigated) == {"UKL_KERNEL": "ukl-mitigated"}
    assert recipes.ukl_cc_env(baseline_here) == {}
    wrapper = recipes._compiler(tmp_path, mitigated).read_text()
    assert "UKL_KERNEL=ukl-mitigated exec" in wrapper and "--baseline" not in wrapper
    readers = [p.name for p in (Path(configs.__file__).parent / "build").glob("*.py")
               if "environ" in p.read_text()
               or "ukl_kernel(" in p.read_text()]
    assert readers == []


def test_relay_queues_connections_for_a_backlog_of_one():
    """QEMU's hostfwd listens with a backlog of 1; 50 clients at once all get through."""
    import threading
    inner = socket.socket()
    relay = None
    try:
        relay = net.Relay([(net.free_port(), 1)])
        inner.bind(("127.0.0.1", relay.forwards[0][0]))
        inner.listen(1)
        relay.start()
        relay.open()

        def echo():
            while True:
                c, _ = inner.accept()
                threading.Thread(target=lambda c=c: (c.sendall(c.recv(16)), c.close()),
                                 daemon=True).start()
        threading.Thread(target=echo, daemon=True).start()
        port = relay.listeners[0].getsockname()[1]
        clients = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(50)]
        for i, c in enumerate(clients):
            c.sendall(b"%d" % i)
        assert [c.recv(16) for c in clients] == [b"%d" % i for i in range(50)]
    finally:
        inner.close()
        if relay:
            relay.close()


def test_relay_holds_a_connection_until_the_guest_listens():
    inner = socket.socket()
    relay = net.Relay([(net.free_port(), 1)])
    try:
        inner.bind(("127.0.0.1", relay.forwards[0][0]))
        inner.listen(1)
        inner.settimeout(1)
        relay.start()
        client = socket.create_connection(("127.0.0.1", relay.listeners[0].getsockname()[1]))
        with pytest.raises(socket.timeout):         # held: nothing reaches the guest yet
            inner.accept()
        relay.open()
        upstream, _ = inner.accept()
        client.sendall(b"early")
        assert upstream.recv(16) == b"early"
        upstream.close()
        client.close()
    finally:
        inner.close()
        relay.close()


@pytest.mark.parametrize("signoff,errors", [
    ("Signed-off-by: A <a@example.org>\n", []),
    ("Signed-off-by: B <b@example.org>\n", ["no Signed-off-by: from its author, A <a@example.org>"]),
    ("", ["no Signed-off-by: from its author, A <a@example.org>"]),
])
def test_patches_are_signed_off_by_their_author(tmp_path, signoff, errors):
    patch = tmp_path / "0001-x.patch"
    patch.write_text(f"From: A <a@example.org>\nSubject: [PATCH] x: y\n\nWhy.\n\n{signoff}---\n"
                     " a.c | 2 +-\n")
    assert series.signoff_errors(patch) == errors


def test_a_stamped_step_runs_once_per_key_and_never_leaves_half_a_result(tmp_path):
    dest, calls = tmp_path / "step", []

    def build(d):
        calls.append(d)
        (d / "out").write_text("x")
        with steps.lock(d):                          # the same process may lock again
            pass
    steps.stamped(dest, "k1", build)
    steps.stamped(dest, "k1", build)
    assert len(calls) == 1 and steps.recorded(dest) == "k1"

    def fail(d):
        raise RuntimeError("interrupted")
    with pytest.raises(RuntimeError):
        steps.stamped(dest, "k2", fail)
    assert steps.recorded(dest) is None and not (dest / "out").exists()

    old_layout = tmp_path / "accel"             # a plain file where a step now goes
    old_layout.write_text("tcg")
    steps.stamped(old_layout, "k", build)
    assert steps.recorded(old_layout) == "k"


def test_estimated_cycles_weigh_mode_switches_by_their_published_costs():
    from ukl.measure import cycles
    # A stock system call: SYSCALL, SYSRET, two SWAPGS, among 100 instructions.
    got = cycles.estimates(100, {"syscall": 1, "sysret": 1, "swapgs": 2})
    assert got == {"swapgs=0": 100 + 34 + 34 - 2, "swapgs=30": 100 + 34 + 34 + 58}
    # IRET costs about 220 cycles more than SYSRET.
    assert cycles.estimates(1, {"iret": 1})["swapgs=0"] - cycles.estimates(
        1, {"sysret": 1})["swapgs=0"] == 220


def test_a_program_needing_a_kernel_part_the_kernel_lacks_is_refused_by_name():
    from ukl.build import kernel
    abi = {"__ukl_syscall": 1}
    kernel.check_interface({"__ukl_syscall"}, abi, "ukl")
    with pytest.raises(UklError, match=r"needs __ukl_shortcuts, which the ukl kernel does not "
                                       r"have \(built without CONFIG_UKL_SHORTCUTS\)"):
        kernel.check_interface({"__ukl_syscall", "__ukl_shortcuts"}, abi, "ukl")


def test_code_for_a_kernel_with_thunks_takes_them_and_nothing_else_does():
    """UKL code for the mitigated kernel is compiled with its thunks, and a
    program built without them (or for them) is refused by the other kernel."""
    from ukl.build import kernel
    assert kernel.thunk_cflags("ukl") == []
    assert "-mfunction-return=thunk-extern" in kernel.thunk_cflags("ukl-mitigated")
    assert "-mindirect-branch=thunk-extern" in kernel.thunk_cflags("ukl-mitigated")
    assert kernel._kernel_symbol("__x86_indirect_thunk_r13") == "__ukl_indirect_thunk_r13"
    assert kernel._kernel_symbol("__x86_return_thunk") == "__ukl_return_thunk"
    assert kernel._kernel_symbol("__ukl_syscall") == "__ukl_syscall"
    abi = {"__ukl_syscall": 1, "__ukl_return_thunk": 2, "__ukl_indirect_thunk_rax": 3}
    kernel.check_interface({"__ukl_syscall", "__ukl_return_thunk"}, abi, "ukl-mitigated")
    with pytest.raises(UklError, match=r"compiled without the return thunks of the "
                                       r"ukl-mitigated kernel: rebuild it with "
                                       r"UKL_KERNEL=ukl-mitigated"):
        kernel.check_interface({"__ukl_syscall"}, abi, "ukl-mitigated")
    with pytest.raises(UklError, match=r"needs __ukl_indirect_thunk_rax, which the ukl kernel "
                                       r"does not have \(built without "
                                       r"CONFIG_MITIGATION_RETPOLINE\)"):
        kernel.check_interface({"__ukl_syscall", "__ukl_indirect_thunk_rax"},
                               {"__ukl_syscall": 1}, "ukl")


def test_code_left_without_thunks_is_found_by_function(tmp_path):
    from ukl.build import cc
    src = tmp_path / "t.s"
    src.write_text("\t.text\nplain:\n\tret\nthunked:\n\tjmp __x86_return_thunk\n"
                   "branchy:\n\tcall __x86_indirect_thunk_rax\n\tjmp *8(%rdi)\n")
    subprocess.run(["gcc", "-c", str(src), "-o", str(tmp_path / "t.o")], check=True)
    assert cc.unthunked(tmp_path / "t.o") == ["plain", "branchy"]


def _ukl_as():
    import importlib.util
    from importlib.machinery import SourceFileLoader
    from ukl.build import cc
    loader = SourceFileLoader("ukl_as", str(cc.TOOLCHAIN / "as"))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("ukl_as", loader))
    loader.exec_module(module)
    return module


def test_the_assembler_sends_hand_written_returns_and_branches_through_the_thunks():
    uas = _ukl_as()
    source = ("f:\n\tcall *%r9\n\tjmp *%rdx  # tail\n\tjmp *56(%rdi)\n\trep ret\n"
              "\tretq\n1:\tret\n\tmovq $ret, %rax\n\tmov %rcx,%rsp ; jmp *%rax\n")
    both = {"--ukl-thunk-branches", "--ukl-thunk-returns"}
    assert uas.rewrite(source, both) == (
        "f:\n\tcall __x86_indirect_thunk_r9\n\tjmp __x86_indirect_thunk_rdx\n"
        "\tjmp *56(%rdi)\n\tjmp __x86_return_thunk\n\tjmp __x86_return_thunk\n"
        "1:\tjmp __x86_return_thunk\n\tmovq $ret, %rax\n"
        "\tmov %rcx,%rsp ; jmp __x86_indirect_thunk_rax\n")
    assert uas.rewrite(source) == source


def test_the_assembler_turns_what_faults_at_cpl3_into_a_trap_naming_the_fault(tmp_path):
    """`int $N` (not the breakpoint) and privileged instructions become the
    UD1 from which a UKL kernel sends Linux's SIGSEGV; cc's check then
    passes, while the same bytes assembled without ukl-cc are refused."""
    uas = _ukl_as()
    source = ("f:\n\tint $0x80\n1:\tint $4 # overflow\n\tint $3\n\tint3\n\thlt\n"
              "\tmovq %rax, %cr4\n\tmov %cr4,%rax\n\trdmsr; wrmsr\n\t.int 5\n\tret\n")
    rewritten = uas.rewrite(source)
    assert rewritten == (
        "f:\n\t.byte 0x0f, 0xb9, 0x48, 128\n1:\t.byte 0x0f, 0xb9, 0x48, 4\n\tint $3\n"
        "\tint3\n\t.byte 0x0f, 0xb9, 0x10\n\t.byte 0x0f, 0xb9, 0x10\n\tmov %cr4,%rax\n"
        "\t.byte 0x0f, 0xb9, 0x10; .byte 0x0f, 0xb9, 0x10\n\t.int 5\n\tret\n")
    for name, text in (("plain", source), ("rewritten", rewritten)):
        (tmp_path / f"{name}.s").write_text("\t.text\n\t.globl f\n\t.type f, @function\n" + text)
        subprocess.run(["gcc", "-c", str(tmp_path / f"{name}.s"), "-o", str(tmp_path / f"{name}.o")],
                       check=True)
    cc.check_kernel_entries(tmp_path / "rewritten.o")
    with pytest.raises(UklError, match=r"f uses `int \$0x80`: .*assembled without ukl-cc"):
        cc.check_kernel_entries(tmp_path / "plain.o")
    # GAS's octal, a debug register, SYSRET's 32-bit form; labels, symbols
    # and operands GAS must judge are left alone.
    assert uas.rewrite("\tint $010\n\tmov %rax,%db7\n\tsysretl\n") == \
        "\t.byte 0x0f, 0xb9, 0x48, 8\n" + "\t.byte 0x0f, 0xb9, 0x10\n" * 2
    untouched = "hlt:\n\trdmsr.part.0:\n\thlt=1\n\tint $VEC\n\tint $256\n\tint $03\n"
    assert uas.rewrite(untouched) == untouched


@pytest.mark.parametrize("code,shown", [("0x0f, 0x23, 0xf8", "mov %rax,%db7"),
                                         ("0x0f, 0x35", "sysexitl")])
def test_the_link_check_refuses_what_objdump_spells_otherwise(tmp_path, code, shown):
    """objdump prints a debug register as %db7 and a plain SYSEXIT as sysexitl."""
    (tmp_path / "p.s").write_text(f"\t.text\n\t.globl f\n\t.type f, @function\n"
                                  f"f:\n\t.byte {code}\n\tret\n")
    subprocess.run(["gcc", "-c", str(tmp_path / "p.s"), "-o", str(tmp_path / "p.o")], check=True)
    with pytest.raises(UklError, match=f"f uses `{re.escape(shown)}`: a privileged instruction"):
        cc.check_kernel_entries(tmp_path / "p.o")


def test_a_stop_sends_the_first_signal_and_kills_at_the_second(tmp_path):
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "ctl"))
    server.listen(1)
    stop = qemu.Stop("srv", 10)
    stop.connect(tmp_path / "ctl")
    conn, _ = server.accept()
    assert not stop.must_kill()                    # nothing asked
    stop.ask(signal.SIGTERM)
    assert not stop.must_kill()
    assert conn.recv(100) == b"TERM\n"
    stop.ask(signal.SIGINT)
    assert stop.must_kill() and stop.killed == "a second SIGINT"
    stop.close()
    conn.close()
    server.close()


def test_an_oci_image_carries_the_kernel_initrd_and_urunc_annotations(tmp_path):
    manifest = oci.write_layout(tmp_path / "img", "ukl-redis", b"KERNEL", b"INITRD",
                                ["ukl=byp,ret"], [6379])
    assert json.loads((tmp_path / "img" / "oci-layout").read_text()) == \
        {"imageLayoutVersion": "1.0.0"}
    got, config, files = oci.read_layout(tmp_path / "img")
    assert got == manifest
    for blob in (tmp_path / "img" / "blobs" / "sha256").iterdir():
        assert hashlib.sha256(blob.read_bytes()).hexdigest() == blob.name
    notes = manifest["annotations"]
    assert notes["com.urunc.unikernel.unikernelType"] == "linux"
    assert notes["com.urunc.unikernel.binary"] == "/.boot/kernel"
    assert notes["com.urunc.unikernel.initrd"] == "/.boot/initrd"
    assert config["config"]["Labels"] == notes
    assert config["config"]["Entrypoint"] == ["/init"]
    assert config["config"]["Env"] == ["ukl=byp,ret"]
    assert files[".boot/kernel"] == b"KERNEL" and files[".boot/initrd"] == b"INITRD"
    urunc = json.loads(files["urunc.json"])
    assert {k: base64.b64decode(v).decode() for k, v in urunc.items()} == notes
    assert oci.urunc_cmdline(["ukl=byp,ret"], "10.0.2.15", "10.0.2.2", "255.255.255.0") == (
        "panic=-1 console=ttyS0 root=/dev/ram0 rw "
        "ip=10.0.2.15::10.0.2.2:255.255.255.0:urunc:eth0:off ukl=byp,ret rdinit=/init --")


@pytest.mark.parametrize("args,entry", [
    (["-Wl,-ereal_start", "t.c"], "real_start"),
    (["t.c", "-Wl,-e,real_start"], "real_start"),
    (["-e", "real_start", "t.c"], "real_start"),
    (["-Wl,--entry=real_start,-z,now"], "real_start"),
    (["-Wl,-z,now", "-O2", "t.c"], None),
    (["-Wl,-export-dynamic", "-Wl,-eh-frame-hdr", "t.c"], None),
])
def test_ukl_cc_keeps_the_entry_point_asked_for(args, entry):
    assert cc.entry_symbol(args) == entry


def test_a_fuzzing_difference_is_narrowed_to_the_checkpoint_before_it():
    run = lambda *marks: "seed 1\n" + "".join(f"checkpoint {n} {h}\n" for n, h in marks)
    base = run((10000, "a"), (20000, "b"), (30000, "c"))
    assert fuzz.first_difference(base, base) is None
    assert fuzz.first_difference(base, run((10000, "a"), (20000, "x"), (30000, "y"))) == 10000
    assert fuzz.first_difference(base, run((10000, "a"))) == 10000
    assert fuzz.first_difference(base, base + "read: ok 1\n") == 30000
    assert fuzz.outcomes("read: ok 3 Bad file descriptor 2\ncalls 5 hash 1\n") == \
        {"read": {"ok": 3, "Bad file descriptor": 2}}


def test_a_soak_passes_only_if_every_acknowledged_key_survives_without_a_warning():
    sample = {"seconds": 0, "redis_rss_kb": 1, "mem_available_kb": 2, "processes": 3}
    run = {"config": "ukl-ret-byp", "minutes": 1, "clients": 50, "requests": 10,
           "failed_batches": 0, "errors": [], "bgsaves": 1, "keys": 5, "found_live": 5,
           "found_after_kill": 5, "kernel_warnings": [], "samples": [sample, sample]}
    assert soak.passed(run) and "| verdict | pass |" in soak.table(run)
    assert not soak.passed({**run, "found_after_kill": 4})
    assert not soak.passed({**run, "kernel_warnings": ["WARNING: CPU: 0"]})
    assert not soak.passed({**run, "keys": 0, "found_live": 0, "found_after_kill": 0})


def test_two_processes_never_share_a_run_directory(tmp_path, monkeypatch):
    """runs/<name>-<config> is held by the process that boots there; another
    process at the same time gets runs/<name>-<config>.2."""
    monkeypatch.setattr(api, "RUNS", tmp_path)
    monkeypatch.setattr(api, "_run_dirs", {})
    built = api.Built(programs.Program("example", "hello", Path("/hello.c")),
                      configs.CONFIGS["ukl"], Path("/k"), b"")
    mine = api.run_dir(built)
    assert mine == tmp_path / "hello-ukl" and api.run_dir(built) == mine
    other = subprocess.run(
        [sys.executable, "-c", "import sys; from pathlib import Path; from ukl import api, configs;"
         "from ukl.build import programs; api.RUNS = Path(sys.argv[1]);"
         "print(api.run_dir(api.Built(programs.Program('example', 'hello', Path('/h.c')),"
         "configs.CONFIGS['ukl'], Path('/k'), b'')))", str(tmp_path)],
        capture_output=True, text=True, check=True).stdout.strip()
    assert other == str(tmp_path / "hello-ukl.2")


def test_the_pins_archives_are_the_machine_s_own(tmp_path):
    """pins.toml names suites, not hosts: the private sources list takes each
    suite's archive from the machine's apt sources, in either format."""
    listed = tmp_path / "sources.list"
    listed.write_text("# nothing here\n")
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "a.sources").write_text(
        "Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nEnabled: no\n\n"
        "Types: deb deb-src\nURIs: http://mirror.example/debian\nSuites: bookworm "
        "bookworm-updates\nComponents: main\nSigned-By: /k.gpg\n")
    (tmp_path / "sources.list.d" / "b.list").write_text(
        "deb-src http://other.example/debian-security bookworm-security main\n"
        "deb [arch=amd64] http://security.example/debian-security bookworm-security main # x\n")
    assert fetch.apt_sources(listed) == [
        "deb [signed-by=/k.gpg] http://mirror.example/debian bookworm main",
        "deb-src [signed-by=/k.gpg] http://mirror.example/debian bookworm main",
        "deb http://security.example/debian-security bookworm-security main",
        "deb-src http://security.example/debian-security bookworm-security main"]
    (tmp_path / "sources.list.d" / "b.list").unlink()
    with pytest.raises(UklError, match="no apt source for bookworm-security"):
        fetch.apt_sources(listed)
    assert "://" not in (ROOT / "pins.toml").read_text()          # no archive named
