"""--ftrace: tracefs set up before the program, the tracer started by the
shell that execs it (so only its pid is traced), the trace copied to /out
after it, and the program's frames named on the host."""
import pytest

from ukl import api, symbols
from ukl.errors import UklError
from ukl.guest import tracing
from ukl.guest.features import ftrace


def test_ftrace_sets_up_the_guest_around_the_program(guest, tmp_path, monkeypatch):
    monkeypatch.setattr(symbols, "nm", lambda elf: [(1, "ksys_write"), (2, "tcp_sendmsg")])
    g = guest(api.Options(out=tmp_path, ftrace=("ksys_write", "tcp_sendmsg")),
              vmlinux=tmp_path / "vmlinux")
    t = ftrace.TRACEFS
    assert f"echo ksys_write tcp_sendmsg >{t}/set_graph_function" in g.hooks("setup")
    assert f'echo "$f:stacktrace" >>{t}/set_ftrace_filter' in g.hooks("setup")
    assert g.hooks("start") == (f"echo $$ >{t}/set_ftrace_pid; "
                                f"echo function_graph >{t}/current_tracer\n")
    assert f"cat {t}/trace >/out/ftrace.txt" in g.hooks("finish")
    assert "tracing" not in guest(api.Options(out=tmp_path)).script()
    with pytest.raises(UklError, match="the kernel has no function named 'nosuch'"):
        g = guest(api.Options(out=tmp_path, ftrace=("nosuch",)), vmlinux=tmp_path / "vmlinux")
        ftrace.before_boot(g.spec, g.built, g.opts)     # on the host, before QEMU starts
    with pytest.raises(UklError, match="--ftrace needs --out"):
        api.validate(api.Options(ftrace=("ksys_write",)), "ukl")


def test_program_frames_in_a_trace_are_named(tmp_path):
    trace = tmp_path / "ftrace.txt"
    trace.write_text(" => ksys_write\n => 0x401010\n => 0xffffffff81000000\n")
    tracing.name_program_frames(trace, [(0x401000, "main"), (0x401100, "write")])
    assert trace.read_text().splitlines() == [
        " => ksys_write", " => 0x401010 <main+0x10> [program]", " => 0xffffffff81000000"]
