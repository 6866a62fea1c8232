"""The two kernels share source and config; a new program only relinks vmlinux."""
import io
import re
import subprocess
import sys
import time

from ukl import api
from ukl.build import kernel, steps
from ukl.layout import LOGS
from uklcli import ukl



def test_configs_differ_only_in_ukl_options(runs):
    runs("hello"), runs("hello", "baseline")      # both kernels exist
    ukl, base = kernel.config_values("ukl"), kernel.config_values("baseline")
    differing = {k for k in ukl.keys() | base.keys() if ukl.get(k) != base.get(k)}
    assert differing, "the UKL kernel must differ somewhere"
    assert all(k == "CONFIG_UNIKERNEL_LINUX" or k.startswith("CONFIG_UKL_")
               for k in differing), sorted(differing)


def test_relinking_a_program_compiles_no_kernel_code(runs, tmp_path):
    runs("hello")                                    # the kernel is built
    # The build directory's lock keeps other processes' links out of the log.
    with steps.lock(kernel.build_dir("ukl")):
        for n in range(2):           # new objects: linked images are reused otherwise
            src = tmp_path / f"relinked{n}.c"
            src.write_text(f'int main(void) {{ return {n}; }} /* {time.time()} */\n')
            api.build(str(src))
        log = (LOGS / "kernel-ukl.log").read_text()
    compiled = re.findall(r"^\s+CC\s+(\S+)", log, re.M)
    # kbuild regenerates the version stamp (build number) on every vmlinux link,
    # and the boot stub embeds the new vmlinux; neither is kernel code.
    kernel_objects = [o for o in compiled if not o.startswith("arch/x86/boot/")
                      and o != "init/version-timestamp.o"]
    assert not kernel_objects, kernel_objects
    assert re.search(r"^\s+LD\s+vmlinux$", log, re.M)


def test_an_unchanged_program_on_an_unchanged_kernel_is_not_linked_again():
    """Two `ukl run hello`s: the second boots the image the first linked."""
    first, second = ukl("run", "hello"), ukl("run", "hello")
    assert first.returncode == second.returncode == 3, first.stderr + second.stderr  # as hello does
    assert "link hello into the kernel" not in second.stderr, second.stderr
    assert "build kernel" not in second.stderr, second.stderr
    assert first.stdout == second.stdout


def test_a_superseded_image_is_reclaimed_unless_in_use(tmp_path):
    """hello linked from one object, then from another: the first image goes,
    unless a process still holds it."""
    src = tmp_path / "reclaimed.c"
    images = []
    for n in range(3):
        src.write_text(f'int main(void) {{ return {n}; }} /* {time.time()} */\n')
        images.append(api.build(str(src)).kernel.parent)
        if n == 0:          # held by another process, as by a guest booting it
            holder = subprocess.Popen(
                [sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'w'); "
                 "fcntl.flock(f, fcntl.LOCK_SH); print(flush=True); time.sleep(600)",
                 str(images[0].parent / f".{images[0].name}.in-use")], stdout=subprocess.PIPE)
            holder.stdout.readline()
        if n < 2:
            steps._in_use.pop(images[n]).close()       # this process lets it go
    try:
        assert images[0].exists() and images[2].exists() and not images[1].exists()
    finally:
        holder.kill()
        holder.wait()


def test_programs_with_one_name_get_their_own_kernels(tmp_path, runs):
    """Two `lua`s from two directories, built A, B, A in one process: A gets A's kernel."""
    runs("hello")
    built = {}
    for which in ("first", "second"):
        src = tmp_path / which / "lua.c"
        src.parent.mkdir()
        src.write_text(f'#include <stdio.h>\nint main(void) {{ puts("{which}"); return 0; }}\n')
        built[which] = api.build(str(src))
    again = api.build(str(tmp_path / "first" / "lua.c"))
    assert built["first"].kernel != built["second"].kernel
    assert again.kernel == built["first"].kernel
    for b, want in ((again, "first"), (built["second"], "second")):
        buf = io.BytesIO()
        assert api.boot(b, stdout=buf).status == 0
        assert buf.getvalue().decode().strip() == want


def _calls_from(vmlinux, symbol: str) -> list[set[str]]:
    """The names of each address SYMBOL's code calls or jumps to outside itself."""
    nm = subprocess.run(["nm", "-S", str(vmlinux)], capture_output=True, text=True,
                        check=True).stdout.split("\n")
    start, size = next((int(f[0], 16), int(f[1], 16)) for f in map(str.split, nm)
                       if len(f) == 4 and f[3] == symbol)
    names = {}
    for f in map(str.split, nm):
        if len(f) >= 3 and f[-2] in "Tt":
            names.setdefault(int(f[0], 16), set()).add(f[-1])
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={start}",
                          f"--stop-address={start + size}", str(vmlinux)], capture_output=True,
                         text=True, check=True).stdout
    targets = {int(t, 16) for t in re.findall(r"\s(?:call|jmp)\s+([0-9a-f]{16}) <", asm)}
    return [names.get(t, {hex(t)}) for t in sorted(targets) if not start <= t < start + size]


def test_the_ukl_system_call_entry_leaves_assembly_only_for_noinstr_code(runs):
    """objtool's noinstr validation follows every call out of the entry code:
    what __ukl_syscall calls must be noinstr C (issue 25, F12: the body ran
    from the assembly, x64_sys_call() and ukl_shortcut() unchecked)."""
    runs("hello")
    build = kernel.build_dir("ukl")
    table = subprocess.run(["objdump", "-t", str(build / "vmlinux.o")], capture_output=True,
                           text=True, check=True).stdout
    sections = {name: section for section, name in
                re.findall(r"^[0-9a-f]{16} .{7} (\S+)\s+[0-9a-f]{16} (\S+)$", table, re.M)}
    called = _calls_from(build / "vmlinux", "__ukl_syscall")
    assert {"ukl_byp_syscall"} in called and {"do_syscall_64"} in called, called
    outside = [{f: sections.get(f) for f in names} for names in called
               if not any(sections.get(f) in (".noinstr.text", ".entry.text") for f in names)]
    assert not outside, outside
