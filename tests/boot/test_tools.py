"""Linux's tools on a UKL program, checked on the tools' own output:
`--ftrace` (function_graph through tracefs, and who called the function),
`--core` (a core file that gdb on the host reads with the program's ELF) and
`--perf` (cpu-clock samples with call graphs, named on the host)."""
import io
import re
import subprocess

import pytest

from ukl import api
from uklcli import UKL


def _boot(program, config, out, args=(), **opts):
    return api.boot(api.build(program, config), api.Options(args=args, out=out, **opts),
                    stdout=io.BytesIO(), stderr=io.BytesIO())


def _stack_traces(trace: str) -> list[list[str]]:
    """The frames (' => ...' lines) of each '<stack trace>' in an ftrace trace."""
    blocks = []
    for line in trace.splitlines():
        if "<stack trace>" in line:
            blocks.append([])
        elif line.startswith(" => ") and blocks:
            blocks[-1].append(line[4:])
    return blocks


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_ftrace_shows_the_program_calling_ksys_write(tmp_path, config):
    res = _boot("files", config, tmp_path, ftrace=("ksys_write",))     # write(2) to a file
    assert res.status == 0
    trace = (tmp_path / "ftrace.txt").read_text()
    assert "# tracer: function_graph" in trace
    assert re.search(r"\|\s+ksys_write\(\) \{", trace), trace[:2000]
    calls = [b for b in _stack_traces(trace) if "ksys_write" in b]
    assert calls, trace[:2000]
    # The call's caller is the program's own code, named from its ELF.
    callers = {f.split("<")[1].split("+")[0] for b in calls for f in b if f.endswith("[program]")}
    # musl's write() enters the kernel from its cancellation point, sccp.
    assert callers & {"write", "sccp", "__syscall_cp_c"}, calls[:3]


def test_ftrace_on_linux_stops_at_the_system_call_entry(tmp_path):
    res = _boot("files", "baseline", tmp_path, ftrace=("ksys_write",))
    assert res.status == 0
    trace = (tmp_path / "ftrace.txt").read_text()
    assert re.search(r"\|\s+ksys_write\(\) \{", trace)
    calls = [b for b in _stack_traces(trace) if "ksys_write" in b]
    assert calls and not any(f.endswith("[program]") for b in calls for f in b)


def _gdb_backtrace(out) -> str:
    res = subprocess.run(["gdb", "-batch", "-nx", "-ex", "bt", str(out / "program"),
                          str(out / "core")], capture_output=True, text=True, timeout=60)
    return res.stdout + res.stderr


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp", "baseline"])
def test_a_crash_leaves_a_core_that_gdb_reads(tmp_path, config):
    res = _boot("crash", config, tmp_path, args=("null",), core=True)
    assert res.status == 139
    bt = _gdb_backtrace(tmp_path)
    assert "Program terminated with signal SIGSEGV" in bt, bt
    assert re.search(r"#0 .*read_through .* at .*crash\.c:\d+", bt), bt
    assert re.search(r"#1 .*main .* at .*crash\.c:\d+", bt), bt


def _frames(bt: str) -> list[str]:
    """The function of each frame of the backtrace (gdb prints frame #0 once
    more before it, when it loads the core)."""
    return re.findall(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) ", bt[bt.rindex("#0 "):], re.M)


def test_an_abort_leaves_the_same_core_as_on_linux(tmp_path):
    """abort() inside musl: gdb stops where it does for the baseline's core
    (musl has no unwind tables, so neither backtrace reaches main)."""
    frames = {}
    for config in ("ukl-ret-byp", "baseline"):
        out = tmp_path / config
        assert _boot("crash", config, out, args=("abort",), core=True).status == 134
        bt = _gdb_backtrace(out)
        assert "Program terminated with signal SIGABRT" in bt, bt
        frames[config] = _frames(bt)[:2]
    assert frames["ukl-ret-byp"] == frames["baseline"] == ["__restore_sigs", "raise"], frames


def test_without_core_no_core_file(tmp_path):
    res = _boot("crash", "ukl", tmp_path, args=("null",))
    assert res.status == 139
    assert not (tmp_path / "core").exists()


def _folded(out) -> dict[str, int]:
    return {s: int(n) for s, n in (ln.rsplit(" ", 1) for ln in
                                   (out / "perf.folded").read_text().splitlines())}


@pytest.mark.parametrize("config,gate", [("ukl", "__ukl_syscall"),
                                         ("ukl-ret-byp", "__ukl_syscall"),
                                         ("baseline", "entry_SYSCALL_64")])
def test_perf_call_graphs_run_from_the_program_into_the_kernel(tmp_path, config, gate):
    """perf's samples, named on the host: the program's own frames under main,
    and its system calls' kernel frames under the program's frames."""
    res = subprocess.run([*UKL, "run", "perfload", "--config", config, "--perf", "--out",
                          str(tmp_path)], capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-2000:]
    assert re.search(r"ukl: perf: \d+ samples in .*perf\.data; perf-report\.txt", res.stderr)
    assert (tmp_path / "perf.data").read_bytes().startswith(b"PERFILE2")
    stacks = _folded(tmp_path)
    total = sum(stacks.values())
    assert total > 200, stacks
    # checksum() calls nothing, and GCC 12 keeps no frame pointer in such a
    # function: its samples hang from main's caller, libc_start_main_stage2.
    in_program = sum(n for s, n in stacks.items()
                     if re.search(r";_start;libc_start_main_stage2;checksum[.\w]*$", s))
    in_kernel = sum(n for s, n in stacks.items() if re.search(
        rf";_start;libc_start_main_stage2;main;save[.\w]*;pwrite64;.*{gate}.*;vfs_write;", s))
    # Most samples are in one of the two, each with its whole stack.  Their
    # shares follow TCG's speed at each (on Linux, under CI's load, 9% of
    # the samples were in checksum, 88% in the copy of pwrite).
    assert in_program > total / 20 and in_kernel > total / 20 and \
        in_program + in_kernel > total * 0.8, \
        (tmp_path / "perf-report.txt").read_text()[:3000]
    report = (tmp_path / "perf-report.txt").read_text()
    assert re.search(r"%\s+checksum[.\w]*$", report, re.M)
    assert re.search(r"%\s+vfs_write$", report, re.M)
    assert (tmp_path / "perf.png").stat().st_size > 10000


def test_a_program_killed_under_perf_leaves_its_samples_marked_partial(tmp_path):
    res = subprocess.run([*UKL, "run", "nullderef", "--perf", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 139
    assert re.search(r"ukl: perf: \d+ samples in .*perf\.data \(partial: the program was killed "
                     r"by a signal, exit 139\)", res.stderr), res.stderr[-2000:]
    assert (tmp_path / "perf.folded").read_text()
