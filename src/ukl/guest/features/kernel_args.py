"""--kernel-arg ARG: a word added to the guest kernel's command line, e.g.
lockdown=integrity or isolcpus=1."""
from ..options import Option
from ...errors import UklError

ORDER = 30


def word(text: str) -> str:
    """One word of the kernel's command line: no space or quote can split it
    (the kernel's own parser would split a quoted word differently)."""
    if not text or any(c.isspace() or c in "\"'" for c in text):
        raise UklError(f"kernel argument {text!r}: must be one word without quotes, "
                       f"e.g. lockdown=integrity")
    return text


OPTIONS = [Option("kernel_args", [], ("--kernel-arg",), parse=word, many=True, metavar="ARG",
                  help="add ARG to the guest kernel's command line, e.g. pti=on (repeatable)",
                  commands=("run", "image"))]


def check(opts, config, bind=True):
    for arg in opts.kernel_args:
        word(arg)


def contribute(spec, built, opts):
    spec.kernel_args += list(opts.kernel_args)
