"""UKL code in a kernel with retpolines and return thunks: it takes the
kernel's thunks, and returns to it never use an indirect jump that another
process could train.  CI builds only the plain UKL kernel; these run with
UKL_KERNEL=ukl-mitigated (kernel/configs/mitigations.config), as do the
examples and configuration tests, which then run against that kernel."""
import io
import json
import re
import struct
import subprocess

import pytest

from ukl import api, configs, symbols
from ukl.build import cc, kernel, programs
from ukl.errors import UklError
from ukl.measure import bench, profile
from ukl.layout import EXAMPLES
from ukl.proc import capture

from uklcli import UKL

pytestmark = pytest.mark.skipif(
    configs.ukl_kernel() != "ukl-mitigated",
    reason="needs UKL_KERNEL=ukl-mitigated (CI does not build the mitigated kernel)")


def _boot(program, config, cpu, smp=1):
    built = api.build(program, config)
    out = io.BytesIO()
    result = api.boot(built, api.Options(cpu=cpu, smp=smp), stdout=out, stderr=io.BytesIO())
    return built, result, out.getvalue().decode()


def _names_at(vmlinux, address: int) -> set[str]:
    return {name for at, name in symbols.nm(vmlinux) if at == address}


def _kaslr_offset(vmlinux, symbol: str, address: int) -> int:
    """How far KASLR moved the kernel: SYMBOL is at ADDRESS at run time."""
    return address - next(at for at, name in symbols.nm(vmlinux) if name == symbol)


# QEMU's default TCG CPU (AMD, no Retbleed) needs no return thunk; an EPYC
# (Zen 1) needs the SRSO one.  Both get retpolines.
@pytest.mark.parametrize("cpu, thunk", [("max", "ret"), ("EPYC", "srso_return_thunk")])
def test_the_program_s_returns_take_the_thunk_the_kernel_chose_for_the_cpu(cpu, thunk):
    built, result, out = _boot("thunks", "ukl-ret-byp", cpu)
    console = result.console.read_text(errors="replace")
    assert result.status == 0, out
    assert re.search(r"Spectre V2 : Mitigation: (Retpolines|LFENCE)", console), console
    at, insn = re.search(r"return thunk at (0x[0-9a-f]+): (.*)", out).groups()
    if thunk == "ret":
        assert insn == "ret"
    else:
        assert f"active return thunk: {thunk}" in console
        offset = _kaslr_offset(built.vmlinux, "__ukl_return_thunk", int(at, 16))
        target = int(re.fullmatch(r"jmp (0x[0-9a-f]+)", insn).group(1), 16)
        assert thunk in _names_at(built.vmlinux, target - offset)


def test_kaslr_moves_the_kernel_and_the_program_s_references_with_it():
    offsets = set()
    for _ in range(2):
        built, result, out = _boot("kaslr", "ukl", "max")
        assert result.status == 0, out
        assert "address in the code: the kernel's" in out, out
        assert "pointer in the data: the kernel's" in out, out
        assert re.search(r"calls reach the kernel: getppid\(\) = \d+, clock_gettime\(\) = 0", out)
        at = int(re.search(r"__ukl_vdso_clock_gettime at (0x[0-9a-f]+)", out).group(1), 16)
        offsets.add(_kaslr_offset(built.vmlinux, "__ukl_vdso_clock_gettime", at))
    # One boot in about 490 keeps the link-time address; two in a row, one in 240,000.
    assert offsets != {0}, offsets


@pytest.mark.parametrize("smp", [1, 2])
@pytest.mark.parametrize("example", ["signals", "threads"])
@pytest.mark.parametrize("config", configs.SPECTRUM)
def test_examples_behave_as_on_linux_through_the_srso_thunk(runs, config, example, smp):
    want = runs(example, "baseline", smp=smp)
    built, result, out = _boot(example, config, "EPYC", smp)
    assert (result.status, out) == (want.status, want.stdout)


@pytest.mark.parametrize("example", ["signals", "threads", "cancel"])
def test_every_return_and_indirect_branch_takes_the_kernel_s_thunks(example):
    built = api.build(example, "ukl-ret-byp")
    raw = cc.unthunked(built.elf)
    assert set(raw) <= cc.KNOWN_UNTHUNKED, raw
    text = capture(["objdump", "-d", str(built.elf)])
    assert re.search(r"jmp\s+\S+ <__x86_return_thunk>", text)
    assert re.search(r"call\s+\S+ <__x86_indirect_thunk_r\w+>", text)
    # gcc's names for the thunks are the kernel's UKL ones, which boot patches.
    symbols = capture(["nm", str(built.elf)])
    for gcc_name, ukl_name in [("__x86_return_thunk", "__ukl_return_thunk"),
                               ("__x86_indirect_thunk_rax", "__ukl_indirect_thunk_rax")]:
        address = int(re.search(rf"^([0-9a-f]+) A {gcc_name}$", symbols, re.M).group(1), 16)
        assert ukl_name in _names_at(built.vmlinux, address)


def test_a_program_built_for_the_plain_kernel_is_refused(monkeypatch):
    monkeypatch.setenv("UKL_KERNEL", "ukl")
    obj = programs.build(programs.resolve("hello"), configs.get("ukl"))
    with pytest.raises(UklError, match="compiled without the return thunks of the "
                                       "ukl-mitigated kernel"):
        kernel.link(obj, "hello-plain", "ukl-mitigated")


def test_a_bypassed_call_returns_through_the_return_thunk_on_a_retpoline_kernel():
    """UKL_BYP returns with `jmp *%rcx`, which another process could train;
    on this kernel a bypassed getppid returns as the program's functions do,
    from the return address its call pushed, through __ukl_return_thunk:
    once per call that has no exit work due, with no IRET and no POPF
    (docs/design.md, "Speculation")."""
    results = json.loads((bench.run(["ukl-ret-byp"], ["getppid"], quick=True)
                          / "results.json").read_text())
    row = next(run for run in results["runs"] if run["config"] == "ukl-ret-byp")["rows"][0]
    assert {k: row["switches"][k] for k in ("iret", "popf", "syscall", "sysret")} == {
        "iret": 0.0, "popf": 0.0, "syscall": 0.0, "sysret": 0.0}
    profiled = json.loads((profile.run("lebench", ["ukl-ret-byp"], ["getppid"])
                           / "results.json").read_text())
    (window,) = next(r for r in profiled["runs"] if r["config"] == "ukl-ret-byp")["windows"]
    thunk_returns = sum(int(line.rsplit(" ", 1)[1]) for line in window["folded"].splitlines()
                        if line.rsplit(" ", 1)[0].endswith(";__ukl_syscall;__ukl_return_thunk"))
    # A call during which a tick made a reschedule due takes the full exit
    # and returns with IRET: 1 in 15000 here, depending on where ticks fall.
    missed = window["operations"] - thunk_returns
    assert 0 <= missed <= 2, missed
    assert not missed or ";__ukl_syscall;ukl_byp_syscall_exit;schedule" in window["folded"]


def _section(elf, name: str) -> tuple[int, bytes]:
    for line in subprocess.run(["readelf", "-SW", str(elf)], capture_output=True,
                               text=True).stdout.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 6 and f[1] == name:
            addr, offset, size = (int(x, 16) for x in f[3:6])
            with open(elf, "rb") as image:
                image.seek(offset)
                return addr, image.read(size)
    raise AssertionError(f"no {name} in {elf}")


def _calls_patched_in(vmlinux, start: int, end: int, target: int) -> int:
    """Alternatives whose original sits in [START, END) and whose replacement
    calls TARGET (struct alt_instr: instr_offset, repl_offset, flags, lengths)."""
    alt_at, alts = _section(vmlinux, ".altinstructions")
    repl_at, repl = _section(vmlinux, ".altinstr_replacement")
    found = 0
    for i in range(0, len(alts), 14):
        instr, replacement, _, _, length = struct.unpack_from("<iiIBB", alts, i)
        if not start <= alt_at + i + instr < end:
            continue
        at = alt_at + i + 4 + replacement
        code = repl[at - repl_at:at - repl_at + length]
        found += sum(1 for j in range(len(code) - 4) if code[j] == 0xE8 and
                     at + j + 5 + struct.unpack_from("<i", code, j + 1)[0] == target)
    return found


def test_the_plain_gates_keep_the_srso_safe_ret_fixup():
    """An interrupt that lands in srso_safe_ret has its RET finished by
    handle_interrupted_saferet(), patched into error_entry on SRSO CPUs; the
    error_entry of the IDT that other tasks run with must have it too (a
    review found it missing from an earlier one)."""
    built = api.build("hello", "ukl")
    table = symbols.nm(built.vmlinux)
    at = {name: a for a, name in table}
    after = {name: table[i + 1][0] for i, (_, name) in enumerate(table[:-1])}
    target = at["handle_interrupted_saferet"]
    for entry in ("error_entry", "ukl_error_entry_plain"):
        # one call for X86_FEATURE_SRSO, one for X86_FEATURE_SRSO_ALIAS
        assert _calls_patched_in(built.vmlinux, at[entry], after[entry], target) == 2, entry


# The kernel's return thunks that the program's returns reach (F4's residual).
THUNKS = ["__x86_return_thunk", "srso_return_thunk", "srso_safe_ret",
          "srso_alias_return_thunk", "retbleed_return_thunk", "call_depth_return_thunk",
          "its_return_thunk", "__x86_indirect_thunk_rax", "__x86_indirect_its_thunk_rax"]


@pytest.mark.parametrize("config", ["ukl", "ukl-ret-byp"])
def test_probes_on_the_thunks_the_program_runs_are_refused(runs, config):
    run = runs("kprobe", config, args=("thunks",))
    assert run.stdout == "".join(f"kprobe on {t}: Invalid argument\n" for t in THUNKS)
    assert run.status == 0


def test_a_binary_runs_at_cpl0_here_only_if_the_administrator_accepts_it(tmp_path):
    # An unmodified binary has none of the kernel's thunks, which this
    # kernel's mitigations rely on (retpolines under TCG).
    exe = tmp_path / "cpl"
    subprocess.run(["gcc", "-O2", "-static", str(EXAMPLES / "cpl.c"), "-o", str(exe)], check=True)
    run = [*UKL, "run", "--binary", str(exe), "--config", "ukl-ret-byp"]
    refused = subprocess.run(run, capture_output=True, text=True, timeout=600)
    assert refused.returncode != 0 and "CPL 0" not in refused.stdout
    assert re.search(r"ukl: /app/cpl refused as CPL0 code: this CPU's mitigations need "
                     r"(indirect branch|return) thunks", refused.stderr), refused.stderr[-2000:]
    accepted = subprocess.run([*run, "--kernel-arg", "ukl_unmitigated_binaries=1"],
                              capture_output=True, text=True, timeout=600)
    assert "CPL 0\n" in accepted.stdout and accepted.returncode == 0, accepted.stderr[-2000:]
