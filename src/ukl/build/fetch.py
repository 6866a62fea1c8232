"""Fetch pinned Debian packages with apt's own clients, verify, and unpack."""
import hashlib
import json
import os
import shutil
import tempfile
import tomllib
from pathlib import Path

from . import steps
from ..errors import UklError
from ..layout import DOWNLOADS, OUT, PINS, SRC
from ..proc import run

APT_DIR = OUT / "apt"
APT_SOURCES = Path("/etc/apt/sources.list")     # and sources.list.d/ beside it


def pins() -> dict:
    with open(PINS, "rb") as f:
        return tomllib.load(f)


def pin(name: str) -> dict:
    try:
        return pins()[name]
    except KeyError:
        raise UklError(f"no pin named {name!r} in {PINS.name}") from None


def pin_digest(*names: str) -> str:
    """Changes whenever one of the named pins does: the key of everything built from them."""
    return hashlib.sha256(json.dumps([pin(n) for n in names], sort_keys=True).encode()).hexdigest()


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _source_entries(text: str, deb822: bool) -> list[tuple[str, str, str]]:
    """(URI, suite, signed-by) of each binary archive a sources file names."""
    entries = []
    if deb822:
        for stanza in text.split("\n\n"):
            fields = {}
            for line in stanza.splitlines():
                key, sep, value = line.partition(":")
                if sep and not line.startswith((" ", "#")):
                    fields[key.strip().lower()] = value.strip()
            if "deb" in fields.get("types", "").split() and fields.get("enabled", "yes") != "no":
                entries += [(uri, suite, fields.get("signed-by", ""))
                            for uri in fields.get("uris", "").split()
                            for suite in fields.get("suites", "").split()]
        return entries
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) >= 3 and words[0] == "deb":
            options = ""
            if words[1].startswith("["):
                end = next(i for i, w in enumerate(words) if w.endswith("]"))
                options, words = " ".join(words[1:end + 1])[1:-1], [words[0], *words[end + 1:]]
            signed = next((o.split("=", 1)[1] for o in options.split()
                           if o.startswith("signed-by=")), "")
            entries.append((words[1], words[2], signed))
    return entries


def apt_sources(sources: Path = APT_SOURCES) -> list[str]:
    """The private sources list: for each pinned suite, the machine's own
    archive for it, as deb and deb-src lines."""
    found = []
    files = [sources, *sorted(sources.with_name("sources.list.d").glob("*"))]
    for path in files:
        if path.is_file() and path.suffix in (".list", ".sources"):
            found += _source_entries(path.read_text(), path.suffix == ".sources")
    lines, wanted = [], pins()["apt"]
    for suite in wanted["suites"]:
        match = next(((uri, signed) for uri, s, signed in found if s == suite), None)
        if match is None:
            raise UklError(f"no apt source for {suite} in {sources} or {sources}.d: the pins "
                           f"come from Debian 12's {', '.join(wanted['suites'])}")
        uri, signed = match
        options = f"[signed-by={signed}] " if signed else ""
        lines += [f"{kind} {options}{uri} {suite} {' '.join(wanted['components'])}"
                  for kind in ("deb", "deb-src")]
    return lines


def apt_options() -> list[str]:
    """A private apt configuration: the system's sources are never edited."""
    (APT_DIR / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    (APT_DIR / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
    (APT_DIR / "sources.list.d").mkdir(exist_ok=True)
    (APT_DIR / "sources.list").write_text("\n".join(apt_sources()) + "\n")
    opts = {
        "Dir::Etc::SourceList": APT_DIR / "sources.list",
        "Dir::Etc::SourceParts": APT_DIR / "sources.list.d",
        "Dir::State::Lists": APT_DIR / "lists",
        "Dir::Cache": APT_DIR / "cache",
        "Debug::NoLocking": "1",
    }
    if os.geteuid() == 0:
        opts["APT::Sandbox::User"] = "root"
    return [arg for k, v in opts.items() for arg in ("-o", f"{k}={v}")]


def apt_update():
    """The package lists, fetched again whenever the pinned sources change."""
    def update(lists: Path):
        run(["apt-get", *apt_options(), "update"], "apt-get update (private lists)", "apt-update")
    steps.stamped(APT_DIR / "lists", steps.key_of(apt_sources()), update, clean=False)


def download(name: str) -> list[Path]:
    """Download a pin's files into the cache (shared by clones), verified; return their paths."""
    p = pin(name)
    files = [DOWNLOADS / f for f in p["files"]]
    if all(f.exists() for f in files):
        _verify(name, p)
        return files
    apt_update()
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=DOWNLOADS) as tmp:
        spec = f"{p['package']}={p['version']}"
        if p["kind"] == "deb":
            cmd = ["apt-get", *apt_options(), "download", spec]
        else:
            cmd = ["apt-get", *apt_options(), "source", "--download-only", spec]
        run(cmd, f"download {spec}", f"download-{name}", cwd=tmp)
        for f in files:
            got = Path(tmp) / f.name
            if not got.exists():
                raise UklError(f"download of {spec} did not produce {f.name}")
            _check(got, p["files"][f.name])
        for f in files:
            os.replace(Path(tmp) / f.name, f)
    return files


def _check(path: Path, expected: str):
    actual = sha256(path)
    if actual != expected:
        raise UklError(f"sha256 mismatch for {path.name}: expected {expected}, got {actual}")


def _verify(name: str, p: dict):
    for fname, expected in p["files"].items():
        path = DOWNLOADS / fname
        try:
            _check(path, expected)
        except UklError:
            path.unlink()
            raise


def unpack(name: str, dest: Path | None = None) -> Path:
    """Unpack a pin into out/src/<tree> (or dest), once per pin; return the directory."""
    p = pin(name)
    return steps.stamped(dest or SRC / p["tree"], pin_digest(name),
                         lambda d: _unpack(name, p, d))


def _unpack(name: str, p: dict, dest: Path):
    files = download(name)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}."))
    try:
        if "members" in p:
            orig = DOWNLOADS / p["orig"]
            paths = [f"{p['tree']}/{m}" for m in p["members"]]
            script = 'xz -dc -T0 "$0" | tar -x -C "$1" "${@:2}"'
            run(["bash", "-o", "pipefail", "-c", script, orig, tmp, *paths],
                f"unpack {p['package']} ({', '.join(p['members'][:3])}, ...)", f"unpack-{name}")
            root = tmp / p["tree"]
        elif p["kind"] == "dsc":
            dsc = next(f for f in files if f.suffix == ".dsc")
            run(["dpkg-source", "--no-check", "-x", dsc, tmp / "src"],
                f"unpack {p['package']}", f"unpack-{name}")
            root = tmp / "src"
        elif "tarball" in p:
            script = (f'dpkg-deb --fsys-tarfile "$0" | tar -xO "./{p["tarball"]}" '
                      f'| xz -dc -T0 | tar -x -C "$1"')
            run(["bash", "-o", "pipefail", "-c", script, files[0], tmp],
                f"unpack {p['package']}", f"unpack-{name}")
            roots = [d for d in tmp.iterdir() if d.is_dir()]
            if len(roots) != 1:
                raise UklError(f"{p['tarball']} does not hold exactly one directory")
            root = roots[0]
        else:
            run(["dpkg-deb", "-x", files[0], tmp / "root"], f"unpack {p['package']}", f"unpack-{name}")
            root = tmp / "root"
        for child in root.iterdir():
            os.rename(child, dest / child.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
