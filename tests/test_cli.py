"""Bad input ends with one line naming the cause and a non-zero exit, never a traceback."""
import os
import socket
import subprocess
import sys

import pytest

from ukl import fetch

UKL = [sys.executable, "-m", "ukl.cli"]


def ukl(*args, env=None, cwd=None):
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([*UKL, *args], capture_output=True, text=True, env=full_env, cwd=cwd)


def assert_one_line_error(res, *needles):
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("ukl: error: ") or last.startswith("ukl-cc: error: "), last
    for needle in needles:
        assert needle in last, last


def test_unknown_program():
    assert_one_line_error(ukl("run", "no-such-program"), "unknown program 'no-such-program'",
                          "hello", "redis")


def test_bad_option():
    res = ukl("run", "hello", "--smp", "two")
    assert_one_line_error(res, "--smp")
    assert res.returncode == 2


@pytest.mark.boot
def test_compile_error_shows_compiler_message(tmp_path):
    src = tmp_path / "broken.c"
    src.write_text("int main(void) { return undeclared_variable; }\n")
    res = ukl("build", str(src))
    assert_one_line_error(res, "broken.c", "undeclared_variable")


@pytest.mark.boot
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
}


@pytest.mark.boot
@pytest.mark.parametrize("asm,error", KERNEL_ENTRIES.items())
def test_kernel_entries_other_than_cli_call_are_refused(tmp_path, asm, error):
    src = tmp_path / "entry.c"
    src.write_text(f"int main(void) {{ long r; __asm__ volatile({asm}); return 0; }}\n")
    assert_one_line_error(ukl("build", str(src)), error)


def test_sha256_mismatch_is_refused_and_removed(tmp_path):
    name = next(iter(fetch.pin("busybox")["files"]))
    bad = tmp_path / "downloads" / name
    bad.parent.mkdir()
    bad.write_bytes(b"not the pinned package")
    res = ukl("fetch", "busybox", env={"UKL_OUT": str(tmp_path)})
    assert_one_line_error(res, "sha256 mismatch", name)
    assert not bad.exists(), "a corrupt download must not be kept"


def test_missing_dependency(tmp_path):
    res = ukl("fetch", "busybox", env={"UKL_OUT": str(tmp_path), "PATH": str(tmp_path)})
    assert_one_line_error(res, "missing dependency: apt-get")


@pytest.mark.parametrize("option,error", [
    (["-p", "http:80"], "-p http:80: 'http' is not a TCP port number"),
    (["-p", "8080:70000"], "'70000' is not a TCP port number"),
    (["-v", "/no/such/path:/data"], "-v /no/such/path:/data: /no/such/path does not exist"),
    (["-v", "/tmp:data"], "the guest path 'data' is not absolute"),
])
def test_bad_run_options_fail_before_building(option, error):
    assert_one_line_error(ukl("run", "hello", *option), error)


def test_host_port_in_use():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        res = ukl("run", "--dry-run", "hello", "-p", f"{port}:80")
    assert_one_line_error(res, f"host port {port} is in use")


def test_ukl_cc_refuses_flags_that_cannot_work_in_kernel_code():
    for flag, why in (("-mred-zone", "no red zone"), ("-shared", "not a shared library")):
        res = subprocess.run([sys.executable, "-c", "from ukl.cc import main; main()", flag,
                              "x.c"], capture_output=True, text=True)
        assert_one_line_error(res, flag, why)


@pytest.mark.boot
def test_crashed_program_exits_128_plus_signal_with_console_tail():
    res = ukl("run", "nullderef")
    assert res.returncode == 139
    assert "--- console tail ---" in res.stderr and "segfault at" in res.stderr
    assert "ukl: nullderef was killed by SIGSEGV (exit 139)" in res.stderr.splitlines()[-1]
    assert "Traceback" not in res.stderr


@pytest.mark.boot
def test_dry_run_shows_qemu_command_without_booting():
    res = ukl("run", "--dry-run", "hello", "-p", "18080:80")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("qemu-system-x86_64 ")
    assert "hostfwd=tcp:127.0.0.1:18080-:80" in res.stdout


@pytest.mark.boot
def test_failing_recipe_step_names_its_log_and_is_redone(tmp_path, monkeypatch, capsys):
    from ukl import recipes
    from ukl.errors import UklError
    monkeypatch.setattr(recipes, "APPS", tmp_path)
    monkeypatch.setattr(recipes, "BUILD_ROOT", tmp_path / "out")
    (tmp_path / "broken.toml").write_text(
        'description = "fails"\nsource = "musl"\n'
        'steps = [["sh", "-c", "echo compiling; echo oops: no such header >&2; exit 3"]]\n'
        'binary = "prog"\n')
    for attempt in range(2):
        with pytest.raises(UklError) as e:
            recipes.binary(recipes.load("broken"), "baseline")
        assert "broken (baseline) step 1/1: sh failed (exit 3)" in str(e.value)
        assert "app-broken-baseline-1.log" in str(e.value)
        assert "oops: no such header" in capsys.readouterr().err      # the log's last lines
        assert not (tmp_path / "out" / "baseline" / "broken" / ".ukl-step").exists()


@pytest.mark.boot
def test_patches_check_exits_non_zero_on_checkpatch_errors(tmp_path, monkeypatch):
    from ukl import cli, series
    from ukl.errors import UklError
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
