"""--strace: strace in /bin runs the program, inside its clean environment."""
from ukl import api
from ukl.guest.features import strace


def test_strace_runs_the_program(guest, monkeypatch):
    monkeypatch.setattr(strace, "strace_binary", lambda: b"STRACE")
    g = guest(api.Options(strace=True))
    assert g.files["bin/strace"][1] == b"STRACE"
    assert g.command.endswith(" strace -f -qq /app/p\n")
    assert "bin/strace" not in guest().files
