"""`ukl run --binary PATH`: an unmodified executable, started at CPL0 by
/bin/ukl-exec (execveat() with AT_EXECVE_UKL) under a UKL configuration, or
run as it is on the baseline.  ukl-exec is the innermost wrapper: it must
exec the program itself."""
from pathlib import Path

from ... import configs
from ...build import programs
from ...errors import UklError

ORDER = 990
OPTIONS = []

HELPER = Path(__file__).resolve().parents[1] / "tools" / "ukl-exec.c"


def check(opts, config, bind=True):
    pass


def contribute(spec, built, opts):
    if built.program.kind != "binary" or not built.config.ukl:
        return
    if "UKL_USER" in spec.env:
        raise UklError(f"--user with --binary: {built.name} starts at CPL0 as root; "
                       "it may drop its privileges itself")
    helper = programs.Program("source", "ukl-exec", HELPER)
    spec.tools["ukl-exec"] = lambda: programs.build(helper, configs.get("baseline"))
    spec.inner_wrappers.append(["/bin/ukl-exec"])
