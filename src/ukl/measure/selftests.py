"""`ukl selftests`: Linux's own tests of the code UKL changes, from the pinned
kernel tree, as UKL programs and as ordinary processes, compared subtest by
subtest with stock Linux.

Each test is built twice from the same sources: with ukl-cc (the UKL
configurations) and with `ukl-cc --baseline` (the baseline, and cpl3-on-ukl:
the same static binary at CPL3 on the UKL kernel).  A test that does not build
is a result too, with ukl-cc's reason.  A cell differs from Linux when its
exit status or any subtest's result does; a kernel WARNING, oops, panic or
hang is a result of its own, with the console line that shows it.
"""
import io
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .results import baseline_first, config_names, pyplot, write
from .. import api, configs
from ..build import cc, libc, recipes, series
from ..errors import UklError
from ..layout import OUT
from ..proc import first_error

WORK = OUT / "selftests"
TIMEOUT = 240.0
KSFT_SKIP = 4


@dataclass(frozen=True)
class Test:
    name: str                   # DIR/PROGRAM, as in the kselftest tree
    sources: tuple[str, ...]    # relative to tools/testing/selftests
    flags: tuple[str, ...] = ()


X86 = ("-O2", "-g", "-std=gnu99", "-pthread", "-Wall", "-no-pie", "-D_GNU_SOURCE=",
       "-DCAN_BUILD_64")
FUTEX = ("-g", "-O2", "-Wall", "-pthread", "-Ifutex/include", "-I.", "-D_GNU_SOURCE=")
RSEQ = ("-O2", "-Wall", "-g", "-Irseq", "-I../../../tools/include", "-D_GNU_SOURCE=")
PROC = ("-Wall", "-O2", "-Wno-unused-function", "-isystem", "../../../tools/include/uapi",
        "-pthread", "-D_GNU_SOURCE=")
TIMERS = ("-O3", "-Wall", "-D_GNU_SOURCE=")
SHIMS = Path(__file__).with_name("shims")       # glibc names some tests use, for musl


def _tests(directory: str, flags: tuple, *names: str) -> list[Test]:
    """Tests of one directory, each built from <name>.c with the Makefile's flags;
    a name may carry its own: "name: -flag x86/extra.S"."""
    tests = []
    for spec in names:
        name, _, extra = spec.partition(":")
        extra = tuple(extra.split())
        sources = (f"{directory}/{name}.c", *(e for e in extra if e.endswith((".c", ".S"))))
        flags_ = flags + tuple(e for e in extra if not e.endswith((".c", ".S")))
        suffix = "_64" if directory == "x86" else ""
        tests.append(Test(f"{directory}/{name}{suffix}", sources, flags_))
    return tests


# As Linux's Makefiles build them (lib.mk adds -D_GNU_SOURCE=), against musl:
# musl's empty librt and libdl are left out.  Left out because they build on
# neither kernel's C library here (glibc or libcap only): x86/amx,
# futex_waitv, clone3_cap_checkpoint_restore, mq_perf_tests (popt).
# mq_open_tests gets a shim of glibc's error() and its DEFFILEMODE,
# seccomp_bpf one of the five libcap calls it makes, sigaltstack/sas the
# ucontext functions musl leaves out and glibc's sigaltstack().  The rest
# are all listed: those ukl-cc refuses are results too.
TESTS = [
    *_tests("x86", X86, "single_step_syscall", "sysret_ss_attrs: x86/thunks.S", "syscall_nt",
            "test_mremap_vdso", "check_initial_reg_state: -Wl,-ereal_start -static",
            "sigreturn", "iopl", "ioperm", "test_vsyscall", "mov_ss_trap", "sigtrap_loop",
            "syscall_arg_fault", "fsgsbase_restore: x86/clang_helpers_64.S", "sigaltstack",
            "nx_stack: -Wl,-z,noexecstack", "fsgsbase", "sysret_rip: x86/clang_helpers_64.S",
            "syscall_numbering", "corrupt_xstate_header", "lam: -include sys/types.h", "ukl",
            "test_shadow_stack", "ldt_gdt", "ptrace_syscall: -fomit-frame-pointer"),
    *_tests("ptrace", ("-std=c99", "-pthread", "-Wall", "-D_GNU_SOURCE="), "get_syscall_info",
            "peeksiginfo", "vmaccess", "get_set_sud"),
    *_tests("seccomp", ("-Wall", "-D_GNU_SOURCE="), "seccomp_benchmark",
            f"seccomp_bpf: -pthread -I{SHIMS}/include -D__GLIBC_PREREQ(a,b)=1"),
    *_tests("timers", TIMERS, f"posix_timers: -include {SHIMS}/glibc-sigevent.h",
            "nanosleep", "nsleep-lat",
            "set-timer-lat: -include sys/time.h",
            "mqueue-lat: -include fcntl.h", "inconsistency-check", "raw_skew", "threadtest",
            "rtcpie"),
    *_tests("futex/functional", FUTEX, "futex_wait_timeout: -D__NR_futex_waitv=449",
            "futex_wait_wouldblock: -D__NR_futex_waitv=449", "futex_requeue_pi",
            "futex_requeue_pi_signal_restart", "futex_requeue_pi_mismatched_ops",
            "futex_wait_uninitialized_heap", "futex_wait_private_mapped_file", "futex_wait",
            "futex_requeue"),
    *_tests("rseq", RSEQ, "basic_test: rseq/rseq.c", "basic_percpu_ops_test: rseq/rseq.c",
            "param_test: rseq/rseq.c"),
    *_tests("clone3", ("-g", "-std=gnu99", "-D_GNU_SOURCE="), "clone3", "clone3_clear_sighand",
            "clone3_set_tid"),
    *_tests("pidfd", ("-g", "-pthread", "-Wall", "-D_GNU_SOURCE="), "pidfd_test",
            "pidfd_fdinfo_test", "pidfd_open_test", "pidfd_poll_test", "pidfd_wait",
            "pidfd_getfd_test", "pidfd_setns_test"),
    *_tests("proc", PROC, "fd-001-lookup", "fd-002-posix-eq", "fd-003-kthread",
            "proc-2-is-kthread", "proc-loadavg-001", "proc-empty-vm", "proc-pid-vm",
            "proc-self-map-files-001", "proc-self-map-files-002", "proc-self-isnt-kthread",
            "proc-self-syscall", "proc-self-wchan", "proc-subset-pid", "proc-tid0",
            "proc-uptime-001", "proc-uptime-002", "read", "self", "setns-dcache",
            "setns-sysvipc", "thread-self", "proc-multiple-procfs"),
    *_tests("mqueue", ("-O2", "-D_GNU_SOURCE=", f"-I{SHIMS}/include",
                       "-DDEFFILEMODE=0666"), "mq_open_tests"),
    *_tests("exec", ("-Wall", "-Wno-nonnull", "-D_GNU_SOURCE="), "execveat", "non-regular",
            "recursion-depth", "null-argv"),
    *_tests("breakpoints", ("-D_GNU_SOURCE=",), "breakpoint_test", "step_after_suspend_test"),
    *_tests("sigaltstack", ("-Wall", "-D_GNU_SOURCE="), f"sas: {SHIMS}/ucontext.c "
            f"{SHIMS}/sigaltstack.c -Dsigaltstack=linux_sigaltstack"),
]
# 32-bit system calls on, as on a distribution's kernel: the x86 tests make
# some from 64-bit code with int $0x80 (ptrace_syscall, ldt_gdt).
KERNEL_ARGS = ("ia32_emulation=on",)
# What a test's Makefile leaves beside it (TEST_GEN_FILES, TEST_FILES),
# made in the guest's /tmp, where the program runs.  The guest's shell is
# busybox's, whose applets are named by argv[0]: a script says #!/bin/sh, and
# /bin/true, which non-regular execs through a symlink, is a script.
PREPARE = {
    "exec/execveat": "cp /app/* execveat && ln -s execveat execveat.symlink && "
                     "cp execveat execveat.denatured && chmod -x execveat.denatured && "
                     "printf '#!/bin/sh\\nexit $*\\n' >script && chmod +x script && "
                     "mkdir subdir && touch Makefile && ln -sf bash /bin/sh",
    "exec/non-regular": "rm /bin/true && printf '#!/bin/sh\\nexit 0\\n' >/bin/true && "
                        "chmod +x /bin/true",
}
# Programs beside busybox in a test's guest: bash as /bin/sh for execveat,
# whose script cases expect the 127 bash exits with when it cannot open the
# script; busybox's sh and dash exit 2.
TOOLS = {"exec/execveat": {"bash": lambda: recipes.binary(recipes.load("bash"),
                                                           configs.get("baseline"))}}
# What CI runs under ukl-ret-byp at 2 CPUs (tests/boot/test_selftests.py):
# the series' own test and the x86 entry, signal and ptrace tests of the paths
# UKL changes, about 7 minutes of TCG with their Linux runs; the full run has
# the rest (the subset shrank as CI neared its time limit).  Left out too:
# sysret_ss_attrs (stock Linux panics on it under TCG, docs/design.md, "What
# Linux's own tests see"), futex_wait (its waiter gives up after 30 ms, which
# stock Linux missed once under TCG) and syscall_numbering_64 (its 701
# subtests ran past the 240 s limit on stock Linux in CI).
CI_TESTS = ["x86/ukl_64", "x86/single_step_syscall_64", "x86/syscall_nt_64",
            "x86/check_initial_reg_state_64", "x86/sigreturn_64", "x86/sigaltstack_64",
            "x86/ptrace_syscall_64", "ptrace/get_syscall_info", "breakpoints/breakpoint_test",
            "pidfd/pidfd_setns_test"]
DEFAULT_CONFIGS = ["cpl3-on-ukl", *configs.SPECTRUM]


def selftests_dir() -> Path:
    return series.tree("linux") / "tools" / "testing" / "selftests"


def build(test: Test, config: configs.Config) -> tuple[Path | None, str]:
    """Build TEST for CONFIG's kind ("ukl" or "baseline"): the binary, or None and why not."""
    kind = config.kind
    out = WORK / libc.variant(config) / test.name.replace("/", "-")
    out.parent.mkdir(parents=True, exist_ok=True)
    libc.require(config)
    cmd = [str(cc.ukl_cc_path()), *(["--baseline"] if kind == "baseline" else []), *test.flags,
           *test.sources, "-o", str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=selftests_dir(),
                         env={**os.environ, **recipes.ukl_cc_env(config)})
    if res.returncode != 0:
        out.unlink(missing_ok=True)
        return None, re.sub(r"^\S*/selftests/", "", first_error(res.stderr))
    return out, ""


SUBTEST = re.compile(r"^\s*\[(OK|FAIL|SKIP|WARN)\]\s*(.*)$"
                     r"|^(not ok|ok) \d+ (?:# (SKIP|XFAIL) )?(.*?)(?: # (SKIP|XFAIL).*)?$")


def subtests(stdout: str) -> list[list[str]]:
    """[name, result] of each subtest: kselftest TAP lines, or the x86 tests'
    [OK]/[FAIL]/[SKIP] lines named by the [RUN] line before them."""
    found, running = [], ""
    for line in stdout.splitlines():
        if line.startswith("[RUN]"):
            running = line[5:].strip()
            continue
        m = SUBTEST.match(line)
        if not m:
            continue
        if m.group(1):
            result = {"OK": "pass", "FAIL": "fail", "SKIP": "skip", "WARN": "warn"}[m.group(1)]
            found.append([running or m.group(2).strip(), result])
        else:
            skipped = "SKIP" in (m.group(4), m.group(6))   # "ok 1 # SKIP name" or "ok 1 name # SKIP"
            result = "skip" if skipped else ("pass" if m.group(3) == "ok" else "fail")
            found.append([m.group(5).strip(), result])
    return found


def run(test: Test, binary: Path, config: str, smp: int) -> dict:
    """Boot BINARY under CONFIG; what it printed, its status and its subtests."""
    out, err = io.BytesIO(), io.BytesIO()
    built = api.build(str(binary), config)
    try:
        opts = api.Options(smp=smp, timeout=TIMEOUT, prepare=PREPARE.get(test.name, ""),
                           tools=TOOLS.get(test.name, {}), kernel_args=KERNEL_ARGS)
        res = api.boot(built, opts, stdout=out, stderr=err)
        status, kernel = res.status, None
    except UklError as e:
        status, kernel = None, str(e).split(" [console:")[0]
    stdout = out.getvalue().decode(errors="replace")
    return {"test": test.name, "config": config, "smp": smp, "status": status,
            "kernel": kernel, "subtests": subtests(stdout), "stdout": stdout}


def outcome(cell: dict) -> str:
    if cell.get("not_built"):
        return "not built"
    if cell["kernel"]:
        return "timeout" if "timed out" in cell["kernel"] else "KERNEL"
    if cell["status"] == 0:
        return "pass"
    return "skip" if cell["status"] == KSFT_SKIP else "fail"


def differences(cell: dict, base: dict | None) -> list[str]:
    """How CELL differs from stock Linux's run of the same test at the same CPUs."""
    if cell["config"] == "baseline" or base is None:
        return []
    if cell.get("not_built") or base.get("not_built"):
        return [] if bool(cell.get("not_built")) == bool(base.get("not_built")) \
            else ["not built"]
    diffs = [] if outcome(cell) == outcome(base) else [f"{outcome(base)} -> {outcome(cell)}"]
    theirs, ours = _numbered(base["subtests"]), _numbered(cell["subtests"])
    for name in dict.fromkeys([*theirs, *ours]):
        if theirs.get(name) != ours.get(name):
            diffs.append(f"{name}: {theirs.get(name, 'absent')} -> {ours.get(name, 'absent')}")
    return diffs


# A code address in a subtest's name ("Restart the syscall (ip = 0x402573)"):
# a UKL program is linked elsewhere than Linux's binary.
ADDRESS = re.compile(r"0x[0-9a-f]{6,16}\b")


def _numbered(found: list[list[str]]) -> dict[str, str]:
    """Subtest results keyed by name (addresses left out), the n-th of a
    repeated name as 'name #n'."""
    seen, keyed = {}, {}
    for name, result in found:
        name = ADDRESS.sub("0x...", name)
        seen[name] = seen.get(name, 0) + 1
        keyed[name if seen[name] == 1 else f"{name} #{seen[name]}"] = result
    return keyed


def _select(names: list[str]) -> list[Test]:
    known = {t.name: t for t in TESTS}
    for n in names:
        if n not in known:
            raise UklError(f"unknown selftest {n!r}; known: {', '.join(known)}")
    return [known[n] for n in names] if names else TESTS


def _cells(test: Test, names: list[str], smps: list[int], progress) -> list[dict]:
    binaries = {kind: build(test, configs.get(kind)) for kind in ("baseline", "ukl")}
    cells = []
    for smp in smps:
        base = None
        for config in names:
            binary, why = binaries["ukl" if configs.get(config).ukl else "baseline"]
            if binary is None:
                cell = {"test": test.name, "config": config, "smp": smp, "status": None,
                        "kernel": None, "subtests": [], "stdout": "", "not_built": why}
            else:
                cell = run(test, binary, config, smp)
            base = cell if config == "baseline" else base
            cell["differs"] = differences(cell, base)
            progress(f"ukl: selftest {test.name} {config} smp={smp}: {outcome(cell)}"
                     + (f" ({'; '.join(cell['differs'][:2])})" if cell["differs"] else ""))
            cells.append(cell)
    return cells


def measure(names: list[str] = (), config_list: list[str] = (), smps: list[int] = (1, 2),
            progress=print) -> dict:
    """Build and run the tests; every cell, with its differences from Linux.
    Interrupted (Ctrl-C), it keeps the tests that finished."""
    tests, names_ = _select(list(names)), config_names(list(config_list), DEFAULT_CONFIGS)
    cells, done = [], []
    try:
        for test in tests:
            cells += _cells(test, names_, list(smps), progress)
            done.append(test.name)
    except KeyboardInterrupt:
        progress(f"ukl: interrupted; keeping the {len(done)} tests that finished")
    return {"tests": done, "configs": names_, "smps": list(smps),
            "cells": baseline_first(c for c in cells if c["test"] in done)}


def table(results: dict) -> str:
    cols = [(c, s) for s in results["smps"] for c in results["configs"]]
    by = {(c["test"], c["config"], c["smp"]): c for c in results["cells"]}
    lines = ["# Linux's selftests: UKL against stock Linux\n",
             "A cell in **bold** differs from stock Linux (`baseline`) at the same CPUs;",
             "KERNEL is a kernel warning, oops or panic; timeout, no exit within "
             f"{TIMEOUT:g} s.\n",
             "| test | " + " | ".join(f"{c} ({s} CPU)" for c, s in cols) + " |",
             "|---|" + "---|" * len(cols)]
    notes = []
    for test in results["tests"]:
        row = []
        for c, s in cols:
            cell = by[(test, c, s)]
            text = outcome(cell)
            if cell["subtests"]:
                passed = sum(r == "pass" for _, r in cell["subtests"])
                text += f" {passed}/{len(cell['subtests'])}"
            if cell["differs"]:
                text = f"**{text}**"
                more = len(cell["differs"]) - 3
                notes.append(f"- {test}, {c}, {s} CPU: {'; '.join(cell['differs'][:3])}"
                             + (f" (and {more} more)" if more > 0 else ""))
            if cell.get("not_built") and c in ("baseline", "ukl"):
                notes.append(f"- {test} does not build for {c}: {cell['not_built']}")
            if cell["kernel"]:
                notes.append(f"- {test}, {c}, {s} CPU: {cell['kernel']}")
            row.append(text)
        lines.append(f"| {test} | " + " | ".join(row) + " |")
    return "\n".join(lines + ["", "## Differences, build failures and kernel events", "",
                              *dict.fromkeys(notes)]) + "\n"


def plot(results: dict, path: Path):
    plt = pyplot()
    from matplotlib.colors import ListedColormap
    cols = [(c, s) for s in results["smps"] for c in results["configs"]]
    by = {(c["test"], c["config"], c["smp"]): c for c in results["cells"]}
    shade = {"same": 0, "differs": 1, "not built": 2, "KERNEL": 3}
    grid = []
    for test in results["tests"]:
        row = []
        for c, s in cols:
            cell = by[(test, c, s)]
            kind = outcome(cell) if outcome(cell) in ("KERNEL", "not built") \
                else "differs" if cell["differs"] else "same"
            row.append(shade[kind])
        grid.append(row)
    fig, ax = plt.subplots(figsize=(2 + 1.1 * len(cols), 1 + 0.35 * len(grid)))
    ax.imshow(grid, cmap=ListedColormap(["#4caf50", "#ffb300", "#bdbdbd", "#d32f2f"]),
              vmin=0, vmax=3, aspect="auto")
    ax.set_xticks(range(len(cols)), [f"{c}\n{s} CPU" for c, s in cols], fontsize=7)
    ax.set_yticks(range(len(grid)), results["tests"], fontsize=7)
    ax.set_title("kselftests: green as Linux, amber differs, grey not built, red kernel failure",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(names=(), config_list=(), smps=(1, 2)) -> Path:
    return write("selftests-", measure(names, config_list, smps), table, plot)
