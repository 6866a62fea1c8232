"""-e NAME=VALUE: a variable for the program (as `docker run -e`), over the
recipe's own ([run] env).  /init exports them before its setup hooks too,
so that a recipe's setup script reads what the program will."""
import shlex

from ..options import Option
from ...build.recipes import NAME
from ...errors import UklError

ORDER = 140


def parse(text: str) -> tuple[str, str]:
    """An -e value: NAME=VALUE (the value may be empty)."""
    name, eq, value = text.partition("=")
    if not eq or not NAME.fullmatch(name):
        raise UklError(f"-e {text!r}: expected NAME=VALUE, NAME a variable name")
    return name, value


OPTIONS = [Option("env", [], ("-e", "--env"), parse=parse, many=True, metavar="NAME=VALUE",
                  help="set a variable for the program (and its recipe's setup), as "
                       "docker run -e does (repeatable)", commands=("run", "image", "oci"))]


def variables(built, opts) -> dict[str, str]:
    return {**dict(built.program.run.env), **dict(opts.env)}


def check(opts, config, bind=True):
    for name, _ in opts.env:
        if not NAME.fullmatch(name):
            raise UklError(f"-e {name}: not a variable name")


def contribute(spec, built, opts):
    env = variables(built, opts)
    if env:
        spec.env.update(env)
        spec.hook("setup", "00-env", "".join(f"export {k}={shlex.quote(v)}\n"
                                             for k, v in env.items()))
