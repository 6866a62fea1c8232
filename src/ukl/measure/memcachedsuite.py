"""Memcached's t/ suite for `ukl suite memcached`: memcached-debug (the
memcached-debug recipe) is the program, and the suite runs in the guest
as it runs in a build tree: prove runs each test file, and the tests
start the servers they need themselves, with their own arguments, by
executing ./memcached-debug, which is the program (a UKL program where
the configuration says so), and signal them by pid.  Perl and prove are
the host's, its /usr mounted read-only."""
import re
from pathlib import Path

from . import suiterun
from .. import api
from ..build import recipes
from ..configs import get as config
from ..guest.volumes import Volume

RECIPE = "memcached-debug"
TIMEOUT = 3 * 3600
# At 512 MB binary-extstore.t ran the guest out of memory (with prove -v,
# which keeps a file's output; the extstore files in /tmp take up to 160 MB).
MEMORY_MB = 2048
CI_FILES = ["getset.t", "incrdecr.t", "daemonize.t", "noreply.t"]
LINE = re.compile(r"^ukl-suite: (\S+) (passed|failed|skipped)$", re.M)


def prepare() -> None:
    return None


def test_files(tree: Path) -> list[str]:
    """Every t/*.t but whitespace.t, which reads the sources through git;
    those of what the recipe leaves out (SASL, TLS, the proxy) skip
    themselves."""
    return sorted(p.name for p in (tree / "t").glob("*.t") if p.name != "whitespace.t")


def parse(output: str, files: list[str]) -> dict[str, str]:
    return suiterun.parse(output, files, LINE)


def run_config(_, config_name: str, smp: int, ci: bool = False) -> list[dict]:
    built = api.build(RECIPE, config_name)
    tree = recipes.build(recipes.load(RECIPE), config(config_name)) / "src"
    files = CI_FILES if ci else test_files(tree)
    timedrun = api.guest_tools({"timedrun": tree / "timedrun.c"})
    opts = api.Options(smp=smp, memory_mb=MEMORY_MB, timeout=TIMEOUT, tools=timedrun,
                       volumes=[Volume(tree, str(tree), "ro"), Volume(Path("/usr"), "/usr", "ro")],
                       driver=("sh", str(tree / "memcached-suite.sh"), str(tree), "/bin/timedrun"),
                       args=tuple(files))
    output, errors, status, failure = suiterun.boot(built, opts)
    log = output + errors + failure
    return [{"config": config_name, "schedule": "t", "tests": parse(output, files),
             "exit_status": status, "log": log}]
