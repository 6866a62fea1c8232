"""Debian's binary packages as Debian ships them (`ukl run --deb`).

apt, configured privately from the machine's own sources (fetch.py),
resolves a package's Depends closure against an empty system (nothing is
taken as installed) and downloads it into a cache shared by clones, each
file checked against the archive's signed indexes.  The closure is unpacked
with `dpkg -x`, once per set of versions; no maintainer script runs.  The
guest gets the package's own files and the ELF interpreter and libraries
its program loads, resolved inside the unpacked tree, at Debian's paths.
"""
import os
import re
from pathlib import Path

from . import fetch, steps
from ..errors import UklError
from ..layout import CACHE, OUT
from ..proc import capture, run

ARCHIVES = CACHE / "debs"
ROOTS = OUT / "debs"
PROGRAM_DIRS = ("usr/sbin/", "usr/bin/", "sbin/", "bin/")
LEFT_OUT = ("usr/share/doc/", "usr/share/man/", "lib/systemd/", "etc/init.d/")
LIBRARY_DIRS = ("lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu")
INST_LINE = re.compile(r"^Inst (\S+) \((\S+) .*\[(\S+)\]\)", re.M)    # apt-get --simulate


def _apt(*args: str) -> list[str]:
    """apt-get on the private lists, with nothing installed and the cache's archives."""
    status = ROOTS / "empty-status"
    status.parent.mkdir(parents=True, exist_ok=True)
    status.touch()
    (ARCHIVES / "partial").mkdir(parents=True, exist_ok=True)
    return ["apt-get", *fetch.apt_options(), "-o", f"Dir::State::status={status}",
            "-o", f"Dir::Cache::archives={ARCHIVES}", "--no-install-recommends", "-y", *args]


def closure(package: str) -> list[str]:
    """PACKAGE (NAME or NAME=VERSION) and everything it depends on: the files
    apt fetches.  A version's file never changes in Debian's archive."""
    fetch.apt_update()
    try:
        listed = capture(_apt("--simulate", "install", package))
    except UklError as e:
        said = re.findall(r"E: (.*?)(?:$|\n)", str(e))
        raise UklError(f"--deb {package}: {said[-1] if said else e}") from None
    found = INST_LINE.findall(listed)
    if not found:
        raise UklError(f"--deb {package}: apt would install nothing")
    return sorted(f"{name}_{version.replace(':', '%3a')}_{arch}.deb"
                  for name, version, arch in found)


def unpack(package: str) -> Path:
    """PACKAGE's closure, fetched and unpacked: DEST/root, and in DEST/files
    and DEST/dirs the paths of its family's packages (those built from its
    source package: redis-server's redis-tools, nginx's nginx-common)."""
    files = closure(package)
    name = package.split("=", 1)[0]
    if not any(deb.startswith(f"{name}_") for deb in files):
        raise UklError(f"--deb {package}: a virtual package; name the package that provides it")
    key = steps.key_of(files, Path(__file__).read_text())     # this file says what is kept

    def make(dest: Path):
        run(_apt("-q", "--download-only", "install", package), f"fetch {package} and what it "
            f"depends on ({len(files)} packages)", f"deb-{name}")
        script = 'for deb in "${@:2}"; do dpkg-deb -x "$deb" "$1" || exit; done'
        run(["bash", "-c", script, "unpack", dest / "root", *(ARCHIVES / f for f in files)],
            f"unpack {len(files)} packages", f"deb-{name}")
        [own] = [deb for deb in files if deb.startswith(f"{name}_")]
        family = [deb for deb in files if _source(ARCHIVES / deb) == _source(ARCHIVES / own)]
        listed = [_listing(ARCHIVES / deb) for deb in family]
        (dest / "files").write_text("".join(f for files, _ in listed for f in files))
        (dest / "dirs").write_text("".join(d for _, dirs in listed for d in dirs))
        (dest / "version").write_text(own.split("_")[1].replace("%3a", ":"))
    return steps.shared(ROOTS, name, key, make, 2)


def _source(deb: Path) -> str:
    """The source package DEB was built from: the package's family."""
    fields = dict(line.split(": ", 1) for line in
                  capture(["dpkg-deb", "-f", str(deb), "Package", "Source"]).splitlines())
    return fields.get("Source", fields["Package"]).split()[0]


def _listing(deb: Path) -> tuple[list[str], list[str]]:
    """DEB's files (symlinks included) and directories, as paths under /."""
    files, dirs = [], []
    for line in capture(["dpkg-deb", "-c", str(deb)]).splitlines():
        path = line.split(None, 5)[5].split(" -> ")[0].removeprefix("./").rstrip("/")
        if path:
            (dirs if line.startswith("d") else files).append(path + "\n")
    return files, dirs


def inside(root: Path, path: str) -> Path:
    """PATH resolved as the guest will: symlinks, absolute ones included, stay in ROOT."""
    parts, seen, done = [p for p in path.split("/") if p], 0, root
    while parts:
        part = parts.pop(0)
        if part == "..":
            done = done.parent if done != root else root
            continue
        nxt = done / part
        if nxt.is_symlink():
            seen += 1
            if seen > 40:
                raise UklError(f"{path}: too many symbolic links")
            target = os.readlink(nxt)
            parts = [p for p in target.split("/") if p] + parts
            done = root if target.startswith("/") else done
            continue
        done = nxt
    return done


def entrypoint(dest: Path, package: str, chosen: str | None) -> tuple[str, Path]:
    """The program to start: CHOSEN (a path in the tree), or the family's
    program named after the package, or its only one.  Its guest path and file."""
    root, own = dest / "root", (dest / "files").read_text().split()
    if chosen:
        path = inside(root, chosen)
        if not path.is_file():
            raise UklError(f"--entrypoint {chosen}: not a file of {package} or what it depends on")
        return chosen, path
    programs = {p: inside(root, p) for p in own if p.startswith(PROGRAM_DIRS)}
    programs = {p: f for p, f in programs.items() if f.is_file() and _is_elf(f)}
    name = package.split("=", 1)[0]
    named = [p for p in programs if Path(p).name == name]
    if named or len(programs) == 1:
        path = (named or list(programs))[0]
        return "/" + path, programs[path]
    if not programs:
        raise UklError(f"--deb {package}: the package has no program; name one of its "
                       "dependencies' with --entrypoint")
    raise UklError(f"--deb {package}: {len(programs)} programs "
                   f"({', '.join('/' + p for p in sorted(programs))});"
                   " choose one with --entrypoint")


def _is_elf(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def guest_dirs(dest: Path) -> list[str]:
    """The family's directories (/var/log/nginx, /var/lib/redis...)."""
    dirs = (dest / "dirs").read_text().split()
    return list(dict.fromkeys("/" + d for d in dirs if not (d + "/").startswith(LEFT_OUT)))


def guest_files(dest: Path, program: Path) -> list[tuple[Path, str]]:
    """The family's files (not docs, man pages or init scripts) and what
    PROGRAM loads before main(), as (file in the tree, guest path)."""
    root = dest / "root"
    files = {}
    for path in (dest / "files").read_text().split():
        if not path.startswith(LEFT_OUT) and inside(root, path).is_file():
            files["/" + path] = inside(root, path)
    files.update(_libraries(root, program))
    return sorted((f, g) for g, f in files.items())


def _libraries(root: Path, program: Path) -> dict[str, Path]:
    head = capture(["readelf", "-l", "-W", str(program)])
    if "Requesting program interpreter" not in head:
        return {}
    interp = head.split("Requesting program interpreter: ", 1)[1].split("]", 1)[0]
    loader = inside(root, interp)
    if not loader.is_file():
        raise UklError(f"{program.name}: its interpreter {interp} is in no package it depends on")
    paths = ":".join(str(inside(root, d)) for d in LIBRARY_DIRS)
    listed = capture([str(loader), "--library-path", paths, "--list", str(program)])
    found = {interp: loader}
    for line in listed.splitlines():
        words = line.split()
        if "=>" not in words:
            continue
        lib = words[words.index("=>") + 1]
        if lib == "not" or not Path(lib).resolve().is_relative_to(root.resolve()):
            raise UklError(f"{program.name} needs {words[0]}, which no package it depends on "
                           "ships")
        found["/" + str(Path(lib).relative_to(root))] = Path(lib).resolve()
    return found
