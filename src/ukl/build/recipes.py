"""App recipes: apps/<name>.toml says how to build a Debian source package with
ukl-cc, and how to run the result.  One stamped runner builds any of them,
for UKL or for the baseline.

Keys:
  description  one line
  source       the pin (pins.toml) of the Debian source package
  depends      recipes built first (libraries), for the same kind
  patches      patch files under apps/, applied (-p1) to the source first
  sources      files under apps/ copied to the top of the source tree then
               (a small program built with the package)
  steps        commands run in a copy of the source tree; placeholders:
               {cc} the compiler, {jobs}, {prefix} this recipe's install
               prefix, and each dependency's name for its prefix
  binary       the program the steps produce, relative to the source tree
  args         default arguments in the guest
  ports        TCP ports it listens on in the guest
  files        guest path = path in the built source tree, copied in
  dirs         empty directories the program needs in the guest
  [run]        a table, after the build's keys: how the program runs, as a
               Docker image's config says.  The build's key leaves it out.
               Its keys (all optional):
    user       the user it runs as unless `ukl run --user` says otherwise
    env        variables (names and strings) the program and the setup
               script are given, which `ukl run -e` overrides
    setup      a shell script under apps/ that /init sources as root
               before the program starts (its entrypoint: initialise a
               volume, say); it ends the run with `ukl_fail MESSAGE`
    stop_signal  the signal a stop (SIGTERM or SIGINT to `ukl run`)
               sends, as Docker's STOPSIGNAL (default: the one received)
    data       where the program keeps its data: a data disk (--data) is
               mounted there, as a Docker image's VOLUME (default /data)
  [bench]      a table, last in the file: how `ukl bench` and `ukl profile`
               drive the program as a server.  The build's key leaves it
               out: editing it rebuilds nothing.  Its keys:
    client     the client on the host, one of BENCH_CLIENTS
    tests      the client's tests, measured in this order; the first also
               warms the server up, and is the one `ukl profile` measures
    port       the guest port the client connects to (default: the
               recipe's only port)
    env        variables the server is given for the client (as `ukl run
               -e`), e.g. to let it connect without a password
"""
import os
import re
import shutil
import signal
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from . import cc, fetch, libc, steps
from ..configs import Config
from ..errors import UklError
from ..layout import APPS, CACHE, LOGS
from ..proc import run

# What ukl-cc is made of: a change to any of them rebuilds every recipe.
UKL_CC_SOURCES = [Path(__file__).with_name("cc.py"), Path(__file__).with_name("ukl_cc.py"),
                  *sorted(Path(__file__).with_name("toolchain").iterdir())]
REQUIRED = {"description", "source", "steps"}
OPTIONAL = {"depends", "patches", "sources", "binary", "args", "ports", "files", "dirs", "run",
            "bench"}
RUN_KEYS = ("user", "env", "setup", "stop_signal", "data")
BENCH_KEYS = ("client", "tests", "port", "env")
# Tables at the end of a recipe, in this order, that its build's key leaves out.
RUN_TABLES = ("run", "bench")
# Each client's tests; None: whatever the client itself accepts.
BENCH_CLIENTS = {
    "redis-benchmark": None,           # Redis's own benchmark tool: its -t names
    "memcached": ("get", "set"),       # the memcached text protocol
    "http": ("get",),                  # HTTP/1.1 GETs of /
    "pgbench": ("select-only", "tpcb-like"),   # pgbench's built-in scripts
}
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")        # a variable name in env
SIGNALS = {s.name.removeprefix("SIG") for s in signal.Signals}
# App builds are shared by every clone: <variant>/<name>-<key>/ under the
# cache, the key being everything the build depends on (_key), and its absolute
# paths (the prefix, the tree) the same wherever it is used from.  A build in
# use is held until its process exits; beyond the newest KEEP_APP_BUILDS of a
# recipe, unheld ones are reclaimed.
BUILD_ROOT = CACHE / "apps"
KEEP_APP_BUILDS = 2
LOG_TAIL = 15


@dataclass(frozen=True)
class Bench:
    """How `ukl bench` drives a server recipe: [bench] in the module's docstring."""
    client: str
    tests: tuple
    port: int
    env: tuple = ()                 # (name, value) pairs


@dataclass(frozen=True)
class Run:
    """How the program runs: [run] in the module's docstring."""
    user: str | None = None
    env: tuple = ()                        # (name, value) pairs
    setup: str | None = None               # under apps/
    stop_signal: str | None = None         # a signal's name without SIG
    data: str = "/data"                    # where a data disk is mounted


@dataclass(frozen=True)
class Recipe:
    name: str
    description: str
    source: str
    steps: tuple
    depends: tuple = ()
    patches: tuple = ()                    # under apps/
    sources: tuple = ()                    # under apps/
    binary: str | None = None              # None: a library, only installed
    args: tuple = ()
    ports: tuple = ()
    files: dict = field(default_factory=dict)
    dirs: tuple = ()
    run: Run = Run()
    bench: Bench | None = None


def names() -> list[str]:
    return sorted(p.stem for p in APPS.glob("*.toml"))


def path(name: str) -> Path:
    return APPS / f"{name}.toml"


def parse(name: str, text: str) -> Recipe:
    """A recipe from its TOML text; every mistake is a one-line UklError."""
    where = f"recipe {name}"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UklError(f"{where}: {e}") from None
    unknown = sorted(set(data) - REQUIRED - OPTIONAL)
    if unknown:
        raise UklError(f"{where}: unknown key {unknown[0]!r}; valid: "
                       f"{', '.join(sorted(REQUIRED | OPTIONAL))}")
    missing = sorted(REQUIRED - set(data))
    if missing:
        raise UklError(f"{where}: missing key {missing[0]!r}")
    if not all(isinstance(s, list) and s and all(isinstance(a, str) for a in s)
               for s in data["steps"]):
        raise UklError(f"{where}: steps must be a list of commands (lists of strings)")
    ports = data.get("ports", [])
    if not all(isinstance(p, int) and 0 < p < 65536 for p in ports):
        raise UklError(f"{where}: ports must be TCP port numbers")
    for guest in [*data.get("files", {}), *data.get("dirs", [])]:
        if not guest.startswith("/"):
            raise UklError(f"{where}: guest path {guest!r} is not absolute")
    for key, what in (("patches", "patch"), ("sources", "source file")):
        for file in data.get(key, []):
            if not (APPS / file).is_file():
                raise UklError(f"{where}: {what} {file!r} is not a file under apps/")
    _check_last(where, data, text)
    run = _run(where, data["run"]) if "run" in data else Run()
    bench = _bench(where, data) if "bench" in data else None
    return Recipe(name=name, description=data["description"], source=data["source"],
                  steps=tuple(tuple(s) for s in data["steps"]),
                  depends=tuple(data.get("depends", [])),
                  patches=tuple(data.get("patches", [])),
                  sources=tuple(data.get("sources", [])), binary=data.get("binary"),
                  args=tuple(data.get("args", [])), ports=tuple(ports),
                  files=dict(data.get("files", {})), dirs=tuple(data.get("dirs", [])),
                  run=run, bench=bench)


def _check_last(where: str, data: dict, text: str):
    """[run] and [bench] are tables after everything the build's key covers."""
    present = [t for t in RUN_TABLES if t in data]
    try:
        last = tomllib.loads(build_text(text)) == {k: v for k, v in data.items()
                                                   if k not in RUN_TABLES}
    except tomllib.TOMLDecodeError:
        last = False
    for table in present:
        if not (last and isinstance(data[table], dict)):
            raise UklError(f"{where}: [{table}] must be a table, the last one in the file"
                           if len(present) == 1 else
                           f"{where}: [run] and [bench] must be tables, the last ones in the file")


def _run(where: str, table: dict) -> Run:
    where = f"{where}: [run]"
    unknown = sorted(set(table) - set(RUN_KEYS))
    if unknown:
        raise UklError(f"{where}: unknown key {unknown[0]!r}; valid: {', '.join(RUN_KEYS)}")
    user, env = table.get("user"), table.get("env", {})
    if user is not None and not (isinstance(user, str) and user):
        raise UklError(f"{where}: user must be a user's name or number")
    if not (isinstance(env, dict) and all(isinstance(v, str) and NAME.fullmatch(k)
                                          for k, v in env.items())):
        raise UklError(f"{where}: env must map variable names to strings")
    setup = table.get("setup")
    if setup is not None and not (isinstance(setup, str) and (APPS / setup).is_file()):
        raise UklError(f"{where}: setup {setup!r} is not a file under apps/")
    stop = table.get("stop_signal")
    if stop is not None and stop not in SIGNALS:
        raise UklError(f"{where}: stop_signal must be a signal's name, e.g. INT or QUIT")
    data = table.get("data", "/data")
    if not (isinstance(data, str) and data.startswith("/") and data != "/"):
        raise UklError(f"{where}: data must be an absolute guest path, e.g. /data")
    return Run(user, tuple(env.items()), setup, stop, data)


def _bench(where: str, data: dict) -> Bench:
    """The [bench] table, checked against the recipe it is in."""
    table, where = data["bench"], f"{where}: [bench]"
    unknown = sorted(set(table) - set(BENCH_KEYS))
    if unknown:
        raise UklError(f"{where}: unknown key {unknown[0]!r}; valid: {', '.join(BENCH_KEYS)}")
    client = table.get("client")
    if not isinstance(client, str) or client not in BENCH_CLIENTS:
        raise UklError(f"{where}: client must be one of {', '.join(BENCH_CLIENTS)}")
    tests = table.get("tests")
    if not (isinstance(tests, list) and tests and all(isinstance(t, str) and t for t in tests)
            and len(set(tests)) == len(tests)):
        raise UklError(f"{where}: tests must be a list of distinct test names")
    known = BENCH_CLIENTS[client]
    for test in tests:
        if known is not None and test not in known:
            raise UklError(f"{where}: {client} has no test {test!r}; valid: {', '.join(known)}")
    ports = data.get("ports", [])
    port = table.get("port", ports[0] if len(ports) == 1 else None)
    if not isinstance(port, int) or isinstance(port, bool) or port not in ports:
        raise UklError(f"{where}: port must be one of the recipe's ports "
                       f"({', '.join(map(str, ports)) or 'it has none'})")
    env = table.get("env", {})
    if not (isinstance(env, dict) and all(isinstance(v, str) and NAME.fullmatch(k)
                                          for k, v in env.items())):
        raise UklError(f"{where}: env must map variable names to strings")
    return Bench(client, tuple(tests), port, tuple(env.items()))


def build_text(text: str) -> str:
    """A recipe's text without its [run] and [bench] tables (and the comments
    just above them): what its build's key covers."""
    lines = text.splitlines(keepends=True)
    headers = [i for i, line in enumerate(lines)
               if line.split("#")[0].strip() in {f"[{t}]" for t in RUN_TABLES}]
    if not headers:
        return text
    cut = headers[0]
    while cut and (not lines[cut - 1].strip() or lines[cut - 1].lstrip().startswith("#")):
        cut -= 1
    return "".join(lines[:cut])


def load(name: str) -> Recipe:
    if not path(name).is_file():
        raise UklError(f"unknown recipe {name!r}; known: {', '.join(names())}")
    return parse(name, path(name).read_text())


def ukl_cc_env(config: Config) -> dict[str, str]:
    """ukl-cc is a process of its own: it is told CONFIG's UKL kernel as a user
    tells it, in UKL_KERNEL (which its command line reads)."""
    return {"UKL_KERNEL": config.kernel} if config.kind == "ukl" else {}


def _compiler(dest: Path, config: Config) -> Path:
    """{cc}: one word for every build system, however it spells CC."""
    ukl_cc = cc.ukl_cc_path()
    wrapper = dest / "cc"
    extra = " --baseline" if config.kind == "baseline" else ""
    env = "".join(f"{k}={v} " for k, v in ukl_cc_env(config).items())
    wrapper.write_text(f'#!/bin/sh\n{env}exec "{ukl_cc}"{extra} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def _key(recipe: Recipe, config: Config, deps: dict[str, Path]) -> str:
    """Everything the result depends on: the pin, the recipe, its dependencies,
    both C libraries and ukl-cc itself."""
    return steps.key_of(config.kind, fetch.pin_digest(recipe.source),
                        build_text(path(recipe.name).read_text()),
                        [(APPS / p).read_text() for p in recipe.patches],
                        [(d, steps.recorded(p)) for d, p in deps.items()],
                        [libc.key(libc.of_kind(config, k)) for k in libc.KINDS],
                        [p.read_text() for p in UKL_CC_SOURCES],
                        # only if any: the other recipes' keys stay as they were
                        *([[(APPS / p).read_text() for p in recipe.sources]]
                          if recipe.sources else []))


def _run_steps(recipe: Recipe, config: Config, dest: Path, deps: dict[str, Path]):
    kind = config.kind
    src = dest / "src"
    shutil.copytree(fetch.unpack(recipe.source), src, symlinks=True)
    steps.forget(src)
    for patch in recipe.patches:
        run(["patch", "-p1", "--forward", "-i", APPS / patch],
            f"{recipe.name}: apply {patch}", f"app-{recipe.name}-{kind}-patch", cwd=src)
    for source in recipe.sources:
        shutil.copyfile(APPS / source, src / Path(source).name)
    values = {"cc": _compiler(dest, config), "jobs": (os.cpu_count() or 1) + 1,
              "prefix": dest / "prefix", **deps}
    for i, step in enumerate(recipe.steps, 1):
        try:
            cmd = [arg.format(**values) for arg in step]
        except (KeyError, IndexError, ValueError) as e:
            raise UklError(f"recipe {recipe.name}, step {i}: bad placeholder {e} (known: "
                           f"{', '.join('{%s}' % k for k in values)}; write {{{{ for a brace)")

        log_name = f"app-{recipe.name}-{kind}-{i}"
        try:
            run(cmd, f"{recipe.name} ({kind}) step {i}/{len(recipe.steps)}: {cmd[0]}",
                log_name, cwd=src, env=ukl_cc_env(config))
        except UklError:
            log = LOGS / f"{log_name}.log"
            lines = log.read_text(errors="replace").splitlines() if log.exists() else []
            sys.stderr.write("".join(f"  {line}\n" for line in lines[-LOG_TAIL:]))
            raise
    if recipe.binary and not (src / recipe.binary).is_file():
        raise UklError(f"recipe {recipe.name}: the steps did not produce {recipe.binary}")


def build(recipe: Recipe, config: Config) -> Path:
    """Build RECIPE (and what it depends on) with ukl-cc for CONFIG's kind
    ('ukl' or 'baseline') and kernel; return its build directory."""
    for libc_kind in libc.KINDS:          # ukl-cc links with both
        libc.build(libc.of_kind(config, libc_kind))
    deps = {d: build(load(d), config) / "prefix" for d in recipe.depends}
    key = _key(recipe, config, {d: p.parent for d, p in deps.items()})
    return steps.shared(BUILD_ROOT / libc.variant(config), recipe.name, key,
                        lambda d: _run_steps(recipe, config, d, deps), KEEP_APP_BUILDS)


def binary(recipe: Recipe, config: Config) -> Path:
    if not recipe.binary:
        raise UklError(f"recipe {recipe.name} is a library: it has no program to run")
    return build(recipe, config) / "src" / recipe.binary
