"""Memcached's t/ suite for `ukl suite memcached`: memcached-debug (the
memcached-debug recipe) is the program, and the suite runs in the guest
as it runs in a build tree: prove runs each test file, and the tests
start the servers they need themselves, with their own arguments, by
executing ./memcached-debug, which is the program (a UKL program where
the configuration says so), and signal them by pid.  Perl and prove are
the host's, its /usr mounted read-only."""
import io
import re
from pathlib import Path

from .. import api
from ..build import recipes
from ..configs import get as config
from ..errors import UklError
from ..guest.volumes import Volume

RECIPE = "memcached-debug"
TIMEOUT = 3 * 3600
# prove and a test's perl take 200 MB each, beside the extstore tests' files in /tmp.
MEMORY_MB = 2048
CI_FILES = ["getset.t", "incrdecr.t", "daemonize.t", "noreply.t"]
LINE = re.compile(r"^ukl-suite: (\S+) (passed|failed|skipped)$", re.M)
STARTED = re.compile(r"^ukl-suite: start (\S+)$", re.M)


def prepare() -> None:
    return None


def test_files(tree: Path) -> list[str]:
    """Every t/*.t but whitespace.t, which reads the sources through git;
    those of what the recipe leaves out (SASL, TLS, the proxy) skip
    themselves."""
    return sorted(p.name for p in (tree / "t").glob("*.t") if p.name != "whitespace.t")


def parse(output: str, files: list[str]) -> dict[str, str]:
    """Each file's result; one that started and never ended failed."""
    results = {m.group(1): m.group(2) for m in LINE.finditer(output)}
    for name in STARTED.findall(output):
        results.setdefault(name, "failed")
    return {f: results.get(f, "not run") for f in files}


def run_config(_, config_name: str, smp: int, ci: bool = False) -> list[dict]:
    built = api.build(RECIPE, config_name)
    tree = recipes.build(recipes.load(RECIPE), config(config_name)) / "src"
    files = CI_FILES if ci else test_files(tree)
    timedrun = api.guest_tools({"timedrun": tree / "timedrun.c"})
    opts = api.Options(smp=smp, memory_mb=MEMORY_MB, timeout=TIMEOUT, tools=timedrun,
                       volumes=[Volume(tree, str(tree), "ro"), Volume(Path("/usr"), "/usr", "ro")],
                       driver=("sh", str(tree / "memcached-suite.sh"), str(tree), "/bin/timedrun"),
                       args=tuple(files))
    out, err = io.BytesIO(), io.BytesIO()
    try:
        status, failure = api.boot(built, opts, stdout=out, stderr=err).status, ""
    except UklError as e:
        status, failure = None, str(e)
    output = out.getvalue().decode(errors="replace").replace("\r", "")
    log = output + err.getvalue().decode(errors="replace").replace("\r", "") + failure
    return [{"config": config_name, "schedule": "t", "tests": parse(output, files),
             "exit_status": status, "log": log}]
