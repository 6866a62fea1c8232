"""--perf: perf records the program (around the shell that becomes it), its
samples are listed before /out leaves, and the host names them."""
from ukl import api
from ukl.guest import spec
from ukl.guest.features import perf
from ukl.measure import perf_report


def test_perf_records_the_program(guest, tmp_path, monkeypatch):
    binary = tmp_path / "perf"
    binary.write_bytes(b"PERF")
    monkeypatch.setattr(perf.perf, "binary", lambda: binary)
    g = guest(api.Options(args=("a",), out=tmp_path, perf=True))
    assert g.files["bin/perf"][1] == b"PERF"
    assert g.command.startswith("perf record -q -e cpu-clock -F 999 -g -o /out/perf.data -- "
                                f"sh -c 'echo $$ >{spec.PIDFILE}; ")
    assert g.command.endswith(" env -i HOME=/ PATH=/bin TERM=dumb /app/p a\n")
    assert "perf script -i /out/perf.data" in g.hooks("finish")
    assert "perf" not in guest(api.Options(out=tmp_path)).script()


def test_perf_samples_are_named_on_the_host():
    script = ("p \n\tffffffff81000010\n\t  401005\n\t  401005\n\t  401105\n\n"
              "p \n\t  401105\n\tfffffffffffffe00\n\n")
    found = perf_report.samples(script)
    assert found == [("p", [0xffffffff81000010, 0x401005, 0x401105]), ("p", [0x401105])]

    class Names:
        def name(self, pc):
            return {0xffffffff81000010: "vfs_write", 0x401005: "write", 0x401105: "main"}[pc]
    stacks = perf_report.fold(found, Names())
    assert stacks == {"p;main;write;vfs_write": 1, "p;main": 1}
    report = perf_report.report(stacks)
    assert " 50.00% 100.00%  main" in report and " 50.00%  50.00%  vfs_write" in report
