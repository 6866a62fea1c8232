"""--append ARGS: words added to the guest kernel's command line, e.g.
lockdown=integrity or isolcpus=1 (as QEMU's and virtme-ng's -append)."""
from ...errors import UklError


def words(text: str) -> list[str]:
    """An --append value: whitespace-separated words, none of them quoted
    (the kernel's own parser would split a quoted word differently)."""
    found = text.split()
    if not found or any(c in "\"'" for c in text):
        raise UklError(f"--append {text!r}: expected kernel arguments without quotes, "
                       f"e.g. 'lockdown=integrity isolcpus=1'")
    return found


def check(opts, config, bind=True):
    for arg in opts.kernel_args:
        if not arg or any(c.isspace() or c in "\"'" for c in arg):
            raise UklError(f"kernel argument {arg!r}: must be one word without quotes")


def contribute(spec, built, opts):
    spec.kernel_args += list(opts.kernel_args)
