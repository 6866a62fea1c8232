"""--binary: a host executable, unmodified, started at CPL0 by /bin/ukl-exec
under a UKL configuration and run as it is on the baseline."""
from pathlib import Path

import pytest

from ukl import api
from ukl.build import programs
from ukl.errors import UklError



def _fake_helper(monkeypatch, tmp_path):
    helper = tmp_path / "ukl-exec"
    helper.write_bytes(b"\x7fELF helper")
    monkeypatch.setattr(programs, "build", lambda program, config: helper)


def test_ukl_exec_is_the_innermost_wrapper(guest, monkeypatch, tmp_path):
    _fake_helper(monkeypatch, tmp_path)
    g = guest(config="ukl-ret-byp", program=programs.Program("binary", "p", Path("/p")))
    assert g.command.rstrip().endswith("/bin/ukl-exec /app/p")
    assert g.files["bin/ukl-exec"][1] == b"\x7fELF helper"


def test_the_baseline_runs_the_file_itself(guest, monkeypatch, tmp_path):
    _fake_helper(monkeypatch, tmp_path)
    g = guest(config="baseline", program=programs.Program("binary", "p", Path("/p")))
    assert "ukl-exec" not in g.command and "bin/ukl-exec" not in g.files


def test_user_is_refused_for_a_file_at_cpl0(guest, monkeypatch, tmp_path):
    _fake_helper(monkeypatch, tmp_path)
    with pytest.raises(UklError, match="--user with --binary"):
        guest(api.Options(user="nobody"), program=programs.Program("binary", "p", Path("/p")))


@pytest.mark.parametrize("content,error", [(None, "no such file"),
                                           (b"#!/bin/sh\n", "not an x86-64 ELF executable")])
def test_what_is_not_an_executable_is_refused(tmp_path, content, error):
    path = tmp_path / "f"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(UklError, match=error):
        programs.binary(str(path))


def test_a_dynamic_executable_brings_its_interpreter_and_libraries():
    files = dict((guest, host) for host, guest in programs.closure(Path("/bin/ls")))
    interp = [g for g in files if "ld-linux" in g]
    assert interp and any(g.endswith("/libc.so.6") for g in files)
    assert all(Path(h).is_file() for h in files.values())
