"""--gdb: QEMU's gdbstub, the CPUs stopped, TCG only; UKL programs only."""
import socket

import pytest

from ukl import api
from ukl.errors import UklError


def test_gdb_waits_under_tcg(guest):
    g = guest(api.Options(gdb=True))
    argv = g.argv
    assert argv[argv.index("-gdb") + 1] == "tcp:127.0.0.1:1234" and "-S" in argv
    assert g.spec.tcg_only and "-gdb" not in guest().argv


def test_gdb_needs_a_ukl_program_and_a_free_port():
    with pytest.raises(UklError, match="--gdb debugs a UKL program"):
        api.validate(api.Options(gdb=True), "cpl3-on-ukl")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(UklError, match=f"--gdb: host port {port} is in use"):
            api.validate(api.Options(gdb=True, gdb_port=port), "ukl")
        api.validate(api.Options(gdb=True, gdb_port=port), "ukl", bind=False)     # a dry run
