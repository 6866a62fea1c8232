"""Configure and build the kernel, and relink it around an application."""
import hashlib
import json
import os
import shutil
import time
from pathlib import Path

from . import cc, relocs, series, steps
from ..errors import UklError
from ..layout import IMAGES, KBUILD, KERNEL_CONFIGS, OUT
from ..proc import capture, run

# Each flavor is tinyconfig plus these fragments; they differ only in UKL options.
FLAVORS = {
    "baseline": ["qemu-guest.config", "deploy.config"],
    "ukl": ["qemu-guest.config", "deploy.config", "ukl.config"],
    "ukl-debug": ["qemu-guest.config", "deploy.config", "ukl.config", "debug.config"],
    "ukl-mitigated": ["qemu-guest.config", "deploy.config", "ukl.config", "mitigations.config"],
}


def _check_flavor(flavor: str):
    if flavor not in FLAVORS:
        raise UklError(f"unknown kernel configuration {flavor!r}; valid: {', '.join(FLAVORS)}")


def build_dir(flavor: str) -> Path:
    _check_flavor(flavor)
    return KBUILD / flavor


def jobs() -> int:
    return (os.cpu_count() or 1) + 1


def _make(flavor: str, step: str, *args):
    tree = series.tree("linux")
    run(["make", "-C", tree, f"O={build_dir(flavor)}", f"-j{jobs()}", "CC=ccache gcc", *args],
        step, f"kernel-{flavor}", env=cc.ccache_env())


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
    key = _config_key(flavor)
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


# Flavors built by this process: the kernel tree does not change under a
# running process, so building again would only re-run make.  Only the
# baseline's bzImage is used as built; UKL programs get a copy of the UKL one
# linked around them (link).
_built: set[str] = set()


def build(flavor: str) -> Path:
    """Build the flavor's kernel (no application); return a copy of its
    bzImage that later links in the build directory (link, efi) leave alone."""
    image = KBUILD / f"{flavor}.bzImage"
    if flavor in _built and image.exists():
        return image
    with steps.lock(build_dir(flavor)):
        configure(flavor)
        _make(flavor, f"build kernel ({flavor})", "bzImage")
        _copy(build_dir(flavor) / "arch/x86/boot/bzImage", image)
    _built.add(flavor)
    return image


def _copy(src: Path, dst: Path):
    """SRC to DST, which is never seen half-written."""
    shutil.copyfile(src, dst.with_name(f".{dst.name}.tmp"))
    os.replace(dst.with_name(f".{dst.name}.tmp"), dst)


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


def _strip(exe: Path) -> Path:
    """EXE without its debugging information (app.elf keeps that, for gdb)."""
    stripped = exe.with_suffix(".stripped")
    cc.run_gcc(["objcopy", "--strip-debug", str(exe), str(stripped)], "stripping failed")
    return stripped


def _image_object(app_object: Path, exe: Path, resolved: dict[str, int], obj: Path):
    """An object for vmlinux: its .ukl.image section holds the executable, and
    its .ukl.relocs section the executable's references to the kernel, which
    boot moves with the kernel under KASLR (see relocs)."""
    shifted = exe.with_name("app-shifted.elf")
    _link_executable(app_object, shifted, {s: a + relocs.SHIFT for s, a in resolved.items()})
    image, moved = _strip(exe), _strip(shifted)
    table = obj.with_suffix(".relocs")
    table.write_bytes(relocs.table(relocs.fields(image.read_bytes(), moved.read_bytes())))
    for f in (shifted, moved):
        f.unlink()
    src = obj.with_suffix(".S")
    src.write_text(f'\t.section .ukl.image, "a"\n\t.balign 4096\n\t.incbin "{image}"\n'
                   f'\t.section .ukl.relocs, "a"\n\t.balign 4\n\t.incbin "{table}"\n')
    cc.run_gcc(["gcc", "-c", str(src), "-o", str(obj)], "wrapping the application failed")


# A linked image (out/images/<name>-<key>/: bzImage, vmlinux, app.elf, about
# 30 MB) is a stamped step like any other, keyed by the program's object and
# the identity of the kernel build it was linked into: an unchanged program on
# an unchanged kernel boots it again without relinking, from any process.
# A process that uses an image holds a shared lock on IMAGES/.<dir>.in-use
# until it exits; an image nobody holds is reclaimed once it is superseded
# (its program or its kernel changed), or once KEEP_IMAGES newer ones exist.
# Directories from before these stamps go as they did: beyond the newest
# few, after an hour.
KEEP_IMAGES = 16
KEEP_OLD_IMAGES, KEEP_OLD_SECONDS = 8, 3600


def _config_key(flavor: str) -> str:
    return steps.key_of(series.series_hash("linux"), [f.read_text() for f in fragments(flavor)])


def identity(flavor: str) -> str | None:
    """What the flavor's built kernel is made of: its configuration, the
    tree's commit and any local change in it, the compiler.  None when the
    kernel is not configured for the current series and fragments (build first)."""
    bdir, tree = build_dir(flavor), series.tree("linux")
    if steps.recorded(bdir) != _config_key(flavor):
        return None
    git = [*series.GIT, "-C", str(tree)]
    return steps.key_of(_config_key(flavor), capture([*git, "rev-parse", "HEAD"]),
                        hashlib.sha256(capture([*git, "diff", "HEAD"]).encode()).hexdigest(),
                        capture(["gcc", "--version"]))


def _prune_images(keep: Path, stem: str, flavor: str, ident: str):
    """Reclaim the images KEEP supersedes (the same program's, and any linked
    into an older build of this flavor's kernel) and those beyond the newest
    KEEP_IMAGES, unless in use."""
    stamped = sorted((p for p in IMAGES.iterdir() if p.is_dir() and steps.recorded(p)),
                     key=lambda p: (p / steps.STAMP).stat().st_mtime, reverse=True)
    for image in stamped[KEEP_IMAGES:]:
        if image != keep:
            steps.reclaim(image)
    for image in (p for p in IMAGES.iterdir() if p.is_dir() and p != keep):
        linked = steps.recorded(image)
        if linked is None:
            continue
        meta = image / "linked.json"
        try:
            info = json.loads(meta.read_text())
        except (OSError, ValueError):
            continue
        if info.get("flavor") == flavor and (info.get("stem") == stem
                                             or info.get("kernel") != ident):
            steps.reclaim(image)
    old = sorted((p for p in IMAGES.iterdir() if p.is_dir() and steps.recorded(p) is None
                  and not (p / "linked.json").exists()),
                 key=lambda p: p.stat().st_mtime, reverse=True)
    for image in old[KEEP_OLD_IMAGES:]:
        if time.time() - image.stat().st_mtime > KEEP_OLD_SECONDS:
            shutil.rmtree(image, ignore_errors=True)


def link(app_object: Path, name: str, flavor: str) -> Path:
    """Link the application and the UKL kernel around it; return its bzImage,
    linked once for this object and this kernel build (see identity()).

    The application is linked first, as a static executable that calls the
    kernel's __ukl_* functions at their addresses in the built kernel; then
    vmlinux is relinked with the executable in its image.  Kernel text comes
    before the image, so those addresses cannot move: checked after the link."""
    digest = hashlib.sha256(app_object.read_bytes()).hexdigest()
    ident = identity(flavor)
    if ident is None:
        build(flavor)
        ident = identity(flavor)
    stem = name if flavor == "ukl" else f"{name}-{flavor}"
    key = steps.key_of(digest, ident, cc.EH_FRAME_LDS.read_text(),
                       Path(relocs.__file__).read_text())
    dest = IMAGES / f"{stem}-{key[:16]}"
    IMAGES.mkdir(parents=True, exist_ok=True)
    steps.hold(dest)

    def make(dest: Path):
        build(flavor)
        bdir = build_dir(flavor)
        with steps.lock(bdir):
            abi, needed = _ukl_interface(bdir), _needed(app_object)
            check_interface(set(needed.values()), abi, flavor)
            exe, image = dest / "app.elf", dest / "app-image.o"
            resolved = {s: abi[k] for s, k in needed.items()}
            _link_executable(app_object, exe, resolved)
            _image_object(app_object, exe, resolved, image)
            _make(flavor, f"link {name} into the kernel", f"UKL_APP={image}", "bzImage")
            moved = sorted(s for s, a in _ukl_interface(bdir).items() if abi.get(s) != a)
            if moved:
                raise UklError(f"kernel symbol {moved[0]} moved when {name} was linked in")
            _copy(bdir / "arch/x86/boot/bzImage", dest / "bzImage")
            _copy(bdir / "vmlinux", dest / "vmlinux")
        (dest / "linked.json").write_text(json.dumps({"stem": stem, "flavor": flavor,
                                                      "kernel": ident}))
    steps.stamped(dest, key, make)
    os.utime(dest / steps.STAMP)            # the newest used, for KEEP_IMAGES
    _prune_images(dest, stem, flavor, ident)
    return dest / "bzImage"


def efi(flavor: str, app_image: Path | None, initramfs: Path, bootconfig: Path,
        dest: Path) -> Path:
    """The kernel as one EFI executable (DEST), with INITRAMFS and the boot
    configuration BOOTCONFIG built in, and for a UKL program its image
    object (APP_IMAGE, from link()).  The build directory's next build or
    link puts its own initramfs and configuration back."""
    build(flavor)
    with steps.lock(build_dir(flavor)):
        _make(flavor, f"link the EFI image ({flavor})",
              *([f"UKL_APP={app_image}"] if app_image else []),
              f"CONFIG_INITRAMFS_SOURCE={initramfs}",
              f"CONFIG_BOOT_CONFIG_EMBED_FILE={bootconfig}", "bzImage")
        _copy(build_dir(flavor) / "arch/x86/boot/bzImage", dest)
    _built.discard(flavor)
    return dest
