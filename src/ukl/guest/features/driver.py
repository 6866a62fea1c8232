"""A driver in the program's place (the API's alone): a command given the
program's command line, which starts the program itself, as a test suite's
harness does (`ukl suite memcached` runs prove, whose tests start their
own servers).  It runs as the program would, inside --user's switch
(after the user feature), and under --strace with all it starts."""
from ..options import Option

ORDER = 135
OPTIONS = [Option("driver", ())]


def check(opts, config, bind=True):
    pass


def contribute(spec, built, opts):
    if opts.driver:
        spec.inner_wrappers.append(list(opts.driver))
