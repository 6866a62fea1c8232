"""Bad input ends with one line naming the cause and a non-zero exit, never a traceback."""
import socket
import subprocess
import sys

import pytest

from ukl.build import fetch
from ukl.proc import first_error
from uklcli import assert_one_line_error, ukl


def test_unknown_program():
    res = ukl("run", "no-such-program")
    assert_one_line_error(res, "unknown program 'no-such-program'", "hello", "redis")
    assert "intruder" not in res.stderr          # a test program, not an example


def test_bad_option():
    res = ukl("run", "hello", "--smp", "two")
    assert_one_line_error(res, "--smp")
    assert res.returncode == 2


def test_sha256_mismatch_is_refused_and_removed(tmp_path):
    name = next(iter(fetch.pin("busybox")["files"]))
    bad = tmp_path / "cache" / "ukl" / "downloads" / name
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not the pinned package")
    res = ukl("fetch", "busybox", env={"UKL_OUT": str(tmp_path),
                                       "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert_one_line_error(res, "sha256 mismatch", name)
    assert not bad.exists(), "a corrupt download must not be kept"


def test_missing_dependency(tmp_path):
    res = ukl("fetch", "busybox", env={"UKL_OUT": str(tmp_path), "PATH": str(tmp_path),
                                       "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert_one_line_error(res, "missing dependency: apt-get")


@pytest.mark.parametrize("option,error", [
    (["-p", "http:80"], "-p http:80: 'http' is not a TCP port number"),
    (["-p", "8080:70000"], "'70000' is not a TCP port number"),
    (["-v", "/etc/passwd/data:/data"],
     "-v /etc/passwd/data:/data: cannot make /etc/passwd/data: /etc/passwd is not a directory"),
    (["-v", "/tmp:data"], "the guest path 'data' is not absolute"),
    (["-v", "/tmp:/data:rx"], "-v /tmp:/data:rx: unknown mode 'rx'; valid: rw, ro"),
    (["-v", "/etc/passwd:/etc/passwd:rw"], "/etc/passwd is a file; only directories"),
    (["--stop-timeout", "0"], "must be a positive number of seconds, not '0'"),
    (["--ftrace", "ksys_write"], "--ftrace needs --out HOSTDIR"),
    (["--core"], "--core needs --out HOSTDIR"),
    (["--perf"], "--perf needs --out HOSTDIR"),
    (["--perf", "--strace", "--out", "/tmp"], "--perf and --strace both run the program"),
    (["--gdb", "--baseline"], "--gdb debugs a UKL program through QEMU's gdbstub"),
    (["--kernel-arg", "ukl=byp ret"], "kernel argument 'ukl=byp ret': must be one word"),
    (["--kernel-arg", "lockdown='integrity'"], "must be one word without quotes"),
    (["--append", "pti=on"], "unrecognized arguments: --append pti=on"),
    (["--smp", "0"], "--smp 0: expected a number of CPUs from 1 to 64"),
])
def test_bad_run_options_fail_before_building(option, error):
    assert_one_line_error(ukl("run", "hello", *option), error)


def test_host_port_in_use():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        res = ukl("run", "hello", "-p", f"{port}:80")
    assert_one_line_error(res, f"host port {port} is in use")


def test_ukl_cc_refuses_flags_that_cannot_work_in_kernel_code():
    for flag, why in (("-mred-zone", "no red zone"), ("-shared", "not a shared library")):
        res = subprocess.run([sys.executable, "-c", "from ukl.build.ukl_cc import main; main()", flag,
                              "x.c"], capture_output=True, text=True)
        assert_one_line_error(res, flag, why)


@pytest.mark.parametrize("args,error", [
    (["profile", "nosuch"], "unknown profile target 'nosuch'; valid: lebench, memcached"),
    (["profile", "lebench", "--ops", "nosuch"], "unknown operation 'nosuch'"),
    (["profile", "redis", "--ops", "read"], "--ops is for lebench"),
    (["profile", "lebench", "--configs", "ukl-fast"], "unknown configuration 'ukl-fast'"),
    (["bench", "nosuch"], "unknown server benchmark 'nosuch'; valid: memcached"),
    (["bench", "libevent"], "unknown server benchmark 'libevent'; valid: memcached"),
    (["bench", "memcached", "--clients", "2"], "--clients is for redis-benchmark"),
    (["fuzz", "--seconds", "0"], "must be a positive number of seconds, not '0'"),
    (["fuzz", "--configs", "ukl-fast"], "unknown configuration 'ukl-fast'"),
    (["soak", "--minutes", "x"], "must be a positive number of minutes, not 'x'"),
    (["soak", "--config", "ukl-fast"], "unknown configuration 'ukl-fast'"),
])
def test_bad_profile_requests_fail_before_building(args, error):
    assert_one_line_error(ukl(*args), error)


def test_out_must_be_a_directory(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("")
    assert_one_line_error(ukl("run", "--out", str(afile), "hello"), "--out", "not a directory")


def test_gdb_port_in_use():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        assert_one_line_error(ukl("run", "hello", "--gdb", "--gdb-port", str(port)),
                              f"--gdb: host port {port} is in use")


def test_oci_output_that_exists_and_is_not_empty(tmp_path):
    (tmp_path / "x").write_text("keep me")
    assert_one_line_error(ukl("oci", "hello", "-o", str(tmp_path)),
                          f"-o {tmp_path}: exists and is not an empty directory")
    assert (tmp_path / "x").read_text() == "keep me"


def test_an_out_directory_that_cannot_be_written():
    res = ukl("run", "hello", "--perf", "--out", "/proc/ukl-out")
    assert_one_line_error(res, "--out /proc/ukl-out: cannot be written (No such file or "
                               "directory)")


def test_perf_or_strace_of_a_program_that_does_not_exist(tmp_path):
    for tool in (["--perf", "--out", str(tmp_path / "o")], ["--strace"]):
        assert_one_line_error(ukl("run", "no-such-program", *tool),
                              "unknown program 'no-such-program'")
    assert not (tmp_path / "o").exists()


def test_a_missing_library_is_named_not_collect2():
    text = ("/usr/bin/ld: cannot find -lcap: No such file or directory\n"
            "collect2: error: ld returned 1 exit status\n")
    assert first_error(text) == "/usr/bin/ld: cannot find -lcap: No such file or directory"
    assert first_error("a.c:1:5: error: expected ';'\ncollect2: error: ld returned 1\n") \
        == "a.c:1:5: error: expected ';'"


def test_bisect_goes_only_with_check(tmp_path):
    res = ukl("patches", "edit", "linux", "--bisect", env={"UKL_OUT": str(tmp_path)})
    assert_one_line_error(res, "--bisect goes with `ukl patches check`")
    assert not (tmp_path / "tree").exists(), "nothing may be built or fetched"


def test_bisect_names_a_known_kernel_flavor(tmp_path):
    res = ukl("patches", "check", "linux", "--bisect", "nosuch", env={"UKL_OUT": str(tmp_path)})
    assert_one_line_error(res, "unknown kernel configuration 'nosuch'")
    assert not (tmp_path / "bisect").exists()


@pytest.mark.parametrize("option,error", [
    (["--format", "zip"], "unknown image format 'zip'; valid: raw, qcow2, efi"),
    (["--ip", "10.0.0.300/24,10.0.0.1"], "--ip 10.0.0.300/24,10.0.0.1: expected ADDR/NN,GATEWAY"),
    (["--ip", "10.0.0.5,10.0.0.1"], "give the prefix length"),
    (["--ip", "10.0.0.5/24,10.1.0.1"], "a gateway in 10.0.0.0/24"),
    (["--data", "1M"], "--data 1M: too small for a data disk; at least 16M"),
    (["--on-exit", "explode"], "invalid choice: 'explode'"),
    (["--kernel-arg", "a b"], "must be one word"),
])
def test_bad_image_options_fail_before_building(option, error, tmp_path):
    assert_one_line_error(ukl("image", "hello", "-o", str(tmp_path / "x.img"), *option), error)
    assert not list(tmp_path.iterdir())


def test_an_image_into_a_missing_directory(tmp_path):
    res = ukl("image", "hello", "-o", str(tmp_path / "no" / "x.img"))
    assert_one_line_error(res, f"{tmp_path / 'no'} is not a directory")


def test_booting_what_is_not_an_image(tmp_path):
    assert_one_line_error(ukl("boot", str(tmp_path / "none.img")), "none.img: no such image")
    odd = tmp_path / "odd.img"
    odd.write_bytes(b"not a disk")
    assert_one_line_error(ukl("boot", str(odd)), "not a disk image")
