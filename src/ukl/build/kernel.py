"""Configure and build the kernel, and relink it around an application."""
import hashlib
import os
import shutil
import time
from pathlib import Path

from . import cc, series, steps
from ..errors import UklError
from ..layout import IMAGES, KBUILD, KERNEL_CONFIGS, OUT
from ..proc import run

# Each flavor is tinyconfig plus these fragments; they differ only in UKL options.
FLAVORS = {
    "baseline": ["qemu-guest.config"],
    "ukl": ["qemu-guest.config", "ukl.config"],
    "ukl-debug": ["qemu-guest.config", "ukl.config", "debug.config"],
    "ukl-mitigated": ["qemu-guest.config", "ukl.config", "mitigations.config"],
}


def _check_flavor(flavor: str):
    if flavor not in FLAVORS:
        raise UklError(f"unknown kernel configuration {flavor!r}; valid: {', '.join(FLAVORS)}")


def build_dir(flavor: str) -> Path:
    _check_flavor(flavor)
    return KBUILD / flavor


def ccache_env() -> dict:
    """The compiler cache outlives out/ (and a fresh clone): a kernel built again
    from the same sources, in a clone at the same path, is mostly cache hits."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ukl" / "ccache"
    return {"CCACHE_DIR": str(cache), "CCACHE_NOHASHDIR": "true",
            "CCACHE_BASEDIR": str(OUT), "CCACHE_MAXSIZE": "5G"}


def jobs() -> int:
    return (os.cpu_count() or 1) + 1


def _make(flavor: str, step: str, *args):
    tree = series.tree("linux")
    run(["make", "-C", tree, f"O={build_dir(flavor)}", f"-j{jobs()}", "CC=ccache gcc", *args],
        step, f"kernel-{flavor}", env=ccache_env())


def fragments(flavor: str) -> list[Path]:
    return [KERNEL_CONFIGS / f for f in FLAVORS[flavor]]


def _config_lines(text: str) -> dict[str, str]:
    """CONFIG_X=value lines (a fragment or a .config) as a dict."""
    values = {}
    for line in text.splitlines():
        if line.startswith("CONFIG_"):
            key, _, value = line.partition("=")
            values[key] = value
    return values


def requested_options(flavor: str) -> dict[str, str]:
    opts = {}
    for frag in fragments(flavor):
        opts.update(_config_lines(frag.read_text()))
    return opts


# UKL code runs as kernel code, so in a kernel with retpolines and return
# thunks it is built with them too: it calls the kernel's thunks (cc.THUNK).
# Assembly too: ukl-cc's assembler rewrites its RETs and indirect branches.
THUNK_CFLAGS = {
    "CONFIG_MITIGATION_RETPOLINE": ["-mindirect-branch=thunk-extern",
                                    "-mindirect-branch-register",
                                    "-Wa,--ukl-thunk-branches"],
    "CONFIG_MITIGATION_RETHUNK": ["-mfunction-return=thunk-extern",
                                  "-Wa,--ukl-thunk-returns"],
}


def thunk_cflags(flavor: str) -> list[str]:
    options = requested_options(flavor)
    return [flag for symbol, flags in THUNK_CFLAGS.items() if options.get(symbol) == "y"
            for flag in flags]


def config_values(flavor: str) -> dict[str, str]:
    return _config_lines((build_dir(flavor) / ".config").read_text())


def configure(flavor: str):
    """tinyconfig + fragments; fail if Kconfig dropped any requested value."""
    bdir = build_dir(flavor)
    key = steps.key_of(series.series_hash("linux"), [f.read_text() for f in fragments(flavor)])
    if not (bdir / ".config").exists() or _dropped(flavor):
        steps.forget(bdir)                # a make against another tree rewrites .config

    def make_config(bdir: Path):
        tree = series.tree("linux")
        _make(flavor, f"configure kernel ({flavor})", "tinyconfig")
        run([tree / "scripts/kconfig/merge_config.sh", "-m", "-O", bdir, bdir / ".config",
             *fragments(flavor)], f"merge config fragments ({flavor})",
            f"kernel-{flavor}-config", cwd=tree, env={"ARCH": "x86_64"})
        _make(flavor, f"configure kernel ({flavor})", "olddefconfig")
        dropped = _dropped(flavor)
        if dropped:
            name, want, have = dropped[0]
            raise UklError(f"kernel config ({flavor}): {name}={want} requested but Kconfig "
                           f"chose {have} (unmet dependency?)")
    steps.stamped(bdir, key, make_config, clean=False)


def _dropped(flavor: str) -> list[tuple[str, str, str]]:
    """Requested options the .config does not have."""
    if not (build_dir(flavor) / ".config").exists():
        return [(k, v, "n") for k, v in requested_options(flavor).items()]
    values = config_values(flavor)
    return [(k, want, values.get(k, "n")) for k, want in requested_options(flavor).items()
            if values.get(k, "n") != want]


# Flavors built, and (name, flavor, object digest) -> bzImage linked, by this process:
# the kernel tree does not change under a running process, so redoing either
# would only re-run make.  Only the baseline's bzImage is used as built; UKL
# programs get a copy of the UKL one linked around them.
_built: set[str] = set()
_linked: dict[tuple[str, str, str], Path] = {}


def build(flavor: str) -> Path:
    """Build the flavor's kernel (no application); return its bzImage."""
    image = build_dir(flavor) / "arch/x86/boot/bzImage"
    if flavor in _built and image.exists():
        return image
    with steps.lock(build_dir(flavor)):
        configure(flavor)
        _make(flavor, f"build kernel ({flavor})", "bzImage")
    _built.add(flavor)
    return image


def module(source: Path, flavor: str) -> Path:
    """A one-file out-of-tree module built against the flavor's kernel; its .ko."""
    bdir, work = build_dir(flavor), OUT / "modules" / flavor / source.stem
    build(flavor)
    work.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, work / source.name)
    (work / "Kbuild").write_text(f"obj-m := {source.stem}.o\n")
    with steps.lock(bdir):
        _make(flavor, "prepare the kernel for modules", "modules_prepare")
        _make(flavor, f"build module {source.stem}", f"M={work}",
              f"KBUILD_EXTRA_SYMBOLS={bdir / 'vmlinux.symvers'}", "modules")
    return work / f"{source.stem}.ko"


def _ukl_interface(bdir: Path) -> dict[str, int]:
    """The kernel's UKL interface: its __ukl_* functions, by address."""
    abi = {}
    for line in (bdir / "System.map").read_text().splitlines():
        addr, kind, symbol = line.split()
        if symbol.startswith("__ukl_") and kind in "Tt":
            abi[symbol] = int(addr, 16)
    return abi


def _kernel_symbol(symbol: str) -> str:
    """What resolves a program's reference: gcc's thunks become the kernel's UKL
    ones, whose jumps boot patches for the CPU as it patches the kernel's own."""
    thunk = cc.THUNK.fullmatch(symbol)
    return f"__ukl_{thunk.group(1)}" if thunk else symbol


def _needed(app_object: Path) -> dict[str, str]:
    """The program's references into the kernel, and what resolves each."""
    return {s: _kernel_symbol(s) for s in cc.undefined_symbols(app_object)
            if s.startswith(cc.KERNEL_ABI) or cc.THUNK.fullmatch(s)}


# The Kconfig symbol behind each optional part of the kernel's UKL interface.
INTERFACE_OPTIONS = {"__ukl_shortcuts": "CONFIG_UKL_SHORTCUTS",
                     "__ukl_return_thunk": "CONFIG_MITIGATION_RETHUNK",
                     "__ukl_indirect_thunk_": "CONFIG_MITIGATION_RETPOLINE"}


def check_interface(needed: set[str], abi: dict[str, int], flavor: str):
    """Refuse, before linking, a program that needs what the kernel lacks, or
    that lacks the return thunk the kernel's own code takes."""
    missing = sorted(needed - set(abi))
    if missing:
        option = next((o for prefix, o in INTERFACE_OPTIONS.items()
                       if missing[0].startswith(prefix)), None)
        raise UklError(f"the program needs {missing[0]}, which the {flavor} kernel does not "
                       f"have" + (f" (built without {option})" if option else ""))
    if requested_options(flavor).get("CONFIG_MITIGATION_RETHUNK") == "y" \
            and "__ukl_return_thunk" not in needed:
        raise UklError(f"the program was compiled without the return thunks of the {flavor} "
                       f"kernel: rebuild it with UKL_KERNEL={flavor}")


def _link_executable(app_object: Path, exe: Path, resolved: dict[str, int]):
    """The program as a static executable at the usual 4 MiB, calling into the kernel."""
    cc.run_gcc(["gcc", "-static", "-no-pie", "-nostdlib", f"-Wl,-T,{cc.EH_FRAME_LDS}",
                "-Wl,-z,max-page-size=4096", "-Wl,-z,noexecstack", "-Wl,--build-id=none",
                *([f"-Wl,-e,{cc.ENTRY}"] if cc.has_entry(app_object) else []),
                str(app_object), *(f"-Wl,--defsym={s}={a:#x}" for s, a in resolved.items()),
                "-o", str(exe)], f"linking {exe.name} against the kernel failed")


def _image_object(exe: Path, obj: Path):
    """An object whose .ukl.image section holds the executable, without its
    debugging information (app.elf keeps that, for gdb), for vmlinux."""
    stripped = obj.with_suffix(".elf")
    cc.run_gcc(["objcopy", "--strip-debug", str(exe), str(stripped)], "stripping failed")
    src = obj.with_suffix(".S")
    src.write_text(f'\t.section .ukl.image, "a"\n\t.balign 4096\n\t.incbin "{stripped}"\n')
    cc.run_gcc(["gcc", "-c", str(src), "-o", str(obj)], "wrapping the application failed")


# Each image holds a vmlinux and a bzImage (about 30 MB).  They are read only
# while their guest runs, so the older ones go, but never one of the newest
# few or one linked in the last hour: another `ukl` may be booting it.
KEEP_IMAGES, KEEP_SECONDS = 8, 3600


def _prune_images(keep: Path):
    current = {p.parent for p in _linked.values()} | {keep}
    images = sorted((p for p in IMAGES.iterdir() if p.is_dir()),
                    key=lambda p: p.stat().st_mtime, reverse=True)
    for old in images[KEEP_IMAGES:]:
        if old not in current and time.time() - old.stat().st_mtime > KEEP_SECONDS:
            shutil.rmtree(old, ignore_errors=True)


def _image_dir(name: str, flavor: str, digest: str) -> Path:
    """Keyed by what was linked: two programs with one name never share an image."""
    stem = name if flavor == "ukl" else f"{name}-{flavor}"
    dest = IMAGES / f"{stem}-{digest[:16]}"
    IMAGES.mkdir(parents=True, exist_ok=True)
    _prune_images(dest)
    return dest


def link(app_object: Path, name: str, flavor: str) -> Path:
    """Link the application and the UKL kernel around it; return a private bzImage copy.

    The application is linked first, as a static executable that calls the
    kernel's __ukl_* functions at their addresses in the built kernel; then
    vmlinux is relinked with the executable in its image.  Kernel text comes
    before the image, so those addresses cannot move: checked after the link."""
    digest = hashlib.sha256(app_object.read_bytes()).hexdigest()
    key = (name, flavor, digest)
    if key in _linked and _linked[key].exists():
        return _linked[key]
    if flavor not in _built:         # once per process: the kernel is up to date
        build(flavor)
    dest = _image_dir(name, flavor, digest)
    dest.mkdir(parents=True, exist_ok=True)
    bdir = build_dir(flavor)
    with steps.lock(bdir):
        abi, needed = _ukl_interface(bdir), _needed(app_object)
        check_interface(set(needed.values()), abi, flavor)
        exe, image = dest / "app.elf", dest / "app-image.o"
        _link_executable(app_object, exe, {s: abi[k] for s, k in needed.items()})
        _image_object(exe, image)
        _make(flavor, f"link {name} into the kernel", f"UKL_APP={image}", "bzImage")
        moved = sorted(s for s, a in _ukl_interface(bdir).items() if abi.get(s) != a)
        if moved:
            raise UklError(f"kernel symbol {moved[0]} moved when {name} was linked in")
        for src, dst in ((bdir / "arch/x86/boot/bzImage", dest / "bzImage"),
                         (bdir / "vmlinux", dest / "vmlinux")):
            shutil.copyfile(src, dst.with_suffix(".tmp"))
            os.replace(dst.with_suffix(".tmp"), dst)
    _linked[key] = dest / "bzImage"
    return _linked[key]
