"""Bad input that needs a build or a guest: one line naming the cause, a non-zero exit."""
import re
import subprocess

import pytest

from ukl import cli, configs
from ukl.build import recipes, series
from ukl.errors import UklError
from ukl.layout import RUNS
from uklcli import UKL, assert_one_line_error, ukl


def test_compile_error_shows_compiler_message(tmp_path):
    src = tmp_path / "broken.c"
    src.write_text("int main(void) { return undeclared_variable; }\n")
    res = ukl("build", str(src))
    assert_one_line_error(res, "broken.c", "undeclared_variable")


def test_missing_symbol_fails_at_link_time(tmp_path):
    src = tmp_path / "needs.c"
    src.write_text("void not_in_any_library(void);\n"
                   "int main(void) { not_in_any_library(); return 0; }\n")
    assert_one_line_error(ukl("build", str(src)), "undefined symbol not_in_any_library")


KERNEL_ENTRIES = {   # inline assembly -> what ukl-cc says about it
    '"syscall; nop" : "=a"(r) : "a"(39) : "rcx", "r11"': "main uses the SYSCALL instruction",
    '"cli; sti" : "=a"(r)': "main disables interrupts",
    '"call __ukl_syscall" : "=a"(r) : "a"(39) : "rcx", "r11", "memory"':
        "main calls __ukl_syscall without the cli",
    # Each of these hangs or corrupts the kernel at CPL0 (issue 26: fsgsbase_64,
    # syscall_arg_fault_64, int $0x80); under Linux each raises SIGSEGV or
    # changes only the program's own state.  ukl-cc assembles `int $N` and the
    # privileged instructions as a trap that raises the same SIGSEGV
    # (test_process_model.py): written as bytes, they get past it and are refused.
    '"mov %0, %%gs" : : "r"(0)': "main uses `mov %eax,%gs`: UKL code runs on the kernel's GS",
    '"wrgsbase %0" : : "r"(0L)': "main uses `wrgsbase %rax`: UKL code runs on the kernel's GS",
    '"mov %%gs:0, %0" : "=r"(r)': "main uses `mov %gs:0x0,%rax`: UKL code runs on the kernel",
    '".byte 0xcd, 0x80" : "=a"(r) : "a"(39)': "main uses `int $0x80`: at CPL0 it enters that kernel",
    '"sysenter"': "main uses `sysenter`: 32-bit system calls",
    '"outb %%al, $0x80" : : "a"(0)': "main uses `out %al,$0x80`: a privileged instruction",
    '".byte 0xf4"': "main uses `hlt`: a privileged instruction",
    '".byte 0x0f, 0x22, 0xe0" : : "a"(0L)': "main uses `mov %rax,%cr4`: a privileged instruction",
}


def test_libgcc_and_the_linkers_symbols_are_there(tmp_path):
    # __int128 division and popcount come from libgcc; etext, __executable_start
    # and __start_SECTION from the final link, as with gcc -static.
    src = tmp_path / "needs.c"
    src.write_text(
        "#include <stdio.h>\n"
        "extern char etext[], __executable_start[];\n"
        "__attribute__((section(\"ukltab\"), used)) static int tab[2] = {1, 2};\n"
        "extern int __start_ukltab[], __stop_ukltab[];\n"
        "int main(int argc, char **argv) {\n"
        "  volatile unsigned __int128 n = (unsigned __int128)argc << 70;\n"
        "  volatile unsigned long long b = 0xf0f0;\n"
        "  printf(\"%d %d %d %d\\n\", (int)(n / 3 % 1000), __builtin_popcountll(b),\n"
        "         (unsigned long)etext > (unsigned long)__executable_start,\n"
        "         (int)(__stop_ukltab - __start_ukltab));\n"
        "  return 0;\n}\n")
    res = ukl("run", str(src))
    assert (res.returncode, res.stdout) == (0, "141 8 1 2\n"), res.stderr


@pytest.mark.parametrize("asm,error", KERNEL_ENTRIES.items())
def test_kernel_entries_other_than_cli_call_are_refused(tmp_path, asm, error):
    src = tmp_path / "entry.c"
    src.write_text(f"int main(void) {{ long r; __asm__ volatile({asm}); return 0; }}\n")
    assert_one_line_error(ukl("build", str(src)), error)


def test_crashed_program_exits_128_plus_signal_with_console_tail():
    res = ukl("run", "nullderef")
    assert res.returncode == 139
    assert "--- console tail (" in res.stderr and "segfault at" in res.stderr
    assert "ukl: nullderef was killed by SIGSEGV (exit 139)" in res.stderr.splitlines()[-1]
    assert "Traceback" not in res.stderr


def _private_port(cmd: str) -> str:
    """The relay's private host port, which each run picks afresh (a dry run
    binds none: it prints HOSTFWD0...)."""
    return re.sub(r"hostfwd=tcp:127\.0\.0\.1:(\d+|HOSTFWD\d+)-:",
                  "hostfwd=tcp:127.0.0.1:PORT-:", cmd)


def _run_dir(name: str):
    """The run directory a `ukl run` that just ended used (another process,
    this one included, may hold runs/NAME: it then gets runs/NAME.2...)."""
    return max([RUNS / name, *RUNS.glob(f"{name}.*")],
               key=lambda d: (d / "qemu.cmd").stat().st_mtime if (d / "qemu.cmd").exists() else 0)


def test_dry_run_prints_the_command_that_runs():
    dry = ukl("run", "--dry-run", "hello", "-p", "18080:80")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith("qemu-system-x86_64 ")
    assert "hostfwd=tcp:127.0.0.1:HOSTFWD0-:80" in dry.stdout  # the relay would hold 18080
    real = ukl("run", "hello", "-p", "18080:80")
    assert real.returncode == 3, real.stderr
    ran = (_run_dir("hello-ukl") / "qemu.cmd").read_text().strip()
    assert re.search(r"hostfwd=tcp:127\.0\.0\.1:\d+-:80", ran)
    # Both runs got the same run directory (runs/hello-ukl, or .2 while this process holds it).
    assert _private_port(dry.stdout.strip()) == _private_port(ran)


def test_failing_recipe_step_names_its_log_and_is_redone(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(recipes, "APPS", tmp_path)
    monkeypatch.setattr(recipes, "BUILD_ROOT", tmp_path / "out")
    (tmp_path / "broken.toml").write_text(
        'description = "fails"\nsource = "musl"\n'
        'steps = [["sh", "-c", "echo compiling; echo oops: no such header >&2; exit 3"]]\n'
        'binary = "prog"\n')
    for attempt in range(2):
        with pytest.raises(UklError) as e:
            recipes.binary(recipes.load("broken"), configs.get("baseline"))
        assert "broken (baseline) step 1/1: sh failed (exit 3)" in str(e.value)
        assert "app-broken-baseline-1.log" in str(e.value)
        assert "oops: no such header" in capsys.readouterr().err      # the log's last lines
        assert not (tmp_path / "out" / "baseline" / "broken" / ".ukl-step").exists()


def test_patches_check_exits_non_zero_on_checkpatch_errors(tmp_path, monkeypatch):
    for component in ("linux", "musl"):
        assert ukl("patches", "check", component).returncode == 0, component
    bad = tmp_path / "0001-unsigned.patch"
    bad.write_text("From: A <a@example.org>\nSubject: [PATCH] x: change a line\n\nWhy.\n---\n"
                   " a.c | 2 +-\n\ndiff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n"
                   "@@ -1 +1 @@\n-int a;\n+int b;\n")
    script_tree = series.tree("linux")
    monkeypatch.setattr(series, "tree", lambda name: script_tree)
    monkeypatch.setattr(series, "patches", lambda name: [bad])
    with pytest.raises(UklError, match=r"checkpatch found \d+ error\(s\) in the linux series"):
        cli._patches("check", "linux")


def test_two_runs_at_once_both_finish():
    # Both build the guest's tools into out/programs: each its own temporary.
    procs = [subprocess.Popen([*UKL, "run", prog], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for prog in ("hello", "atexit")]
    results = [(p.wait(timeout=900), p.stderr.read()) for p in procs]
    assert results[0][0] == 3, results[0][1]
    assert results[1][0] == 7 and "Traceback" not in results[1][1], results[1][1]
